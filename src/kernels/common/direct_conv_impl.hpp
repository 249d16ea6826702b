// Direct convolution on channels-last f32 data, built from the one batch-reduce microkernel
// (oneDNN's brgemm idea, kernels/ukernel/):  C[M x N] (+)= sum_b A_b[M x K] * B_b[K x N].
//
// This file is included by each ISA's translation unit inside its own namespace, after that
// unit defines `struct vt` (vector width W, load/broadcast/fma/store with lane masks) and
// includes the parts: the microkernel (kernels/ukernel/), the packers (kernels/pack/), the data
// operands (data_operands.hpp) and the schedules (kernels/schedule/). Here each direction sets up
// its operands and taps and runs its schedule. Nothing here is shared between ISAs, so no inline
// code compiled with one ISA's flags can leak into another's. Standard headers are included by the
// including file, outside the namespace.
//
// The three core computations map onto the microkernel as follows (rows are pixels along w,
// columns are channels, K is the reduced channel or pixel axis, the batch runs over taps/rows):
//   fwd:         C = dst row (M pixels),  A = src pixels at stride s,  B = weights [ic][oc]
//   bwd_data:    C = src pixels of one stride phase,  A = dst row,  B = weights^T [oc][ic]
//   bwd_weights: C = weights [ic][oc] of one tap,  A = src^T,  B = dst row (user memory)

// One image computed in chunks of rows of its output (direct_plan::out_rows_per_chunk) along
// the plan's axis X. `jobs` are the image's gathers with their C view unset, and their A view
// too when the input is copied by rows (in.copied). Per chunk [r0, r1), the gathers restricted to
// those rows:
//   - read A from a copy of only the input rows their windows read (direct_input_rows), filled
//     by fill_in(a0, a1, copy, nthr) as dense channels-last f32 of extents in.sp with
//     [X] = a1 - a0; or from the input itself when it is not copied (!in.copied: the jobs' A
//     views as set);
//   - write C into the user's output itself when it is f32 with contiguous channels (out_direct)
//     or rounded in place (CE = bf16/f16 bits), else into a copy of the chunk's rows, stored into
//     the user's image after.
// Each pixel sums the same products in the same order as when computed whole.
struct input_rows {
    bool copied;
    const dim_t *sp;  // extents of the input's copy (the flattened forward's is padded along w)
    dim_t C;
};
// The gathers of chunk [r0, r1) of the rows along X into `chunk_jobs`, reading the input's copy
// `in_copy` of rows [a0, a1) when it is copied, writing C at out_rows (the chunk's first row).
template <typename CE>
static void restrict_jobs_to_rows(const gather_job<float, CE> *jobs,
                                  gather_job<float, CE> *chunk_jobs, dim_t njobs, int X, dim_t r0,
                                  dim_t r1, const input_rows &in, float *in_copy, dim_t a0,
                                  dim_t a1, const tview<CE> &cv) {
    dim_t asp[3] = {in.sp[0], in.sp[1], in.sp[2]};
    asp[X] = a1 - a0;
    for (dim_t c = 0; c < njobs; ++c) {
        gather_job<float, CE> &cj = chunk_jobs[c];
        cj = jobs[c];
        restrict_c_rows(cj.ax[X], r0, r1);
        if (in.copied) {
            cj.av = dense_view(in_copy, in.C, asp);
            cj.ax[X].a_base -= a0;
            cj.ax[X].a_size = a1 - a0;
        }
        cj.cv = cv;
    }
}
// Whether a plan's chunks of output rows are shared out across the batch's images
// (direct_plan::rows_across_images): only where gather_by_rows gives each thread its own chunks
// of a copied output with the input read in place, so that an image's jobs are the first
// image's moved by its stride (plans that tests set otherwise run image by image).
static bool rows_across_images(const direct_plan &pl, bool in_direct, bool out_direct,
                               bool rounded_in_kernel) {
    return pl.rows_across_images && pl.out_rows_private && pl.out_rows_per_chunk > 0 &&
           pl.images_per_chunk == 1 && !pl.in_rows_copied && in_direct && !out_direct &&
           !rounded_in_kernel;
}
template <typename CE, typename FillIn>
static void gather_by_rows(const direct_plan &pl, const gather_job<float, CE> *jobs,
                           gather_job<float, CE> *chunk_jobs, dim_t njobs, const input_rows &in,
                           FillIn &&fill_in, bool out_direct, void *out, const data_layout &l,
                           dim_t C, const dim_t *sp, dim_t nimages = 1) {
    const conv_problem &p = pl.p;
    const int X = pl.out_row_axis;
    const dim_t R = pl.out_rows_per_chunk, nchunks = div_up(sp[X], R);
    dim_t in_slice = in.C;  // elements of one row of the input's copy along X
    for (int x = 0; x < 3; ++x)
        if (x != X) in_slice *= in.sp[x];
    dim_t most_in_rows = 0;
    for (dim_t r0 = 0; r0 < sp[X] && in.copied; r0 += R) {
        dim_t a0, a1;
        direct_input_rows(p, X, r0, imin(sp[X], r0 + R), &a0, &a1);
        most_in_rows = imax(most_in_rows, a1 - a0);
    }
    // Row r0 of image n of the output (images past the first: direct_plan::rows_across_images).
    auto out_rows_at = [&](dim_t r0, dim_t n = 0) {
        return const_cast<void *>(elem_at(out, p.dt, n * l.n + r0 * l.sp[X]));
    };
    const bool out_in_place = out_direct || sizeof(CE) == 2;
    if (in.copied && out_in_place) {
        // Only the input is copied (the plan's in_rows_copied), and the output is written in
        // place: each thread takes a contiguous share of the chunks, copies the input rows of
        // its own chunks into its own scratch (within a share of its L2: the plan) and gathers them
        // alone. Copied by all the threads and gathered by all of them, chunk after chunk, each
        // thread read half of every chunk's copy from the other core's cache, and waited at two
        // joins per chunk: U-Net's up-convolution's f16 data gradient ran at 0.56x its f32 time
        // on 2 threads (Zen 5), its f32 input read in place.
        parallel(pl.nthr, [&](int ithr, int nt) {
            dim_t cs, ce;
            split(nchunks, nt, ithr, cs, ce);
            if (cs >= ce) return;
            scratch in_copy(most_in_rows * in_slice);
            scratch mine_mem(dim_t(sizeof(gather_job<float, CE>) / sizeof(float) + 1) * njobs);
            gather_job<float, CE> *mine = reinterpret_cast<gather_job<float, CE> *>(mine_mem.p);
            for (dim_t c = cs; c < ce; ++c) {
                const dim_t r0 = c * R, r1 = imin(sp[X], r0 + R);
                dim_t a0 = 0, a1 = 0;
                direct_input_rows(p, X, r0, r1, &a0, &a1);
                if (a1 > a0) fill_in(a0, a1, in_copy.p, 1);
                restrict_jobs_to_rows(jobs, mine, njobs, X, r0, r1, in, in_copy.p, a0, a1,
                                      user_view<CE>(out_rows_at(r0), l));
                gather_share(mine, njobs, 0, 1);
            }
        });
        return;
    }
    if constexpr (sizeof(CE) == sizeof(float)) {  // (a bf16/f16 C is the user's, in place)
        if (!in.copied && !out_in_place && pl.out_rows_private) {
            // The output copied by rows (NCX), the input read per image, and enough chunks
            // (direct_plan::out_rows_private): likewise each thread computes its own chunks into
            // its own copy and stores it. Computed by all the threads
            // chunk after chunk, each chunk's three joins (copy, gather, store) and its store
            // reading half the copy from the other core's cache took a quarter of ESRGAN's last
            // layer's data gradient in NCX (64 channels of 128 x 128 at batch 16, 8 chunks of 16
            // rows an image: about 13% of the samples in OpenMP's wait, 2 threads, Zen 5).
            // Over `nimages` images (rows_across_images: the jobs' A read in place, an image of
            // it n strides on), the share is of the (image, chunk) pairs.
            parallel(pl.nthr, [&](int ithr, int nt) {
                dim_t cs, ce;
                split(nimages * nchunks, nt, ithr, cs, ce);
                if (cs >= ce) return;
                dim_t most[3] = {sp[0], sp[1], sp[2]};
                most[X] = imin(R, sp[X]);
                scratch out_copy(most[0] * most[1] * most[2] * C);
                scratch mine_mem(dim_t(sizeof(gather_job<float, CE>) / sizeof(float) + 1) * njobs);
                gather_job<float, CE> *mine = reinterpret_cast<gather_job<float, CE> *>(mine_mem.p);
                for (dim_t i = cs; i < ce; ++i) {
                    const dim_t n = i / nchunks, r0 = i % nchunks * R, r1 = imin(sp[X], r0 + R);
                    dim_t csp[3] = {sp[0], sp[1], sp[2]};
                    csp[X] = r1 - r0;
                    restrict_jobs_to_rows(jobs, mine, njobs, X, r0, r1, in, nullptr, 0, 0,
                                          dense_view(out_copy.p, C, csp));
                    for (dim_t j = 0; j < njobs; ++j) mine[j].av.p += n * mine[j].av.n;
                    gather_share(mine, njobs, 0, 1);
                    unpack_channels_last(p.dt, 1, 1, out_copy.p, out_rows_at(r0, n), l, C, csp,
                                         pl.stream_copied_output);
                }
            });
            return;
        }
    }
    // Else (the input copied by rows as well: the tests) each chunk is copied and computed by
    // all the threads, then stored.
    scratch in_copy(in.copied ? most_in_rows * in_slice : 0);
    for (dim_t r0 = 0; r0 < sp[X]; r0 += R) {
        const dim_t r1 = imin(sp[X], r0 + R);
        dim_t a0 = 0, a1 = 0;
        if (in.copied) {
            direct_input_rows(p, X, r0, r1, &a0, &a1);
            if (a1 > a0) fill_in(a0, a1, in_copy.p, pl.nthr);
        }
        dim_t csp[3] = {sp[0], sp[1], sp[2]};
        csp[X] = r1 - r0;
        void *out_rows = out_rows_at(r0);
        const data_operand o(p, pl.nthr, out_in_place, out_rows, l, C, csp, false, 0, 1);
        tview<CE> cv;
        if constexpr (sizeof(CE) == 2)
            cv = user_view<uint16_t>(out_rows, l);
        else
            cv = o.v;
        restrict_jobs_to_rows(jobs, chunk_jobs, njobs, X, r0, r1, in, in_copy.p, a0, a1, cv);
        gather_parallel(chunk_jobs, njobs);
        o.store(pl.nthr, pl.stream_copied_output);
    }
}

// Weights as f32 panels [g][block][tap][k][n] (gather_job::w) in column blocks of ldn, the
// last padded to a multiple of W: for fwd k = icg, n = ocg; for bwd_data (transposed) k = ocg,
// n = icg. `panel_blocks` gives the blocks.
struct weight_blocks {
    dim_t ldn, n;
    dim_t at(const conv_problem &p, dim_t K, dim_t g, dim_t t, dim_t k, dim_t col) const {
        return weights_panel_at(n, p.ksp(), K, ldn, g, col / ldn, t) + k * ldn + col % ldn;
    }
};
// A gather with more C channels than one register-tile block reads the weights of a block at
// a time, for all of a tile's taps and K: blocks as wide as the tiles' make those k rows
// contiguous. Rows of all the channels were read 4 lines of every ldn: at 512 channels 2112
// bytes apart, past the 2 KiB stride that the L1 prefetcher follows. (Xeon model 207, min of
// 4 alternated rounds, 1 thread: DCGAN 512 -> 256's ConvTransposeBackwardData 9.18 -> 7.30
// ms, HiFi-GAN's 9.76 -> 7.41, ResNet-50's res3 projection forward 1.06x; 2 threads 5.03 ->
// 3.60 and 5.34 -> 3.72 ms; the other suite layers within the noise.) Else one block, of
// panel_ld's width.
static weight_blocks panel_blocks(const direct_plan &pl, dim_t N) {
    const dim_t bw = direct_block_nv(pl, N) * W;
    return N <= bw ? weight_blocks{panel_ld(N), 1} : weight_blocks{bw, div_up(N, bw)};
}
// OIX/IOX weights (PyTorch's) keep the taps, then K, contiguous: per group, each n has one run
// of K*ksp elements (k, tap). Blocks of W runs are transposed in registers and each row (k, tap)
// goes to its tap's panel, instead of a strided element-by-element copy per panel.
static bool k_and_taps_contiguous(const conv_problem &p, bool transposed) {
    const weights_layout &l = p.wei;
    const dim_t ks = transposed ? l.oc : l.ic, K = transposed ? p.ocg : p.icg;
    return (p.k[2] == 1 || l.sp[2] == 1) && (p.k[1] == 1 || l.sp[1] == p.k[2]) &&
           (p.k[0] == 1 || l.sp[0] == p.k[1] * p.k[2]) && (K == 1 || ks == p.ksp());
}

static void pack_weights_by_runs(const conv_problem &p, int nthr, const void *user, bool transposed,
                                 const weight_blocks &wb, bool check_w, float *out,
                                 std::atomic<bool> &finite) {
    const weights_layout &l = p.wei;
    const dim_t ksp = p.ksp(), K = transposed ? p.ocg : p.icg, N = transposed ? p.icg : p.ocg;
    const dim_t ns = transposed ? l.ic : l.oc, nblocks = div_up(N, W), run = K * ksp;
    // Which taps are read, once: asked per element (three calls out of line, and a division),
    // it took a third of the packing of DCGAN's 1x1-input projection (3.3 MB of IOX weights,
    // 16 taps), packed again on every execution.
    std::vector<unsigned char> taps_read(static_cast<size_t>(ksp));
    for (dim_t t = 0; t < ksp; ++t) taps_read[size_t(t)] = tap_is_read(p, t, check_w);
    parallel(nthr, [&](int ithr, int nt) {
        alignas(64) float tile[W * W];
        dim_t offs[W];
        dim_t s, e;
        split(p.g * nblocks, nt, ithr, s, e);
        for (dim_t gb = s; gb < e; ++gb) {
            const dim_t g = gb / nblocks, n0 = (gb % nblocks) * W;
            const int nn = int(imin(W, N - n0));
            std::memset(tile, 0, sizeof tile);  // lanes nn..W stay zero: the panels' padding
            for (int i = 0; i < nn; ++i) offs[i] = g * p.ocg * l.oc + (n0 + i) * ns;
            // Element j0 of a run is row (k, t) = (j0 / ksp, j0 % ksp), stepped along.
            dim_t k0 = 0, t0 = 0;
            for (dim_t j0 = 0; j0 < run; j0 += W) {
                const int jn = int(imin(W, run - j0));
                bool any = false;  // whether a tap of this block is read (tap_is_read)
                for (dim_t jj = 0, t = t0; jj < jn && !any; ++jj, t = t + 1 == ksp ? 0 : t + 1)
                    any = taps_read[size_t(t)] != 0;
                if (any) runs_to_rows(p.dt, user, offs, nn, jn, tile, W);
                if (any && !floats_finite(tile, W * W))
                    finite.store(false, std::memory_order_relaxed);
                for (int i = 0; i < nn; ++i) offs[i] += W;
                for (int jj = 0; jj < jn; ++jj) {
                    if (any && taps_read[size_t(t0)])
                        std::memcpy(out + wb.at(p, K, g, t0, k0, n0), tile + jj * W,
                                    sizeof(float) * W);
                    if (++t0 == ksp) t0 = 0, ++k0;
                }
            }
        }
    });
}

// Only the taps that some output reads are packed (tap_is_read; all w taps of a read (kd, kh)
// when `check_w` is false, for fwd's flattened windows): the others' panels stay unwritten,
// and no gather visits them.
// Returns whether the packed weights are all finite (checked by each thread on the panels it
// has just written, while they are in cache): where the problem reads padding, a kernel that
// met a non-finite one computes by the reference, which leaves padded taps out (the gathers
// multiply the zeros of padding: 0 * inf = NaN).
static bool pack_weights(const conv_problem &p, int nthr, const void *user, bool transposed,
                         const weight_blocks &wb, bool check_w, float *out) {
    std::atomic<bool> finite{true};
    if (k_and_taps_contiguous(p, transposed)) {
        pack_weights_by_runs(p, nthr, user, transposed, wb, check_w, out, finite);
        return finite.load();
    }
    const weights_layout &l = p.wei;
    const dim_t ksp = p.ksp(), K = transposed ? p.ocg : p.icg, N = transposed ? p.icg : p.ocg;
    parallel(nthr, [&](int ithr, int nt) {
        dim_t s, e;
        split(p.g * ksp, nt, ithr, s, e);
        for (dim_t gt = s; gt < e; ++gt) {
            const dim_t g = gt / ksp, t = gt % ksp;
            if (!tap_is_read(p, t, check_w)) continue;
            const dim_t kw = t % p.k[2], kh = (t / p.k[2]) % p.k[1], kd = t / (p.k[2] * p.k[1]);
            const dim_t toff = kd * l.sp[0] + kh * l.sp[1] + kw * l.sp[2];
            const dim_t ks = transposed ? l.oc : l.ic, ns = transposed ? l.ic : l.oc;
            for (dim_t n0 = 0; n0 < N; n0 += wb.ldn) {
                const matrix_view v{const_cast<void *>(user), p.dt,
                                    g * p.ocg * l.oc + toff + n0 * ns, ks, ns};
                const dim_t nn = imin(wb.ldn, N - n0);
                float *panel = out + wb.at(p, K, g, t, 0, n0);
                pack_f32_panel(v, K, nn, wb.ldn, panel);
                if (!panel_finite(panel, K, nn, wb.ldn))
                    finite.store(false, std::memory_order_relaxed);
            }
        }
    });
    return finite.load();
}

// The weights of bwd_data with its stride phases along w merged (direct_merges_w_phases,
// direct_plan.hpp) as f32 panels [block][tap (kd, kh, jd)][k][ldn] of wb's blocks: column
// r * icg + c is the weight (oc = k, ic = c) of kernel column kw = r + s * jd, the s sub-pixels'
// columns side by side (as the vdpbf16ps kernel's pack_w_merged_weight_pairs); columns past
// s * icg are zero. Each (tap, r) goes through the thread's panel of icg columns. Returns
// whether they are all finite.
static bool pack_w_merged_weights(const conv_problem &p, int nthr, const void *user,
                                  const weight_blocks &wb, float *out) {
    const weights_layout &l = p.wei;
    const dim_t s = p.s[2], nd = p.k[2] / s, K = p.ocg, N = p.icg, ntaps = w_merged_taps(p);
    scratch panels(dim_t(nthr) * K * N);
    std::atomic<bool> finite{true};
    parallel(nthr, [&](int ithr, int nt) {
        dim_t b, e;
        split(ntaps, nt, ithr, b, e);
        float *sub = panels.p + ithr * K * N;
        for (dim_t t = b; t < e; ++t) {
            const dim_t jd = t % nd, kh = (t / nd) % p.k[1], kd = t / (nd * p.k[1]);
            if (!tap_is_read(p, (kd * p.k[1] + kh) * p.k[2], false)) continue;  // (no gather's)
            auto column = [&](dim_t col) {  // where column col of row 0 of the tap's panels is
                return out + weights_panel_at(wb.n, ntaps, K, wb.ldn, 0, col / wb.ldn, t) +
                       col % wb.ldn;
            };
            for (dim_t r = 0; r < s; ++r) {
                const matrix_view v{const_cast<void *>(user), p.dt,
                                    kd * l.sp[0] + kh * l.sp[1] + (r + s * jd) * l.sp[2], l.oc,
                                    l.ic};
                pack_f32_panel(v, K, N, N, sub);
                if (!floats_finite(sub, K * N)) finite.store(false, std::memory_order_relaxed);
                for (dim_t c = 0; c < N; ++c) {
                    float *to = column(r * N + c);
                    for (dim_t k = 0; k < K; ++k) to[k * wb.ldn] = sub[k * N + c];
                }
            }
            for (dim_t col = s * N; col < wb.n * wb.ldn; ++col) {
                float *to = column(col);
                for (dim_t k = 0; k < K; ++k) to[k * wb.ldn] = 0.f;
            }
        }
    });
    return finite.load();
}

// Images [0, nb) of a user data tensor (`image`: the first; layout l, C channels, extents sp),
// rows [a0, a1) along axis X, into dense channels-last f32.
static void pack_rows_along(data_type dt, int nthr, const void *image, const data_layout &l,
                            dim_t C, const dim_t *sp, dim_t nb, int X, dim_t a0, dim_t a1,
                            float *out) {
    dim_t usp[3] = {sp[0], sp[1], sp[2]};
    usp[X] = a1 - a0;
    pack_channels_last(dt, nb, nthr, elem_at(image, dt, a0 * l.sp[X]), l, C, usp, out);
}

// The same for src into the copy the forward gather reads (extents copy_sp, with [X] = a1 - a0):
// padded with zeros along w when the kernel width is flattened into K (then X is d or h). (Made
// through a dense copy, zeroed rows and a second copy into them, it cost the ResNet-50 stem's
// forward 14%: 8.07 -> 6.95 ms on 2 threads, f32 NXC, done in one pass.)
static void copy_src_rows(const conv_problem &p, int nthr, bool flat, const dim_t *copy_sp,
                          const void *src_image, dim_t nb, int X, dim_t a0, dim_t a1, float *out) {
    if (!flat)
        return pack_rows_along(p.dt, nthr, src_image, p.src, p.ic(), p.i, nb, X, a0, a1, out);
    dim_t usp[3] = {p.i[0], p.i[1], p.i[2]};
    usp[X] = a1 - a0;
    pack_channels_last_padded_w(p.dt, nb, nthr, elem_at(src_image, p.dt, a0 * p.src.sp[X]), p.src,
                                p.ic(), usp, p.pb[2] * p.ic(), copy_sp[2] * p.ic(), out);
}

// fwd and bwd_data stream the batch in chunks of images (plan.images_per_chunk): the chunk's
// copied operands are converted, computed from cache and written back before the next chunk,
// so no whole-tensor copy exists. Each output pixel sums the same products in the same order
// whatever the chunking (a tile only gathers other pixels), so results do not depend on it.
// CE: the element type of the gather's C, float (dst in place when f32, else its f32 copy) or
// the bits of a bf16/f16 dst rounded in place by the microkernel (plan.out_rounded_in_kernel).
template <typename CE>
static void run_fwd(const direct_plan &pl, const conv_args &args) {
    constexpr bool rounded_in_kernel = sizeof(CE) == 2;
    const conv_problem &p = pl.p;
    const int nthr = pl.nthr;
    const bool flat = direct_flattens_w(pl);  // (direct_plan.hpp)
    // Padded width of the flattened copy: every window of KW columns lies inside it.
    const dim_t wpad = imax(p.i[2] + p.pb[2] + p.pe[2], (p.o[2] - 1) * p.s[2] + p.k[2]);
    const dim_t src_sp[3] = {p.i[0], p.i[1], flat ? wpad : p.i[2]};
    const bool copy_src = flat || !pl.src_direct;
    const weight_blocks wb = panel_blocks(pl, p.ocg);
    scratch wp(p.g * wb.n * p.ksp() * p.icg * wb.ldn);
    if (!pack_weights(p, nthr, args.wei, false, wb, !flat, wp.p) && p.reads_padding())
        return ref_conv_execute(p, args);
    scratch bias(p.with_bias ? p.oc() + W : 0);
    if (p.with_bias) pack_bias(p, args.bias, p.oc(), bias.p);
    const dim_t K = flat ? p.k[2] * p.icg : p.icg;
    const dim_t nzeros = gather_zeros_len(p.g, p.icg, K);
    scratch zeros(nzeros);
    std::memset(zeros.p, 0, size_t(nzeros) * sizeof(float));
    scratch taps_mem(4 * 2 * p.ksp());
    gather_tap *taps = reinterpret_cast<gather_tap *>(taps_mem.p);
    int ntaps = 0;
    for (dim_t kd = 0; kd < p.k[0]; ++kd)
        for (dim_t kh = 0; kh < p.k[1]; ++kh) {
            if (!tap_reads_input(p, 0, kd) || !tap_reads_input(p, 1, kh)) continue;
            if (flat) {  // one tap per (kd, kh); the window starts at padded column ow*s
                taps[ntaps++] = {{kd * p.dl[0] - p.pb[0], kh * p.dl[1] - p.pb[1], 0},
                                 kd * p.k[1] + kh};
                continue;
            }
            for (dim_t kw = 0; kw < p.k[2]; ++kw)
                if (tap_reads_input(p, 2, kw))
                    taps[ntaps++] = {
                        {kd * p.dl[0] - p.pb[0], kh * p.dl[1] - p.pb[1], kw * p.dl[2] - p.pb[2]},
                        (kd * p.k[1] + kh) * p.k[2] + kw};
        }
    gather_job<float, CE> j{};
    j.c_chan = p.ocg;
    j.a_chan = p.icg;
    for (int x = 0; x < 3; ++x) j.ax[x] = {p.o[x], 0, 1, p.s[x], src_sp[x], 0};
    j.taps = taps;
    j.ntaps = ntaps;
    j.w = wp.p;
    j.ldn = wb.ldn;
    j.wblocks = wb.n;
    j.ksp = flat ? p.k[0] * p.k[1] : p.ksp();
    j.K = K;
    j.bias = p.with_bias ? bias.p : nullptr;
    j.zeros = zeros.p;
    // By rows (an image beyond the L2 budget): the copies are made per chunk of rows.
    const bool by_rows = pl.out_rows_per_chunk > 0 && pl.images_per_chunk == 1;
    // The whole batch's chunks of rows in one share-out (gather_by_rows), src in place.
    const bool across = rows_across_images(pl, !copy_src, pl.dst_direct, rounded_in_kernel);
    for (dim_t n0 = 0; n0 < p.mb; n0 += across ? p.mb : pl.images_per_chunk) {
        const direct_plan plc = chunk_plan(pl, n0);
        const dim_t nb = plc.p.mb;
        const void *src_user = image_at(args.src, p.src, p.dt, n0);
        void *out_user = const_cast<void *>(image_at(args.out, p.dst, p.dt, n0));
        j.pl = &plc;
        // src's copy: of the chunk's images, or made per chunk of rows by gather_by_rows.
        const bool image_copy = copy_src && !(by_rows && pl.in_rows_copied);
        scratch src_s(image_copy ? nb * src_sp[0] * src_sp[1] * src_sp[2] * p.ic() : 0);
        if (image_copy) copy_src_rows(p, nthr, flat, src_sp, src_user, nb, 0, 0, p.i[0], src_s.p);
        j.av = image_copy ? dense_view(src_s.p, p.ic(), src_sp) : user_view(src_user, p.src);
        if (by_rows) {
            gather_job<float, CE> chunk_job;
            gather_by_rows(
                plc, &j, &chunk_job, 1, input_rows{pl.in_rows_copied, src_sp, p.ic()},
                [&](dim_t a0, dim_t a1, float *copy, int copy_thr) {
                    copy_src_rows(p, copy_thr, flat, src_sp, src_user, 1, pl.out_row_axis, a0, a1,
                                  copy);
                },
                pl.dst_direct, out_user, p.dst, p.oc(), p.o, across ? p.mb : 1);
            continue;
        }
        const data_operand dst_op(p, nthr, pl.dst_direct || rounded_in_kernel, args.out, p.dst,
                                  p.oc(), p.o, false, n0, nb);
        if constexpr (rounded_in_kernel)
            j.cv = user_view<uint16_t>(out_user, p.dst);
        else
            j.cv = dst_op.v;
        gather_parallel(&j, 1);
        dst_op.store(nthr, pl.stream_copied_output);
    }
}

template <typename CE>  // as for run_fwd: the C of the gathers, src's type or float
static void run_bwd_data(const direct_plan &pl, const conv_args &args) {
    constexpr bool rounded_in_kernel = sizeof(CE) == 2;
    const conv_problem &p = pl.p;
    const int nthr = pl.nthr;
    // By rows (an image beyond the L2 budget): the copies are made per chunk of rows, for these
    // jobs.
    const bool by_rows = pl.out_rows_per_chunk > 0 && pl.images_per_chunk == 1;
    // The stride phases along w merged into the channels, as in the vdpbf16ps kernel
    // (direct_plan::merge_w_phases), never by chunks of rows, which may cut along w: the plan
    // leaves them out, and a plan whose chunks were set after it was made (tests) is held to it.
    const bool in_place = pl.src_direct || rounded_in_kernel;
    const bool merge_w = pl.merge_w_phases && !by_rows;
    const dim_t sw = merge_w ? p.s[2] : 1;  // src pixels per C pixel of the gathers
    const dim_t ntaps_packed = merge_w ? w_merged_taps(p) : p.ksp();
    const weight_blocks wb = panel_blocks(pl, sw * p.icg);
    scratch wt(p.g * wb.n * ntaps_packed * p.ocg * wb.ldn);
    const bool finite = merge_w ? pack_w_merged_weights(p, nthr, args.wei, wb, wt.p)
                                : pack_weights(p, nthr, args.wei, true, wb, true, wt.p);
    if (!finite && p.reads_padding()) return ref_conv_execute(p, args);
    // (Merged: the bias of each sub-pixel's channels.)
    scratch bias(p.with_bias ? sw * p.ic() + W : 0);
    if (p.with_bias) pack_bias(p, args.bias, p.ic(), bias.p, sw);
    const dim_t nzeros = gather_zeros_len(p.g, p.ocg, p.ocg);
    scratch zeros(nzeros);
    std::memset(zeros.p, 0, size_t(nzeros) * sizeof(float));
    scratch taps_mem(4 * 2 * p.ksp());
    gather_tap *taps = reinterpret_cast<gather_tap *>(taps_mem.p);

    gather_job<float, CE> j{};
    j.c_chan = sw * p.icg;
    j.a_chan = p.ocg;
    j.taps = taps;
    j.w = wt.p;
    j.ldn = wb.ldn;
    j.wblocks = wb.n;
    j.ksp = ntaps_packed;
    j.K = p.ocg;
    j.bias = p.with_bias ? bias.p : nullptr;
    j.zeros = zeros.p;
    // One gather per stride phase (schedule/gather.hpp).
    scratch jobs_mem(dim_t(sizeof(gather_job<float, CE>) / sizeof(float) + 1) * stride_phases(p));
    gather_job<float, CE> *jobs = reinterpret_cast<gather_job<float, CE> *>(jobs_mem.p);
    const dim_t nphases = bwd_data_phase_jobs(p, j, taps, jobs, merge_w);
    scratch chunk_jobs_mem(
        by_rows ? dim_t(sizeof(gather_job<float, CE>) / sizeof(float) + 1) * nphases : 0);
    gather_job<float, CE> *chunk_jobs = reinterpret_cast<gather_job<float, CE> *>(chunk_jobs_mem.p);
    // The whole batch's chunks of rows in one share-out (gather_by_rows), diff_dst in place.
    const bool across = rows_across_images(pl, pl.dst_direct, pl.src_direct, rounded_in_kernel);
    for (dim_t n0 = 0; n0 < p.mb; n0 += across ? p.mb : pl.images_per_chunk) {
        const direct_plan plc = chunk_plan(pl, n0);
        const dim_t nb = plc.p.mb;
        const void *dst_user = image_at(args.dst, p.dst, p.dt, n0);
        void *out_user = const_cast<void *>(image_at(args.out, p.src, p.dt, n0));
        // dst's copy: of the chunk's images, or made per chunk of rows by gather_by_rows.
        const data_operand dst_op(p, nthr, pl.dst_direct || (by_rows && pl.in_rows_copied),
                                  args.dst, p.dst, p.oc(), p.o, true, n0, nb);
        for (dim_t ph = 0; ph < nphases; ++ph) {
            jobs[ph].pl = &plc;
            jobs[ph].av = dst_op.v;
        }
        if (by_rows) {
            gather_by_rows(
                plc, jobs, chunk_jobs, nphases, input_rows{pl.in_rows_copied, p.o, p.oc()},
                [&](dim_t a0, dim_t a1, float *copy, int copy_thr) {
                    pack_rows_along(p.dt, copy_thr, dst_user, p.dst, p.oc(), p.o, 1,
                                    pl.out_row_axis, a0, a1, copy);
                },
                pl.src_direct, out_user, p.src, p.ic(), p.i, across ? p.mb : 1);
            continue;
        }
        const data_operand src_op(p, nthr, in_place, args.out, p.src, p.ic(), p.i, false, n0, nb);
        for (dim_t ph = 0; ph < nphases; ++ph) {
            if constexpr (rounded_in_kernel)
                jobs[ph].cv = user_view<uint16_t>(out_user, p.src);
            else
                jobs[ph].cv = src_op.v;
            jobs[ph].cv.w *= sw;
        }
        gather_parallel(jobs, nphases);
        src_op.store(nthr, pl.stream_copied_output);
    }
}

// ---------------------------------------------------------------------------- bwd_weights --
// (the schedule is kernels/schedule/bwd_weights.hpp)

// Whether f32 channels-last rows at `user` put the vectors of every group's channels on whole
// vectors of memory: rows copied per chunk (dense, into aligned scratch) would, when the groups'
// channels are whole vectors, and the user's do not when its tensor starts past one. glibc's
// malloc puts a large buffer 16 bytes past a line (std::vector, NumPy): the weight gradient
// loads each diff_dst vector of a pixel once per register tile of weight rows, and split across
// two lines they cost ResNet-50's and U-Net's weight gradients 1.12-1.26x (2 threads).
static bool rows_split_vectors(const void *user, const data_layout &l, dim_t channels_per_group) {
    const auto a = reinterpret_cast<uintptr_t>(user);
    return channels_per_group % W == 0 && a % (W * sizeof(float)) != 0 && a % sizeof(float) == 0 &&
           l.c == 1;
}

static void run_bwd_weights(const direct_plan &pl, const conv_args &args) {
    const conv_problem &p = pl.p;
    const int nthr = pl.nthr;
    // Copied operands are converted per chunk of rows inside the schedule (row_source); so is
    // an f32 diff_dst whose vectors would each straddle two lines in place, unless its groups
    // are copied dense anyway (bwd_w_group_copies: into aligned scratch, from the user's rows;
    // converted first, ResNeXt's were copied twice, 16 bytes past a line as std::vector puts
    // them: a twentieth of the samples in the conversion alone).
    const bool dst_direct =
        pl.dst_direct && (pl.bwd_w_group_copies || !rows_split_vectors(args.dst, p.dst, p.ocg));
    const row_source src{
        pl.src_direct, user_view(args.src, p.src), args.src, &p.src, p.dt, p.ic(), p.i};
    const row_source dst{dst_direct, user_view(args.dst, p.dst), args.dst, &p.dst, p.dt, p.oc(),
                         p.o};

    const dim_t ksp = p.ksp(), ldn = div_up(p.ocg, W) * W;
    const dim_t part = p.g * ksp * p.icg * ldn;  // one thread's partial sums
    // Weights split: the threads' sums are final, in the user's weights. Rows split: each
    // thread's into its partials; then (a second region: no barrier inside one, see
    // threading/parallel.hpp) their fixed-order reduction.
    if (pl.weights_split) {
        const weight_rows out{nullptr, 0, args.out};
        parallel(nthr, [&](int ithr, int nt) { bwd_weights_sums(pl, src, dst, out, ithr, nt); });
        return;
    }
    scratch partials(nthr * part);
    parallel(nthr, [&](int ithr, int nt) {
        const weight_rows mine{partials.p + ithr * part, ldn, nullptr};
        bwd_weights_sums(pl, src, dst, mine, ithr, nt);
    });
    reduce_weight_partials(pl, partials.p, part, ldn, args.out, pl.nthr);
}

// --------------------------------------------------------------------------------- entry --

void run_direct(const direct_plan &pl, const conv_args &args) {
    switch (pl.p.dir) {
        case conv_direction::fwd:
            if (pl.out_rounded_in_kernel)
                run_fwd<uint16_t>(pl, args);
            else
                run_fwd<float>(pl, args);
            break;
        case conv_direction::bwd_data:
            if (pl.out_rounded_in_kernel)
                run_bwd_data<uint16_t>(pl, args);
            else
                run_bwd_data<float>(pl, args);
            break;
        case conv_direction::bwd_weights:
            run_bwd_weights(pl, args);
            break;
    }
}
