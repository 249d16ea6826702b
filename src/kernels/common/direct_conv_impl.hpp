// Direct convolution on channels-last f32 data, built from the one batch-reduce microkernel
// (oneDNN's brgemm idea, kernels/ukernel/):  C[M x N] (+)= sum_b A_b[M x K] * B_b[K x N].
//
// This file is included by each ISA's translation unit inside its own namespace, after that
// unit defines `struct vt` (vector width W, load/broadcast/fma/store with lane masks) and
// includes the microkernel (kernels/ukernel/brgemm_impl.hpp). Nothing
// here is shared between ISAs, so no inline code compiled with one ISA's flags can leak into
// another's. Standard headers are included by the including file, outside the namespace.
//
// The three core computations map onto the microkernel as follows (rows are pixels along w,
// columns are channels, K is the reduced channel or pixel axis, the batch runs over taps/rows):
//   fwd:         C = dst row (M pixels),  A = src pixels at stride s,  B = weights [ic][oc]
//   bwd_data:    C = src pixels of one stride phase,  A = dst row,  B = weights^T [oc][ic]
//   bwd_weights: C = weights [ic][oc] of one tap,  A = src^T,  B = dst row (user memory)

using V = vt::V;
using mask_t = vt::mask_t;
constexpr int W = vt::W;
constexpr int max_rows = ukernel_max_rows;

// A data tensor as the kernels see it: the user's memory when it is f32 with contiguous
// channels, else a dense channels-last f32 copy, filled from the user's tensor when it is read
// and written back (rounded once) by store() when it is the output.
struct data_operand {
    const conv_problem &p;
    bool direct;
    void *user;
    const data_layout &l;
    dim_t C;
    const dim_t *sp;
    scratch copy;
    fview v;
    data_operand(const conv_problem &p_, int nthr, bool direct_, const void *user_, const data_layout &l_,
                 dim_t C_, const dim_t *sp_, bool read)
        : p(p_), direct(direct_), user(const_cast<void *>(user_)), l(l_), C(C_), sp(sp_),
          copy(direct_ ? 0 : p_.mb * sp_[0] * sp_[1] * sp_[2] * C_) {
        v = direct ? user_view(user, l) : dense_view(copy.p, C, sp);
        if (!direct && read) pack_channels_last(p.dt, p.mb, nthr, user, l, C, sp, copy.p);
    }
    void store(int nthr) const {
        if (!direct) unpack_channels_last(p.dt, p.mb, nthr, copy.p, user, l, C, sp);
    }
};

// Weights as f32 panels [g][tap][k][n] with n padded to a multiple of W: for fwd k = icg,
// n = ocg; for bwd_data (transposed) k = ocg, n = icg.
static void pack_weights(const conv_problem &p, int nthr, const void *user, bool transposed,
                         dim_t ldn, float *out) {
    const weights_layout &l = p.wei;
    const dim_t ksp = p.ksp(), K = transposed ? p.ocg : p.icg, N = transposed ? p.icg : p.ocg;
    parallel(nthr, [&](int ithr, int nt) {
        dim_t s, e;
        split(p.g * ksp, nt, ithr, s, e);
        for (dim_t gt = s; gt < e; ++gt) {
            const dim_t g = gt / ksp, t = gt % ksp;
            const dim_t kw = t % p.k[2], kh = (t / p.k[2]) % p.k[1], kd = t / (p.k[2] * p.k[1]);
            const dim_t toff = kd * l.sp[0] + kh * l.sp[1] + kw * l.sp[2];
            const matrix_view v{const_cast<void *>(user), p.dt, g * p.ocg * l.oc + toff,
                                transposed ? l.oc : l.ic, transposed ? l.ic : l.oc};
            pack_f32_panel(v, K, N, ldn, out + (g * ksp + t) * K * ldn);
        }
    });
}

static void pack_bias(const conv_problem &p, const void *user, dim_t C, float *out) {
    for (dim_t c = 0; c < C; ++c) out[c] = user ? load_elem(p.dt, user, c * p.bias_stride) : 0.f;
    for (dim_t c = C; c < C + W; ++c) out[c] = 0.f;
}

// Channel blocking of one group's N channels: blocks of up to max_nv vectors.
struct nblock {
    dim_t c0;
    int nv, tail;
};
static inline nblock block_of(dim_t N, dim_t blk, int max_nv, dim_t b) {
    const dim_t c0 = b * blk * W, n = imin(blk * W, N - c0);
    (void)max_nv;
    const int nv = int(div_up(n, W));
    return {c0, nv, int(n - (nv - 1) * W)};
}

// ------------------------------------------------------------------- fwd and bwd_data --
//
// Both are a gather: every C pixel (a dst pixel for fwd; a src pixel of one stride phase for
// bwd_data) sums, over a list of taps, one A pixel (src for fwd, dst for bwd_data) times that
// tap's weights. Register tiles take M consecutive C pixels in flattened (n, d, h, w) order, so
// tiles stay full even when rows are short (7x7 layers) and cross row ends. Per tile and tap
// the microkernel gets one A pointer per row; a tap that falls outside A (padding) reads a
// shared zero row instead of being special-cased.

// Per spatial axis: C pixel of local index t is c_base + c_mul*t; the A pixel of a tap is
// a_mul*t + a_off[tap], valid in [0, a_size).
struct gather_axis {
    dim_t T, c_base, c_mul, a_mul, a_size;
};
struct gather_tap {
    dim_t a_off[3];
    dim_t w;  // tap index into the packed weights
};

struct gather_job {
    const direct_plan *pl;
    fview cv, av;          // C and A tensors (channels contiguous)
    dim_t c_chan, a_chan;  // channels per group on the C side and the A side (K)
    gather_axis ax[3];
    const gather_tap *taps;
    int ntaps;
    const float *w;  // packed weights [g][tap][K][ldn]
    dim_t ldn, ksp;
    dim_t K;  // reduced length per tap (channels, or kernel width x channels when flattened)
    const float *bias;  // per C channel, or null
    const float *zeros; // K zeros
};

// Tiles are handled in groups of `tiles_per_unit`. When a tap-by-K panel of packed weights
// would not stay in L1, K is cut into chunks that do (`kc`): each chunk runs over every tile of
// the group, accumulating in C, so the chunk of weights is reused from L1 by all those tiles.
constexpr int tiles_per_unit = 8;

struct gather_tables {
    const float **A;  // [tile][slot][M] row pointers of the tile's valid taps, compacted
    const float **B;  // [tile][slot]
    float **C;        // [tile][M]
    int *nbat;        // [tile]
};

static void gather_run(const gather_job &j, dim_t s, dim_t e, dim_t nunits, dim_t nblocks,
                       dim_t kc, const gather_tables &tb) {
    const conv_problem &p = j.pl->p;
    const dim_t blk = j.pl->max_nv;
    const int mt = j.pl->max_m[blk];
    const dim_t T0 = j.ax[0].T, T1 = j.ax[1].T, T2 = j.ax[2].T, Q = p.mb * T0 * T1 * T2;
    const dim_t ntiles = div_up(Q, mt);
    const dim_t K = j.K;
    brgemm_f32_args a{};
    a.aks = 1;
    a.ldb = j.ldn;
    dim_t pos[max_rows][4];  // n, t0, t1, t2 of each tile row
    for (dim_t w = s; w < e; ++w) {
        const dim_t unit = w % nunits, gb = w / nunits, g = gb / nblocks;
        const nblock nb = block_of(j.c_chan, blk, j.pl->max_nv, gb % nblocks);
        const dim_t tile0 = unit * tiles_per_unit, tile1 = imin(ntiles, tile0 + tiles_per_unit);
        for (dim_t tile = tile0; tile < tile1; ++tile) {
            const dim_t ti = tile - tile0, q0 = tile * mt;
            const int m = int(imin(mt, Q - q0));
            float **C = tb.C + ti * mt;
            for (int r = 0; r < m; ++r) {
                dim_t q = q0 + r;
                pos[r][3] = q % T2;
                q /= T2;
                pos[r][2] = q % T1;
                q /= T1;
                pos[r][1] = q % T0;
                pos[r][0] = q / T0;
                C[r] = j.cv.at(pos[r][0], j.ax[0].c_base + j.ax[0].c_mul * pos[r][1],
                               j.ax[1].c_base + j.ax[1].c_mul * pos[r][2],
                               j.ax[2].c_base + j.ax[2].c_mul * pos[r][3]) +
                       g * j.c_chan + nb.c0;
            }
            int nbat = 0;
            for (int t = 0; t < j.ntaps; ++t) {
                const gather_tap &tp = j.taps[t];
                // Rows of one slot are m apart: the microkernel reads A[b*M + row].
                const float **Ar = tb.A + ti * j.ntaps * mt + nbat * m;
                bool any = false;
                for (int r = 0; r < m; ++r) {
                    const dim_t x0 = j.ax[0].a_mul * pos[r][1] + tp.a_off[0];
                    const dim_t x1 = j.ax[1].a_mul * pos[r][2] + tp.a_off[1];
                    const dim_t x2 = j.ax[2].a_mul * pos[r][3] + tp.a_off[2];
                    const bool ok = x0 >= 0 && x0 < j.ax[0].a_size && x1 >= 0 &&
                                    x1 < j.ax[1].a_size && x2 >= 0 && x2 < j.ax[2].a_size;
                    Ar[r] = ok ? j.av.at(pos[r][0], x0, x1, x2) + g * j.a_chan : j.zeros;
                    any |= ok;
                }
                if (!any) continue;  // the whole tile is in the padding for this tap
                tb.B[ti * j.ntaps + nbat++] = j.w + (g * j.ksp + tp.w) * K * j.ldn + nb.c0;
            }
            tb.nbat[ti] = nbat;
        }
        a.tail = nb.tail;
        a.bias = j.bias ? j.bias + g * j.c_chan + nb.c0 : nullptr;
        for (dim_t k0 = 0; k0 < imax(K, 1); k0 += kc) {
            a.a_off = k0;
            a.b_off = k0 * j.ldn;
            a.K = imin(kc, K - k0);
            a.init = k0 > 0    ? ukernel_init::accumulate
                     : j.bias ? ukernel_init::bias
                              : ukernel_init::zero;
            for (dim_t tile = tile0; tile < tile1; ++tile) {
                const dim_t ti = tile - tile0;
                a.A = tb.A + ti * j.ntaps * mt;
                a.B = tb.B + ti * j.ntaps;
                a.C = tb.C + ti * mt;
                a.nbatch = tb.nbat[ti];
                call_f32_ukernel(int(imin(mt, Q - tile * mt)), nb.nv, a);
            }
        }
    }
}

// Runs several gathers (the stride phases of bwd_data; one for fwd) in one parallel region:
// the work of all of them is split statically over the threads.
static void gather_parallel(const gather_job *jobs, dim_t njobs) {
    const direct_plan &pl = *jobs[0].pl;
    const conv_problem &p = pl.p;
    const int mt = pl.max_m[pl.max_nv];
    const dim_t K = jobs[0].K;
    const dim_t nblocks = div_up(jobs[0].c_chan, pl.max_nv * W);
    dim_t total = 0;
    int max_taps = 0;
    for (dim_t c = 0; c < njobs; ++c) {
        const gather_job &j = jobs[c];
        const dim_t Q = p.mb * j.ax[0].T * j.ax[1].T * j.ax[2].T;
        total += p.g * nblocks * div_up(div_up(Q, mt), tiles_per_unit);
        max_taps = j.ntaps > max_taps ? j.ntaps : max_taps;
    }
    if (total == 0) return;
    parallel(pl.nthr, [&](int ithr, int nt) {
        const dim_t slots = dim_t(tiles_per_unit) * max_taps;
        scratch ptrs(2 * (slots * mt + slots + tiles_per_unit * mt) + tiles_per_unit + 16);
        gather_tables tb;
        tb.A = reinterpret_cast<const float **>(ptrs.p);
        tb.B = tb.A + slots * mt;
        tb.C = const_cast<float **>(tb.B + slots);
        tb.nbat = reinterpret_cast<int *>(tb.C + tiles_per_unit * mt);
        dim_t s, e;
        split(total, nt, ithr, s, e);
        dim_t base = 0;
        for (dim_t c = 0; c < njobs && base < e; ++c) {
            const gather_job &j = jobs[c];
            const dim_t Q = p.mb * j.ax[0].T * j.ax[1].T * j.ax[2].T;
            const dim_t nunits = div_up(div_up(Q, mt), tiles_per_unit);
            const dim_t work = p.g * nblocks * nunits;
            const dim_t ls = imax(s - base, 0), le = imin(e - base, work);
            if (ls < le) {
                // K chunk: the taps x K x (block width) panel of weights within the plan's L1
                // budget (all of K while the whole panel fits its L2 budget).
                const dim_t row_bytes = dim_t(j.ntaps) * imin(j.ldn, pl.max_nv * W) * dim_t(sizeof(float));
                // A multiple of 16 floats, so each chunk reads whole cache lines of A rows.
                const dim_t kc = K * row_bytes <= pl.gather_whole_k
                                     ? imax(K, 1)
                                     : imax(16, pl.gather_panel / imax(row_bytes, 1) / 16 * 16);
                gather_run(j, ls, le, nunits, nblocks, kc, tb);
            }
            base += work;
        }
    });
}

// Few input channels (the first layer of a network: 3): the kernel width and the channels
// together form the reduced axis, contiguous in a copy of src padded along w, so each batch
// element reduces KW*ICg values instead of ICg.
static bool flatten_w(const conv_problem &p) {
    return p.g == 1 && p.dl[2] == 1 && p.k[2] > 1 && p.icg < 8 && p.icg * p.k[2] <= 64;
}

static void run_fwd(const direct_plan &pl, const conv_args &args) {
    const conv_problem &p = pl.p;
    const int nthr = pl.nthr;
    const bool flat = flatten_w(p);
    // Padded width of the flattened copy: every window of KW columns lies inside it.
    const dim_t wpad = imax(p.i[2] + p.pb[2] + p.pe[2], (p.o[2] - 1) * p.s[2] + p.k[2]);
    const dim_t src_sp[3] = {p.i[0], p.i[1], flat ? wpad : p.i[2]};
    const bool copy_src = flat || !pl.src_direct;
    scratch src_s(copy_src ? p.mb * src_sp[0] * src_sp[1] * src_sp[2] * p.ic() : 0);
    const data_operand dst_op(p, nthr, pl.dst_direct, args.out, p.dst, p.oc(), p.o, false);
    fview src = copy_src ? dense_view(src_s.p, p.ic(), src_sp) : user_view(args.src, p.src);
    const fview &dst = dst_op.v;
    if (flat) {
        std::memset(src_s.p, 0, size_t(p.mb * src_sp[0] * src_sp[1] * src_sp[2] * p.ic()) * sizeof(float));
        fview inner = src;
        inner.p += p.pb[2] * src.w;  // column 0 of the user's row
        scratch tmp(p.mb * p.isp() * p.ic());
        pack_channels_last(p.dt, p.mb, nthr, args.src, p.src, p.ic(), p.i, tmp.p);
        const dim_t rows = p.mb * p.i[0] * p.i[1];
        for (dim_t r = 0; r < rows; ++r)
            std::memcpy(inner.p + r * src.h, tmp.p + r * p.i[2] * p.ic(), size_t(p.i[2] * p.ic()) * sizeof(float));
    } else if (!pl.src_direct) {
        pack_channels_last(p.dt, p.mb, nthr, args.src, p.src, p.ic(), p.i, src_s.p);
    }
    const dim_t ldn = div_up(p.ocg, W) * W;
    scratch wp(p.g * p.ksp() * p.icg * ldn);
    pack_weights(p, nthr, args.wei, false, ldn, wp.p);
    scratch bias(p.with_bias ? p.oc() + W : 0);
    if (p.with_bias) pack_bias(p, args.bias, p.oc(), bias.p);
    const dim_t K = flat ? p.k[2] * p.icg : p.icg;
    scratch zeros(K + W);
    std::memset(zeros.p, 0, size_t(K + W) * sizeof(float));
    scratch taps_mem(4 * 2 * p.ksp());
    gather_tap *taps = reinterpret_cast<gather_tap *>(taps_mem.p);
    int ntaps = 0;
    for (dim_t kd = 0; kd < p.k[0]; ++kd)
        for (dim_t kh = 0; kh < p.k[1]; ++kh) {
            if (flat) {  // one tap per (kd, kh); the window starts at padded column ow*s
                taps[ntaps++] = {{kd * p.dl[0] - p.pb[0], kh * p.dl[1] - p.pb[1], 0}, kd * p.k[1] + kh};
                continue;
            }
            for (dim_t kw = 0; kw < p.k[2]; ++kw)
                taps[ntaps++] = {{kd * p.dl[0] - p.pb[0], kh * p.dl[1] - p.pb[1], kw * p.dl[2] - p.pb[2]},
                                 (kd * p.k[1] + kh) * p.k[2] + kw};
        }
    gather_job j{};
    j.pl = &pl;
    j.cv = dst;
    j.av = src;
    j.c_chan = p.ocg;
    j.a_chan = p.icg;
    for (int x = 0; x < 3; ++x) j.ax[x] = {p.o[x], 0, 1, p.s[x], src_sp[x]};
    j.taps = taps;
    j.ntaps = ntaps;
    j.w = wp.p;
    j.ldn = ldn;
    j.ksp = flat ? p.k[0] * p.k[1] : p.ksp();
    j.K = K;
    j.bias = p.with_bias ? bias.p : nullptr;
    j.zeros = zeros.p;
    gather_parallel(&j, 1);
    dst_op.store(nthr);
}

static void run_bwd_data(const direct_plan &pl, const conv_args &args) {
    const conv_problem &p = pl.p;
    const int nthr = pl.nthr;
    const data_operand dst_op(p, nthr, pl.dst_direct, args.dst, p.dst, p.oc(), p.o, true);
    const data_operand src_op(p, nthr, pl.src_direct, args.out, p.src, p.ic(), p.i, false);
    const fview &dst = dst_op.v, &src = src_op.v;
    const dim_t ldn = div_up(p.icg, W) * W;
    scratch wt(p.g * p.ksp() * p.ocg * ldn);
    pack_weights(p, nthr, args.wei, true, ldn, wt.p);
    scratch bias(p.with_bias ? p.ic() + W : 0);
    if (p.with_bias) pack_bias(p, args.bias, p.ic(), bias.p);
    scratch zeros(p.ocg + W);
    std::memset(zeros.p, 0, size_t(p.ocg + W) * sizeof(float));
    scratch taps_mem(4 * 2 * p.ksp());
    gather_tap *taps = reinterpret_cast<gather_tap *>(taps_mem.p);

    gather_job j{};
    j.pl = &pl;
    j.cv = src;
    j.av = dst;
    j.c_chan = p.icg;
    j.a_chan = p.ocg;
    j.taps = taps;
    j.w = wt.p;
    j.ldn = ldn;
    j.ksp = p.ksp();
    j.K = p.ocg;
    j.bias = p.with_bias ? bias.p : nullptr;
    j.zeros = zeros.p;
    // Stride phases: src pixels r + s*t (per axis) are reached by the taps k with
    // (r + pb - k*dl) divisible by s, from dst pixel t + (r + pb - k*dl)/s. Every tap belongs
    // to exactly one phase, so all phases together hold ksp taps.
    dim_t nph[3];
    for (int x = 0; x < 3; ++x) nph[x] = imin(p.s[x], p.i[x]);
    const dim_t nphases = nph[0] * nph[1] * nph[2];
    scratch jobs_mem(dim_t(sizeof(gather_job) / sizeof(float) + 1) * nphases);
    gather_job *jobs = reinterpret_cast<gather_job *>(jobs_mem.p);
    dim_t used = 0;
    for (dim_t ph = 0; ph < nphases; ++ph) {
        const dim_t r[3] = {ph / (nph[1] * nph[2]), (ph / nph[2]) % nph[1], ph % nph[2]};
        gather_job &jp = jobs[ph];
        jp = j;
        jp.taps = taps + used;
        int ntaps = 0;
        for (dim_t kd = 0; kd < p.k[0]; ++kd)
            for (dim_t kh = 0; kh < p.k[1]; ++kh)
                for (dim_t kw = 0; kw < p.k[2]; ++kw) {
                    const dim_t k[3] = {kd, kh, kw};
                    gather_tap t{{0, 0, 0}, (kd * p.k[1] + kh) * p.k[2] + kw};
                    bool ok = true;
                    for (int x = 0; x < 3 && ok; ++x) {
                        const dim_t q = r[x] + p.pb[x] - k[x] * p.dl[x];
                        ok = floor_div(q, p.s[x]) * p.s[x] == q;
                        t.a_off[x] = floor_div(q, p.s[x]);
                    }
                    if (ok) taps[used + ntaps++] = t;
                }
        used += ntaps;
        for (int x = 0; x < 3; ++x) jp.ax[x] = {div_up(p.i[x] - r[x], p.s[x]), r[x], p.s[x], 1, p.o[x]};
        jp.ntaps = ntaps;
    }
    gather_parallel(jobs, nphases);
    src_op.store(nthr);
}

// ---------------------------------------------------------------------------- bwd_weights --

static void run_bwd_weights(const direct_plan &pl, const conv_args &args) {
    const conv_problem &p = pl.p;
    const int nthr = pl.nthr;
    const data_operand src_op(p, nthr, pl.src_direct, args.src, p.src, p.ic(), p.i, true);
    const data_operand dst_op(p, nthr, pl.dst_direct, args.dst, p.dst, p.oc(), p.o, true);
    const fview &src = src_op.v, &dst = dst_op.v;

    const dim_t ksp = p.ksp(), ldn = div_up(p.ocg, W) * W;
    const dim_t part = p.g * ksp * p.icg * ldn;  // one thread's partial sums
    scratch partials(nthr * part);
    const dim_t rows = p.mb * p.o[0] * p.o[1];
    const dim_t blk = pl.max_nv, nblocks = div_up(p.ocg, blk * W);
    const dim_t chunk = pl.rows_per_chunk;
    // Two regions (no barrier inside one, see threading/parallel.hpp): per-thread partial sums,
    // then their fixed-order reduction.
    parallel(nthr, [&](int ithr, int nt) {
        float *P = partials.p + ithr * part;
        for (dim_t x = 0; x < part; ++x) P[x] = 0.f;
        // Pointers: per row of the chunk its src and diff_dst row, and the microkernel's row
        // table of src^T: rows m of batch element b at A[b] + m (channel m, a_off adds ic0).
        dim_t r0, r1;
        split(rows, nt, ithr, r0, r1);
        const dim_t nptr = imax(1, imin(chunk, r1 - r0));
        scratch ptrs(2 * (2 * nptr + nptr * max_rows + max_rows));
        const float **A = reinterpret_cast<const float **>(ptrs.p);
        const float **B = A + nptr;
        const float **Arows = B + nptr;
        float **C = const_cast<float **>(Arows + nptr * max_rows);
        brgemm_f32_args a{};
        a.A = Arows;
        a.B = B;
        a.C = C;
        a.aks = p.s[2] * src.w;
        a.ldb = dst.w;
        a.init = ukernel_init::accumulate;
        for (dim_t c = r0; c < r1; c += chunk) {
            const dim_t ce = imin(c + chunk, r1);
            for (dim_t g = 0; g < p.g; ++g)
                for (dim_t t = 0; t < ksp; ++t) {
                    const dim_t kw = t % p.k[2], kh = (t / p.k[2]) % p.k[1],
                                kd = t / (p.k[2] * p.k[1]);
                    const dim_t off = kw * p.dl[2] - p.pb[2];
                    const dim_t lo = imax(0, ceil_div(-off, p.s[2]));
                    const dim_t hi = imin(p.o[2], floor_div(p.i[2] - 1 - off, p.s[2]) + 1);
                    if (lo >= hi) continue;
                    int nbat = 0;
                    for (dim_t row = c; row < ce; ++row) {
                        const dim_t oh = row % p.o[1], od = (row / p.o[1]) % p.o[0],
                                    n = row / (p.o[1] * p.o[0]);
                        const dim_t id = od * p.s[0] + kd * p.dl[0] - p.pb[0];
                        const dim_t ih = oh * p.s[1] + kh * p.dl[1] - p.pb[1];
                        if (id < 0 || id >= p.i[0] || ih < 0 || ih >= p.i[1]) continue;
                        A[nbat] = src.at(n, id, ih, lo * p.s[2] + off) + g * p.icg;
                        B[nbat++] = dst.at(n, od, oh, lo) + g * p.ocg;
                    }
                    if (nbat == 0) continue;
                    a.K = hi - lo;
                    a.nbatch = nbat;
                    float *cbase = P + (g * ksp + t) * p.icg * ldn;
                    int table_m = 0;  // the tile height Arows is laid out for
                    for (dim_t b = 0; b < nblocks; ++b) {
                        const nblock nb = block_of(p.ocg, blk, pl.max_nv, b);
                        const int mmax = pl.max_m[nb.nv];
                        a.b_off = nb.c0;
                        a.tail = nb.tail;
                        for (dim_t ic0 = 0; ic0 < p.icg; ic0 += mmax) {
                            const int m = int(imin(mmax, p.icg - ic0));
                            if (m != table_m) {
                                for (int x = 0; x < nbat; ++x)
                                    for (int r = 0; r < m; ++r) Arows[x * m + r] = A[x] + r;
                                table_m = m;
                            }
                            a.a_off = ic0;
                            for (int r = 0; r < m; ++r) C[r] = cbase + (ic0 + r) * ldn + nb.c0;
                            call_f32_ukernel(m, nb.nv, a);
                        }
                    }
                }
        }
    });
    parallel(nthr, [&](int ithr, int nt) {
        // Fixed-order reduction of the partial sums into the user's weights.
        const weights_layout &l = p.wei;
        const dim_t nw = p.g * ksp * p.icg;
        dim_t s, e;
        split(nw, nt, ithr, s, e);
        for (dim_t x = s; x < e; ++x) {
            const dim_t icl = x % p.icg, t = (x / p.icg) % ksp, g = x / (p.icg * ksp);
            const dim_t kw = t % p.k[2], kh = (t / p.k[2]) % p.k[1], kd = t / (p.k[2] * p.k[1]);
            const dim_t base = icl * l.ic + kd * l.sp[0] + kh * l.sp[1] + kw * l.sp[2];
            for (dim_t ocl = 0; ocl < p.ocg; ++ocl) {
                float sum = 0.f;
                for (int q = 0; q < nt; ++q) sum += partials.p[q * part + x * ldn + ocl];
                store_elem(p.dt, args.out, base + (g * p.ocg + ocl) * l.oc, sum);
            }
        }
    });
}

// --------------------------------------------------------------------------------- entry --

void run_direct(const direct_plan &pl, const conv_args &args) {
    switch (pl.p.dir) {
        case conv_direction::fwd: run_fwd(pl, args); break;
        case conv_direction::bwd_data: run_bwd_data(pl, args); break;
        case conv_direction::bwd_weights: run_bwd_weights(pl, args); break;
    }
}
