// The bwd_weights schedule: each thread reduces its rows (n, d, h) of src and diff_dst into
// its own f32 partial weights through the microkernel, one (group, tap) at a time; then the
// partials are summed in thread order (fixed, whatever the timing: results are bit-identical
// between runs) and rounded once into the user's weights. Included inside an ISA namespace.
//
//   for each chunk of rows (L2 budget, plan.rows_per_chunk), group g, tap t:
//     batch = the chunk's rows whose src row exists for this tap
//     for each block of oc vectors, each tile of ic rows:
//       C[ic x oc] of (g, t) += sum over batch of src^T[ic x ow] * diff_dst[ow x oc]

// The rows (n, d, h) of a data tensor as the schedule reads them: in the user's memory (f32
// with contiguous channels), or converted chunk by chunk into the thread's scratch (NCX,
// bf16/f16), so that no whole-tensor copy exists and the converted rows are read from cache.
// The scratch rows are dense channels-last, like the user's NXC rows, so the microkernel runs
// the same calls on the same values either way (bit-identical results).
struct row_source {
    bool direct;
    fview v;  // direct: the user's tensor
    const void *user;
    const data_layout *l;
    data_type dt;
    dim_t C;
    const dim_t *sp;
    float *buf = nullptr;  // converted rows [lo, ...) of the current chunk
    dim_t lo = 0;
    dim_t pixel_stride() const { return direct ? v.w : C; }
    const float *row(dim_t n, dim_t d, dim_t h) const {
        if (direct) return v.at(n, d, h, 0);
        return buf + ((n * sp[0] + d) * sp[1] + h - lo) * sp[2] * C;
    }
    void convert(dim_t a, dim_t b) {
        lo = a;
        if (!direct && b > a) pack_rows_channels_last(dt, user, *l, C, sp, a, b, buf);
    }
};

// The src rows (flattened n, id, ih) the diff_dst rows [c, ce) read through any tap: [a, b).
static void src_rows_of(const conv_problem &p, dim_t c, dim_t ce, dim_t &a, dim_t &b) {
    a = p.mb * p.i[0] * p.i[1], b = 0;
    for (dim_t row = c; row < ce; ++row) {
        const dim_t oh = row % p.o[1], od = (row / p.o[1]) % p.o[0], n = row / (p.o[1] * p.o[0]);
        for (dim_t kd = 0; kd < p.k[0]; ++kd)
            for (dim_t kh = 0; kh < p.k[1]; ++kh) {
                const dim_t id = od * p.s[0] + kd * p.dl[0] - p.pb[0];
                const dim_t ih = oh * p.s[1] + kh * p.dl[1] - p.pb[1];
                if (id < 0 || id >= p.i[0] || ih < 0 || ih >= p.i[1]) continue;
                const dim_t r = (n * p.i[0] + id) * p.i[1] + ih;
                a = imin(a, r), b = imax(b, r + 1);
            }
    }
    if (b <= a) a = b = 0;
}

// One thread's scratch for converting its rows [r0, r1) of diff_dst, in chunks of `chunk`, and
// the src rows they read; attached to the thread's copies of the row sources.
struct row_buffers {
    scratch s, d;
    static dim_t src_floats(const conv_problem &p, const row_source &src, dim_t r0, dim_t r1,
                            dim_t chunk) {
        dim_t most = 0;  // the most src rows one chunk reads
        if (!src.direct)
            for (dim_t c = r0; c < r1; c += chunk) {
                dim_t a, b;
                src_rows_of(p, c, imin(c + chunk, r1), a, b);
                most = imax(most, b - a);
            }
        return most * p.i[2] * p.ic();
    }
    row_buffers(const conv_problem &p, row_source &src, row_source &dst, dim_t r0, dim_t r1,
                dim_t chunk)
        : s(src_floats(p, src, r0, r1, chunk)),
          d(dst.direct ? 0 : imax(1, imin(chunk, r1 - r0)) * p.o[2] * p.oc()) {
        src.buf = s.p;
        dst.buf = d.p;
    }
    // Converts the diff_dst rows [c, ce) and the src rows they read.
    static void convert(const conv_problem &p, row_source &src, row_source &dst, dim_t c,
                        dim_t ce) {
        dst.convert(c, ce);
        if (src.direct) return;
        dim_t a, b;
        src_rows_of(p, c, ce, a, b);
        src.convert(a, b);
    }
};

// partials: nthr x part floats, [g][tap][icg][ldn] per thread.
static void bwd_weights_partials(const direct_plan &pl, const row_source &src0,
                                 const row_source &dst0, dim_t ldn, dim_t part, float *partials) {
    const conv_problem &p = pl.p;
    const int nthr = pl.nthr;
    const dim_t ksp = p.ksp();
    const dim_t rows = p.mb * p.o[0] * p.o[1];
    const dim_t blk = pl.max_nv, nblocks = div_up(p.ocg, blk * W);
    const dim_t chunk = pl.rows_per_chunk;
    parallel(nthr, [&](int ithr, int nt) {
        float *P = partials + ithr * part;
        for (dim_t x = 0; x < part; ++x) P[x] = 0.f;
        // Pointers: per row of the chunk its src and diff_dst row, and the microkernel's row
        // table of src^T: rows m of batch element b at A[b] + m (channel m, a_off adds ic0).
        dim_t r0, r1;
        split(rows, nt, ithr, r0, r1);
        const dim_t nptr = imax(1, imin(chunk, r1 - r0));
        row_source src = src0, dst = dst0;
        const row_buffers bufs(p, src, dst, r0, r1, chunk);
        scratch ptrs(2 * (2 * nptr + nptr * max_rows + max_rows));
        const float **A = reinterpret_cast<const float **>(ptrs.p);
        const float **B = A + nptr;
        const float **Arows = B + nptr;
        float **C = const_cast<float **>(Arows + nptr * max_rows);
        brgemm_f32_args a{};
        a.A = Arows;
        a.B = B;
        a.C = C;
        // (K is one pixel when a row has one output pixel: then the stride may be anything and
        // its product with the pixel stride overflow; it is not used.)
        a.aks = p.o[2] > 1 ? p.s[2] * src.pixel_stride() : src.pixel_stride();
        a.ldb = dst.pixel_stride();
        a.init = ukernel_init::accumulate;
        for (dim_t c = r0; c < r1; c += chunk) {
            const dim_t ce = imin(c + chunk, r1);
            row_buffers::convert(p, src, dst, c, ce);
            for (dim_t g = 0; g < p.g; ++g)
                for (dim_t t = 0; t < ksp; ++t) {
                    const dim_t kw = t % p.k[2], kh = (t / p.k[2]) % p.k[1],
                                kd = t / (p.k[2] * p.k[1]);
                    dim_t lo, hi;
                    const dim_t off = tap_w_range(p, kw, lo, hi);
                    if (lo >= hi) continue;
                    int nbat = 0;
                    for (dim_t row = c; row < ce; ++row) {
                        const dim_t oh = row % p.o[1], od = (row / p.o[1]) % p.o[0],
                                    n = row / (p.o[1] * p.o[0]);
                        const dim_t id = od * p.s[0] + kd * p.dl[0] - p.pb[0];
                        const dim_t ih = oh * p.s[1] + kh * p.dl[1] - p.pb[1];
                        if (id < 0 || id >= p.i[0] || ih < 0 || ih >= p.i[1]) continue;
                        A[nbat] = src.row(n, id, ih) + (lo * p.s[2] + off) * src.pixel_stride() +
                                  g * p.icg;
                        B[nbat++] = dst.row(n, od, oh) + lo * dst.pixel_stride() + g * p.ocg;
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
}

// OIX/IOX weights (PyTorch's) keep the taps contiguous: the sums of W taps x W output channels
// are written by a block transpose as W runs of taps, not element by element across the
// weights. The per-element sums are the same (from 0, threads in order), so the bits are too.
static bool weight_taps_contiguous(const conv_problem &p) {
    const weights_layout &l = p.wei;
    return p.ksp() > 1 && (p.k[2] == 1 || l.sp[2] == 1) && (p.k[1] == 1 || l.sp[1] == p.k[2]) &&
           (p.k[0] == 1 || l.sp[0] == p.k[1] * p.k[2]);
}

static void reduce_weight_partials_by_taps(const direct_plan &pl, const float *partials, dim_t part,
                                           dim_t ldn, void *out) {
    const conv_problem &p = pl.p;
    const weights_layout &l = p.wei;
    const dim_t ksp = p.ksp(), nob = div_up(p.ocg, W);
    parallel(pl.nthr, [&](int ithr, int nt) {
        alignas(64) float tile[W * W];
        dim_t offs[W];
        dim_t s, e;
        split(p.g * p.icg * nob, nt, ithr, s, e);
        for (dim_t u = s; u < e; ++u) {
            const dim_t g = u / (p.icg * nob), icl = (u / nob) % p.icg, oc0 = (u % nob) * W;
            const int nn = int(imin(W, p.ocg - oc0));
            const mask_t mk = vt::mask(nn);
            for (dim_t t0 = 0; t0 < ksp; t0 += W) {
                const int tn = int(imin(W, ksp - t0));
                for (int j = 0; j < tn; ++j) {
                    const float *x = partials + ((g * ksp + t0 + j) * p.icg + icl) * ldn + oc0;
                    V sum = vt::zero();
                    for (int q = 0; q < nt; ++q)
                        sum = vt::add(sum, vt::load_mask(x + q * part, mk));
                    vt::store(tile + j * W, sum);
                }
                for (int i = 0; i < nn; ++i)
                    offs[i] = (g * p.ocg + oc0 + i) * l.oc + icl * l.ic + t0;
                rows_to_runs(p.dt, tile, W, nn, tn, out, offs);
            }
        }
    });
}

// Row x = (g, tap, icl) of the partials ([g][tap][icg][ldn]): its group, and the offset in the
// user's weights of its output channel 0 within the group (the group's channels add
// (g * ocg + ocl) * wei.oc).
static inline dim_t partial_row_offset(const conv_problem &p, dim_t x, dim_t &g) {
    const weights_layout &l = p.wei;
    const dim_t ksp = p.ksp();
    const dim_t icl = x % p.icg, t = (x / p.icg) % ksp;
    g = x / (p.icg * ksp);
    const dim_t kw = t % p.k[2], kh = (t / p.k[2]) % p.k[1], kd = t / (p.k[2] * p.k[1]);
    return icl * l.ic + kd * l.sp[0] + kh * l.sp[1] + kw * l.sp[2];
}

// Weights whose output channels are contiguous (XIO/XOI): a vector of output channels at a time,
// summed over the threads in order (the same sums as element by element: the bits too) and
// stored as one run. (Element by element, with a type switch per element, this pass took 4x
// the products' time on a 402 -> 715 channel, 9-tap layer with one 31-pixel row.)
static void reduce_weight_partials_by_channels(const direct_plan &pl, const float *partials,
                                               dim_t part, dim_t ldn, void *out) {
    const conv_problem &p = pl.p;
    const weights_layout &l = p.wei;
    const dim_t ksp = p.ksp();
    parallel(pl.nthr, [&](int ithr, int nt) {
        alignas(64) float sums[W];
        dim_t s, e;
        split(p.g * ksp * p.icg, nt, ithr, s, e);
        for (dim_t x = s; x < e; ++x) {
            dim_t g;
            const dim_t base = partial_row_offset(p, x, g) + g * p.ocg * l.oc;
            for (dim_t oc0 = 0; oc0 < p.ocg; oc0 += W) {
                const int nn = int(imin(W, p.ocg - oc0));
                const mask_t mk = vt::mask(nn);
                V sum = vt::zero();
                for (int q = 0; q < nt; ++q)
                    sum = vt::add(sum, vt::load_mask(partials + q * part + x * ldn + oc0, mk));
                vt::store(sums, sum);
                store_run(p.dt, out, base + oc0, sums, nn);
            }
        }
    });
}

// Sums the threads' partials in thread order into the user's weights (rounded once).
static void reduce_weight_partials(const direct_plan &pl, const float *partials, dim_t part,
                                   dim_t ldn, void *out) {
    const conv_problem &p = pl.p;
    const dim_t ksp = p.ksp();
    if (weight_taps_contiguous(p))
        return reduce_weight_partials_by_taps(pl, partials, part, ldn, out);
    if (p.wei.oc == 1)  // XIO/XOI: the output channels contiguous, like the partials' rows
        return reduce_weight_partials_by_channels(pl, partials, part, ldn, out);
    parallel(pl.nthr, [&](int ithr, int nt) {
        // Fixed-order reduction of the partial sums into the user's weights.
        const weights_layout &l = p.wei;
        const dim_t nw = p.g * ksp * p.icg;
        dim_t s, e;
        split(nw, nt, ithr, s, e);
        for (dim_t x = s; x < e; ++x) {
            dim_t g;
            const dim_t base = partial_row_offset(p, x, g);
            for (dim_t ocl = 0; ocl < p.ocg; ++ocl) {
                float sum = 0.f;
                for (int q = 0; q < nt; ++q) sum += partials[q * part + x * ldn + ocl];
                store_elem(p.dt, out, base + (g * p.ocg + ocl) * l.oc, sum);
            }
        }
    });
}
