// The loop nests of the grouped kernels' fwd and bwd_data, written once over a lanes policy L:
// grouped_conv_impl.hpp's (f32 lanes, a channel each, FMA) and grouped_pairs_impl.hpp's
// (vdpbf16ps lanes, a channel pair each). L gives
//   in_t                 the input side's element (float, or bf16 bits)
//   gm, cg, cb           pixels per register tile, channels per group, channels per vector
//   block_bytes(p)       the packed weights of one block of cb channels
//   weights(b, t)        the packed weights of block b, tap t
//   mask(nc)             the input loads' mask for nc channels
//   tile(x, step, mk, w, acc)   one tap's products for a tile of gm pixels step apart
//   one(x, mk, w, acc[q])       the same for one pixel (tiles at an edge)
//   finish(acc[q], c0, nc, out) one pixel's sums of a block (cg vectors) into its nc outputs
// Threads split the output rows; a tile of pixels visits the channel blocks innermost (sets of
// them, grouped_blocks_per_set); taps that read padding are left out, as the reference does.
// Included in an ISA's namespace after kernel_helpers.hpp.

// Packed weights [block][tap][i][cb] of element E (f32 lanes: cb = W floats; pair lanes: 32
// bf16, two per lane): element c of block b is channel b*cb + c of the input side, for i in
// [0, cg):
//   fwd (the input side is src):      W[oc = c - c%cg + i][icg = c % cg]   (i = oc's j)
//   bwd_data (the input side is dst): W[oc = c][icg = i]
// Channels past the last are zero. elem(off): the user's weight `off` elements in, as E.
template <typename E, typename Elem>
static void grouped_pack_weights(const conv_problem &p, int nthr, bool fwd, dim_t cg, dim_t nblocks,
                                 dim_t cb, E *out, const Elem &elem) {
    const weights_layout &l = p.wei;
    const dim_t ksp = p.ksp(), C = p.g * cg;
    parallel(nthr, [&](int ithr, int nt) {
        dim_t s, e;
        split(nblocks * ksp, nt, ithr, s, e);
        for (dim_t bt = s; bt < e; ++bt) {
            const dim_t b = bt / ksp, t = bt % ksp;
            const dim_t kw = t % p.k[2], kh = (t / p.k[2]) % p.k[1], kd = t / (p.k[2] * p.k[1]);
            const dim_t toff = kd * l.sp[0] + kh * l.sp[1] + kw * l.sp[2];
            for (dim_t i = 0; i < cg; ++i) {
                E *o = out + ((b * ksp + t) * cg + i) * cb;
                for (dim_t x = 0; x < cb; ++x) {
                    const dim_t c = b * cb + x;
                    if (c >= C) {
                        o[x] = E(0);
                        continue;
                    }
                    const dim_t oc = fwd ? c - c % cg + i : c, icg = fwd ? c % cg : i;
                    o[x] = elem(oc * l.oc + icg * l.ic + toff);
                }
            }
        }
    });
}

// The blocks a tile visits before the next tile: all while the packed weights of all fit half
// of L2, so a tile reads its pixels' channels whole and in order (a pixel of 256 bf16 channels
// is 8 lines); else sets whose weights take half of L1, over chunks of grouped_row_chunk rows
// (the pixels of a tile stay in L1 across a set's blocks, the set's weights across the rows of
// a chunk). Zen 4, ResNeXt's 3x3 (8 blocks, 37 KB of weights) on vdpbf16ps, 2 threads, 3
// alternated runs: 1.54-1.77 ms against 1.87-2.01 in sets of 3 blocks (Convolution),
// 1.57-1.75 against 1.69-3.7 (ConvolutionBackwardData).
constexpr dim_t grouped_row_chunk = 4;
static dim_t grouped_blocks_per_set(const direct_plan &pl, dim_t block_bytes, dim_t nblocks) {
    if (nblocks * block_bytes <= pl.caches.l2 / 2) return nblocks;
    return imax(1, pl.caches.l1d / 2 / block_bytes);
}

// The hardware did not fetch a tile's input pixels in time: on ResNeXt's 3x3 a fifth (bf16) to
// a third (f32) of the samples sat on the first product after their loads. So each tile, before
// its first block, prefetches the next tile's input pixels [lo, hi) of a row, `bytes` of
// channels each from `row`. Zen 4, 1 thread, 5 alternated runs: 3.59-4.20 ms against 4.01-4.28
// (bf16 Convolution).
template <typename E>
static inline void grouped_prefetch(const E *row, dim_t pixel_stride, dim_t lo, dim_t hi, dim_t bytes) {
    constexpr dim_t per_line = 64 / dim_t(sizeof(E));
    for (dim_t iw = lo; iw < hi; ++iw)
        for (dim_t l = 0; l * 64 < bytes; ++l) __builtin_prefetch(row + iw * pixel_stride + l * per_line, 0, 3);
}

// fwd: dst[pix][oc] = sum_taps sum_icg src[pix'][group(oc) base + icg] * w. CE: dst's element
// (float, or bf16/f16 bits rounded in place).
template <typename L, typename CE>
static void grouped_fwd_rows(const direct_plan &pl, const L &ln, const tview<typename L::in_t> &src,
                             const tview<CE> &dst, dim_t nblocks) {
    using E = typename L::in_t;
    constexpr int gm = L::gm, CG = L::cg;
    constexpr dim_t cb = L::cb;
    const conv_problem &p = pl.p;
    const dim_t C = p.g * CG, rows = p.mb * p.o[0] * p.o[1];
    const dim_t bset = grouped_blocks_per_set(pl, L::block_bytes(p), nblocks);
    parallel(pl.nthr, [&](int ithr, int nt) {
        dim_t s, e;
        split(rows, nt, ithr, s, e);
        for (dim_t r0 = s; r0 < e; r0 += grouped_row_chunk)
        for (dim_t b0 = 0; b0 < nblocks; b0 += bset)
        for (dim_t row = r0; row < imin(e, r0 + grouped_row_chunk); ++row) {
            const dim_t oh = row % p.o[1], od = (row / p.o[1]) % p.o[0], n = row / (p.o[1] * p.o[0]);
            const dim_t b1 = imin(nblocks, b0 + bset), set_bytes = (imin(C, b1 * cb) - b0 * cb) * dim_t(sizeof(E));
            for (dim_t ow0 = 0; ow0 < p.o[2]; ow0 += gm) {
                // The next tile's pixels past this tile's last (while a next tile exists, the
                // stride is below the width: no position overflows).
                if (ow0 + gm < p.o[2] && p.s[2] <= p.i[2]) {
                    const dim_t reach = (p.k[2] - 1) * p.dl[2] - p.pb[2];
                    const dim_t lo = imax(0, imax((ow0 + gm) * p.s[2] - p.pb[2], (ow0 + gm - 1) * p.s[2] + reach + 1));
                    const dim_t hi = imin(p.i[2], (ow0 + 2 * gm - 1) * p.s[2] + reach + 1);
                    for (dim_t kd = 0; kd < p.k[0]; ++kd) {
                        const dim_t id = od * p.s[0] + kd * p.dl[0] - p.pb[0];
                        if (id < 0 || id >= p.i[0]) continue;
                        for (dim_t kh = 0; kh < p.k[1]; ++kh) {
                            const dim_t ih = oh * p.s[1] + kh * p.dl[1] - p.pb[1];
                            if (ih >= 0 && ih < p.i[1])
                                grouped_prefetch(src.at(n, id, ih, 0) + b0 * cb, src.w, lo, hi, set_bytes);
                        }
                    }
                }
                for (dim_t b = b0; b < b1; ++b) {
                    const dim_t c0 = b * cb;
                    const int nc = int(imin(cb, C - c0));
                    const mask_t mk = L::mask(nc);
                    const int m = int(imin(gm, p.o[2] - ow0));
                    V acc[gm][CG];
                    for (int q = 0; q < gm; ++q)
                        for (int j = 0; j < CG; ++j) acc[q][j] = vt::zero();
                    for (dim_t kd = 0; kd < p.k[0]; ++kd) {
                        const dim_t id = od * p.s[0] + kd * p.dl[0] - p.pb[0];
                        if (id < 0 || id >= p.i[0]) continue;
                        for (dim_t kh = 0; kh < p.k[1]; ++kh) {
                            const dim_t ih = oh * p.s[1] + kh * p.dl[1] - p.pb[1];
                            if (ih < 0 || ih >= p.i[1]) continue;
                            const E *srow = src.at(n, id, ih, 0) + c0;
                            for (dim_t kw = 0; kw < p.k[2]; ++kw) {
                                const auto *wt = ln.weights(b, (kd * p.k[1] + kh) * p.k[2] + kw);
                                const dim_t off = kw * p.dl[2] - p.pb[2];
                                const dim_t iw0 = ow0 * p.s[2] + off;
                                if (m == gm && iw0 >= 0 && iw0 + (gm - 1) * p.s[2] < p.i[2]) {
                                    // Interior tile: every pixel of it reads inside the row (so
                                    // the stride is below the width: the products cannot overflow).
                                    L::tile(srow + iw0 * src.w, p.s[2] * src.w, mk, wt, acc);
                                    continue;
                                }
                                // Constant trip count: acc[] stays in registers.
#pragma GCC unroll 9
                                for (int q = 0; q < gm; ++q) {
                                    if (q >= m) continue;  // (no pixel: its position may overflow)
                                    const dim_t iw = (ow0 + q) * p.s[2] + off;
                                    if (iw >= 0 && iw < p.i[2]) L::one(srow + iw * src.w, mk, wt, acc[q]);
                                }
                            }
                        }
                    }
                    CE *drow = dst.at(n, od, oh, ow0) + c0;
#pragma GCC unroll 9
                    for (int q = 0; q < gm; ++q)
                        if (q < m) ln.finish(acc[q], c0, nc, drow + q * dst.w);
                }
            }
        }
    });
}

// bwd_data: src[pix][c] = sum over the taps reaching pix, sum_j dst[o][group(c) base + j] * w.
// Stride phases along w: src pixels r + s*t (t = t0 + q) are reached by the kw taps with
// (r + pb - kw*dl) divisible by s, from the consecutive dst pixels t + off. CE: src's element.
template <typename L, typename CE>
static void grouped_bwd_data_rows(const direct_plan &pl, const L &ln, const tview<CE> &src,
                                  const tview<typename L::in_t> &dst, dim_t nblocks) {
    using E = typename L::in_t;
    constexpr int gm = L::gm, CG = L::cg;
    constexpr dim_t cb = L::cb;
    const conv_problem &p = pl.p;
    const dim_t C = p.g * CG, rows = p.mb * p.i[0] * p.i[1];
    const dim_t bset = grouped_blocks_per_set(pl, L::block_bytes(p), nblocks);
    parallel(pl.nthr, [&](int ithr, int nt) {
        dim_t s, e;
        split(rows, nt, ithr, s, e);
        for (dim_t r0 = s; r0 < e; r0 += grouped_row_chunk)
        for (dim_t b0 = 0; b0 < nblocks; b0 += bset)
        for (dim_t row = r0; row < imin(e, r0 + grouped_row_chunk); ++row) {
            const dim_t ih = row % p.i[1], id = (row / p.i[1]) % p.i[0], n = row / (p.i[1] * p.i[0]);
            const dim_t b1 = imin(nblocks, b0 + bset), set_bytes = (imin(C, b1 * cb) - b0 * cb) * dim_t(sizeof(E));
            for (dim_t r = 0; r < imin(p.s[2], p.i[2]); ++r) {
                const dim_t T = div_up(p.i[2] - r, p.s[2]);
                for (dim_t t0 = 0; t0 < T; t0 += gm) {
                    if (t0 + gm < T) {
                        // The next tile's dst pixels, from the last tap's to the first's.
                        const dim_t lo = t0 + gm + floor_div(r + p.pb[2] - (p.k[2] - 1) * p.dl[2], p.s[2]);
                        const dim_t hi = t0 + 2 * gm + floor_div(r + p.pb[2], p.s[2]);
                        for (dim_t kd = 0; kd < p.k[0]; ++kd) {
                            dim_t od, oh;
                            if (!stride_quotient(id + p.pb[0] - kd * p.dl[0], p.s[0], od) || od < 0 || od >= p.o[0]) continue;
                            for (dim_t kh = 0; kh < p.k[1]; ++kh)
                                if (stride_quotient(ih + p.pb[1] - kh * p.dl[1], p.s[1], oh) && oh >= 0 && oh < p.o[1])
                                    grouped_prefetch(dst.at(n, od, oh, 0) + b0 * cb, dst.w, imax(0, lo),
                                                     imin(p.o[2], hi), set_bytes);
                        }
                    }
                    for (dim_t b = b0; b < b1; ++b) {
                        const dim_t c0 = b * cb;
                        const int nc = int(imin(cb, C - c0));
                        const mask_t mk = L::mask(nc);
                        const int m = int(imin(gm, T - t0));
                        V acc[gm][CG];
                        for (int q = 0; q < gm; ++q)
                            for (int j = 0; j < CG; ++j) acc[q][j] = vt::zero();
                        for (dim_t kd = 0; kd < p.k[0]; ++kd) {
                            dim_t od, oh, ow;
                            if (!stride_quotient(id + p.pb[0] - kd * p.dl[0], p.s[0], od) || od < 0 || od >= p.o[0]) continue;
                            for (dim_t kh = 0; kh < p.k[1]; ++kh) {
                                if (!stride_quotient(ih + p.pb[1] - kh * p.dl[1], p.s[1], oh) || oh < 0 || oh >= p.o[1]) continue;
                                const E *drow = dst.at(n, od, oh, 0) + c0;
                                for (dim_t kw = 0; kw < p.k[2]; ++kw) {
                                    if (!stride_quotient(r + p.pb[2] - kw * p.dl[2], p.s[2], ow)) continue;
                                    const dim_t tw0 = t0 + ow;
                                    const auto *wk = ln.weights(b, (kd * p.k[1] + kh) * p.k[2] + kw);
                                    if (m == gm && tw0 >= 0 && tw0 + gm - 1 < p.o[2]) {
                                        L::tile(drow + tw0 * dst.w, dst.w, mk, wk, acc);  // interior
                                        continue;
                                    }
#pragma GCC unroll 9
                                    for (int q = 0; q < gm; ++q) {
                                        const dim_t tw = tw0 + q;
                                        if (q < m && tw >= 0 && tw < p.o[2]) L::one(drow + tw * dst.w, mk, wk, acc[q]);
                                    }
                                }
                            }
                        }
                        CE *srow = src.at(n, id, ih, r + t0 * p.s[2]) + c0;
                        // (Several pixels per phase only when the stride is below the width.)
                        const dim_t sstep = m > 1 ? p.s[2] * src.w : 0;
#pragma GCC unroll 9
                        for (int q = 0; q < gm; ++q)
                            if (q < m) ln.finish(acc[q], c0, nc, srow + q * sstep);
                    }
                }
            }
        }
    });
}
