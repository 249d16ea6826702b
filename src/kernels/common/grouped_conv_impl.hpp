// Grouped and depthwise convolution with few channels per group (ICg == OCg == cg, cg a divisor
// of the vector width W and smaller than it). The general kernel would fill only cg of W lanes;
// here the lanes are the channels of W/cg whole groups at once: one vector load of a pixel's
// channels, then for each of the cg channels of a group a lane permutation brings every lane
// its group's i-th channel (none for depthwise, cg = 1), and one FMA with the weights of that
// lane. Included after direct_conv_impl.hpp in an ISA's namespace; needs vt::perm_t,
// vt::perm_index(cg, i) and vt::permute(v, idx).

struct gplan_view {
    const conv_problem *p;
    dim_t cg, C, nblocks;  // channels per group, all channels, W-blocks of channels
};

// Packed weights [block][tap][i][W]: lane l of block b, for i in [0, cg), holds
//   fwd:      W[oc = b*W + l][icg = i]                      (input channel of the group: i)
//   bwd_data: W[oc = b*W + l - l%cg + i][icg = l % cg]     (output channel of the group: i)
static void grouped_pack_weights(const conv_problem &p, int nthr, const void *user, bool transposed,
                                 dim_t cg, dim_t nblocks, float *out) {
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
                float *o = out + ((b * ksp + t) * cg + i) * W;
                for (dim_t ln = 0; ln < W; ++ln) {
                    const dim_t c = b * W + ln;
                    if (c >= C) {
                        o[ln] = 0.f;
                        continue;
                    }
                    const dim_t oc = transposed ? c - c % cg + i : c, icg = transposed ? c % cg : i;
                    o[ln] = load_elem(p.dt, user, oc * l.oc + icg * l.ic + toff);
                }
            }
        }
    });
}

template <int CG>
static inline V grouped_fma(V x, const float *w, V acc, const typename vt::perm_t *perm) {
    if constexpr (CG == 1) {
        return vt::fma(x, vt::load(w), acc);
    } else {
#pragma GCC unroll 16
        for (int i = 0; i < CG; ++i) acc = vt::fma(vt::permute(x, perm[i]), vt::load(w + i * W), acc);
        return acc;
    }
}

constexpr int gm = 8;  // output pixels per register tile

// One output pixel's channels c0.. of a block (mask mk, n of them): f32 stored as is; the bits
// of a bf16/f16 output (direct_plan::out_rounded_in_kernel) rounded once, in place.
static inline void grouped_store(float *p, V v, mask_t mk, int, data_type) {
    vt::store_mask(p, v, mk);
}
static inline void grouped_store(uint16_t *p, V v, mask_t, int n, data_type dt) {
    alignas(64) float t[W];
    vt::store(t, v);
    vt::narrow(dt, t, p, n);
}

// fwd and bwd_data walk the channel blocks in sets whose packed weights take at most half of
// L1, innermost, over chunks of grouped_row_chunk rows: the pixels of a tile stay in L1 across
// a set's blocks, and the set's weights across the rows of a chunk (all blocks' weights would
// not fit: 74 KiB for ResNeXt's 3x3 with 8 channels per group).
constexpr dim_t grouped_row_chunk = 4;
static dim_t grouped_blocks_per_set(const direct_plan &pl, dim_t cg) {
    const dim_t block_bytes = pl.p.ksp() * cg * W * dim_t(sizeof(float));
    return imax(1, pl.caches.l1d / 2 / block_bytes);
}

// fwd (CG = cg): dst[pix][c] += sum_taps sum_i src[pix'][group(c) base + i] * w. CE: dst's
// element type (float, or bf16/f16 bits rounded in place).
template <int CG, typename CE>
static void grouped_fwd(const direct_plan &pl, const fview &src, const tview<CE> &dst,
                        const float *wp, const float *bias, dim_t nblocks) {
    const conv_problem &p = pl.p;
    const dim_t ksp = p.ksp(), C = p.g * CG, rows = p.mb * p.o[0] * p.o[1];
    typename vt::perm_t perm[CG];
    for (int i = 0; i < CG; ++i) perm[i] = vt::perm_index(CG, i);
    const dim_t bset = grouped_blocks_per_set(pl, CG), row_chunk = grouped_row_chunk;
    parallel(pl.nthr, [&](int ithr, int nt) {
        dim_t s, e;
        split(rows, nt, ithr, s, e);
        for (dim_t r0 = s; r0 < e; r0 += row_chunk)
        for (dim_t b0 = 0; b0 < nblocks; b0 += bset)
        for (dim_t row = r0; row < imin(e, r0 + row_chunk); ++row) {
            const dim_t oh = row % p.o[1], od = (row / p.o[1]) % p.o[0], n = row / (p.o[1] * p.o[0]);
            for (dim_t ow0 = 0; ow0 < p.o[2]; ow0 += gm)
            for (dim_t b = b0; b < imin(nblocks, b0 + bset); ++b) {
                const dim_t c0 = b * W;
                const int nc = int(imin(W, C - c0));
                const mask_t mk = vt::mask(nc);
                const V binit = bias ? vt::load_mask(bias + c0, mk) : vt::zero();
                const int m = int(imin(gm, p.o[2] - ow0));
                V acc[gm];
                for (int q = 0; q < gm; ++q) acc[q] = binit;
                for (dim_t kd = 0; kd < p.k[0]; ++kd) {
                    const dim_t id = od * p.s[0] + kd * p.dl[0] - p.pb[0];
                    if (id < 0 || id >= p.i[0]) continue;
                    for (dim_t kh = 0; kh < p.k[1]; ++kh) {
                        const dim_t ih = oh * p.s[1] + kh * p.dl[1] - p.pb[1];
                        if (ih < 0 || ih >= p.i[1]) continue;
                        const float *srow = src.at(n, id, ih, 0) + c0;
                        for (dim_t kw = 0; kw < p.k[2]; ++kw) {
                            const float *wt = wp + ((b * ksp + (kd * p.k[1] + kh) * p.k[2] + kw) * CG) * W;
                            const dim_t off = kw * p.dl[2] - p.pb[2];
                            const dim_t iw0 = ow0 * p.s[2] + off;
                            if (m == gm && iw0 >= 0 && iw0 + (gm - 1) * p.s[2] < p.i[2]) {
                                // Interior tile: every pixel of it reads inside the row (so the
                                // stride is below the width: the products cannot overflow).
                                const float *x = srow + iw0 * src.w;
                                const dim_t step = p.s[2] * src.w;
#pragma GCC unroll 8
                                for (int q = 0; q < gm; ++q)
                                    acc[q] = grouped_fma<CG>(vt::load_mask(x + q * step, mk), wt, acc[q], perm);
                                continue;
                            }
                            // Constant trip count: acc[] stays in registers.
#pragma GCC unroll 8
                            for (int q = 0; q < gm; ++q) {
                                if (q >= m) continue;  // (no pixel: its position may overflow)
                                const dim_t iw = (ow0 + q) * p.s[2] + off;
                                if (iw >= 0 && iw < p.i[2])
                                    acc[q] = grouped_fma<CG>(vt::load_mask(srow + iw * src.w, mk), wt, acc[q], perm);
                            }
                        }
                    }
                }
                CE *drow = dst.at(n, od, oh, ow0) + c0;
#pragma GCC unroll 8
                for (int q = 0; q < gm; ++q)
                    if (q < m) grouped_store(drow + q * dst.w, acc[q], mk, nc, p.dt);
            }
        }
    });
}

// bwd_data (CG = cg): src[pix][c] = sum over taps reaching pix, sum_j dst[o][group(c) base + j] * w.
// CE: src's element type, as for grouped_fwd.
template <int CG, typename CE>
static void grouped_bwd_data(const direct_plan &pl, const tview<CE> &src, const fview &dst,
                             const float *wt, const float *bias, dim_t nblocks) {
    const conv_problem &p = pl.p;
    const dim_t ksp = p.ksp(), C = p.g * CG, rows = p.mb * p.i[0] * p.i[1];
    typename vt::perm_t perm[CG];
    for (int i = 0; i < CG; ++i) perm[i] = vt::perm_index(CG, i);
    const dim_t bset = grouped_blocks_per_set(pl, CG), row_chunk = grouped_row_chunk;
    parallel(pl.nthr, [&](int ithr, int nt) {
        dim_t s, e;
        split(rows, nt, ithr, s, e);
        for (dim_t r0 = s; r0 < e; r0 += row_chunk)
        for (dim_t b0 = 0; b0 < nblocks; b0 += bset)
        for (dim_t row = r0; row < imin(e, r0 + row_chunk); ++row) {
            const dim_t ih = row % p.i[1], id = (row / p.i[1]) % p.i[0], n = row / (p.i[1] * p.i[0]);
            // Stride phases along w: src pixels r + s*t (t = t0 + q) are reached by the kw taps
            // with (r + pb - kw*dl) divisible by s, from the consecutive dst pixels t + off.
            for (dim_t r = 0; r < imin(p.s[2], p.i[2]); ++r) {
                const dim_t T = div_up(p.i[2] - r, p.s[2]);
                for (dim_t t0 = 0; t0 < T; t0 += gm)
                for (dim_t b = b0; b < imin(nblocks, b0 + bset); ++b) {
                    const dim_t c0 = b * W;
                    const int nc = int(imin(W, C - c0));
                    const mask_t mk = vt::mask(nc);
                    const V binit = bias ? vt::load_mask(bias + c0, mk) : vt::zero();
                    const int m = int(imin(gm, T - t0));
                    V acc[gm];
                    for (int q = 0; q < gm; ++q) acc[q] = binit;
                    for (dim_t kd = 0; kd < p.k[0]; ++kd) {
                        const dim_t td = id + p.pb[0] - kd * p.dl[0];
                        if (td < 0 || td % p.s[0] != 0 || td / p.s[0] >= p.o[0]) continue;
                        for (dim_t kh = 0; kh < p.k[1]; ++kh) {
                            const dim_t th = ih + p.pb[1] - kh * p.dl[1];
                            if (th < 0 || th % p.s[1] != 0 || th / p.s[1] >= p.o[1]) continue;
                            const float *drow = dst.at(n, td / p.s[0], th / p.s[1], 0) + c0;
                            for (dim_t kw = 0; kw < p.k[2]; ++kw) {
                                const dim_t qw = r + p.pb[2] - kw * p.dl[2];
                                if (floor_div(qw, p.s[2]) * p.s[2] != qw) continue;
                                const dim_t tw0 = t0 + floor_div(qw, p.s[2]);
                                const float *wk = wt + ((b * ksp + (kd * p.k[1] + kh) * p.k[2] + kw) * CG) * W;
                                if (m == gm && tw0 >= 0 && tw0 + gm - 1 < p.o[2]) {
                                    const float *x = drow + tw0 * dst.w;  // interior: no checks
#pragma GCC unroll 8
                                    for (int q = 0; q < gm; ++q)
                                        acc[q] = grouped_fma<CG>(vt::load_mask(x + q * dst.w, mk), wk, acc[q], perm);
                                    continue;
                                }
#pragma GCC unroll 8
                                for (int q = 0; q < gm; ++q) {
                                    const dim_t tw = tw0 + q;
                                    if (q < m && tw >= 0 && tw < p.o[2])
                                        acc[q] = grouped_fma<CG>(vt::load_mask(drow + tw * dst.w, mk), wk, acc[q], perm);
                                }
                            }
                        }
                    }
                    CE *srow = src.at(n, id, ih, r + t0 * p.s[2]) + c0;
                    // (Several pixels per phase only when the stride is below the width.)
                    const dim_t sstep = m > 1 ? p.s[2] * src.w : 0;
#pragma GCC unroll 8
                    for (int q = 0; q < gm; ++q)
                        if (q < m) grouped_store(srow + q * sstep, acc[q], mk, nc, p.dt);
                }
            }
        }
    });
}

// bwd_weights (CG = cg): dW[oc][i][tap] = sum_pix dst[pix][oc] * src[pix'][group(oc) base + i].
// Per-thread partial sums [block][tap][i][W], reduced in a fixed order.
template <int CG>
static void grouped_bwd_weights(const direct_plan &pl, const row_source &src0,
                                const row_source &dst0, void *user_w, dim_t nblocks) {
    const conv_problem &p = pl.p;
    const dim_t ksp = p.ksp(), C = p.g * CG, rows = p.mb * p.o[0] * p.o[1];
    const dim_t part = nblocks * ksp * CG * W;
    scratch partials(pl.nthr * part);
    typename vt::perm_t perm[CG];
    for (int i = 0; i < CG; ++i) perm[i] = vt::perm_index(CG, i);
    // Partial sums, then their fixed-order reduction: two regions (no barrier inside one).
    parallel(pl.nthr, [&](int ithr, int nt) {
        float *P = partials.p + ithr * part;
        for (dim_t x = 0; x < part; ++x) P[x] = 0.f;
        dim_t s, e;
        split(rows, nt, ithr, s, e);
        // Copied operands are converted per chunk of rows, like the direct kernel's bwd_weights.
        row_source src = src0, dst = dst0;
        const row_buffers bufs(p, src, dst, s, e, pl.rows_per_chunk);
        const dim_t sw = src.pixel_stride(), dw = dst.pixel_stride();
        // With few group channels, four accumulators per channel hide the FMA latency of the
        // chain along w (the order of the sums is fixed, so results repeat exactly); with 4 or
        // more, the channels themselves are independent chains.
        constexpr int U = CG >= 4 ? 1 : 4;
        for (dim_t row = s; row < e; ++row) {
            if ((row - s) % pl.rows_per_chunk == 0)
                row_buffers::convert(p, src, dst, row, imin(row + pl.rows_per_chunk, e));
            const dim_t oh = row % p.o[1], od = (row / p.o[1]) % p.o[0], n = row / (p.o[1] * p.o[0]);
            // Channel block outermost: its cache lines of the rows stay in L1 across the taps.
            for (dim_t b = 0; b < nblocks; ++b) {
                const dim_t c0 = b * W;
                const mask_t mk = vt::mask(int(imin(W, C - c0)));
                const float *drow = dst.row(n, od, oh) + c0;
                for (dim_t kd = 0; kd < p.k[0]; ++kd) {
                    const dim_t id = od * p.s[0] + kd * p.dl[0] - p.pb[0];
                    if (id < 0 || id >= p.i[0]) continue;
                    for (dim_t kh = 0; kh < p.k[1]; ++kh) {
                        const dim_t ih = oh * p.s[1] + kh * p.dl[1] - p.pb[1];
                        if (ih < 0 || ih >= p.i[1]) continue;
                        const float *srow = src.row(n, id, ih) + c0;
                        for (dim_t kw = 0; kw < p.k[2]; ++kw) {
                            dim_t lo, hi;
                            const dim_t off = tap_w_range(p, kw, lo, hi);
                            const dim_t t = (kd * p.k[1] + kh) * p.k[2] + kw;
                            V acc[U][CG];
                            for (int u = 0; u < U; ++u)
                                for (int i = 0; i < CG; ++i) acc[u][i] = vt::zero();
                            dim_t ow = lo;
                            for (; ow + U <= hi; ow += U) {
#pragma GCC unroll 4
                                for (int u = 0; u < U; ++u) {
                                    const V dv = vt::load_mask(drow + (ow + u) * dw, mk);
                                    // The src pixel first, then its address: a stride times a
                                    // channel stride may overflow.
                                    const V sv = vt::load_mask(srow + ((ow + u) * p.s[2] + off) * sw, mk);
#pragma GCC unroll 8
                                    for (int i = 0; i < CG; ++i)
                                        acc[u][i] = vt::fma(dv, CG == 1 ? sv : vt::permute(sv, perm[i]), acc[u][i]);
                                }
                            }
                            for (; ow < hi; ++ow) {
                                const V dv = vt::load_mask(drow + ow * dw, mk);
                                const V sv = vt::load_mask(srow + (ow * p.s[2] + off) * sw, mk);
                                for (int i = 0; i < CG; ++i)
                                    acc[0][i] = vt::fma(dv, CG == 1 ? sv : vt::permute(sv, perm[i]), acc[0][i]);
                            }
                            float *pp = P + ((b * ksp + t) * CG) * W;
                            for (int i = 0; i < CG; ++i) {
                                V sum = acc[0][i];
                                for (int u = 1; u < U; ++u) sum = vt::add(sum, acc[u][i]);
                                vt::store(pp + i * W, vt::add(sum, vt::load(pp + i * W)));
                            }
                        }
                    }
                }
            }
        }
    });
    parallel(pl.nthr, [&](int ithr, int nt) {
        const weights_layout &l = p.wei;
        dim_t xs, xe;
        split(C * ksp, nt, ithr, xs, xe);
        for (dim_t x = xs; x < xe; ++x) {
            const dim_t c = x / ksp, t = x % ksp, b = c / W, ln = c % W;
            const dim_t kw = t % p.k[2], kh = (t / p.k[2]) % p.k[1], kd = t / (p.k[2] * p.k[1]);
            for (int i = 0; i < CG; ++i) {
                float sum = 0.f;
                for (int q = 0; q < nt; ++q) sum += partials.p[q * part + ((b * ksp + t) * CG + i) * W + ln];
                store_elem(p.dt, user_w, c * l.oc + i * l.ic + kd * l.sp[0] + kh * l.sp[1] + kw * l.sp[2], sum);
            }
        }
    });
}

template <int CG>
static void run_grouped_cg(const direct_plan &pl, const conv_args &args) {
    const conv_problem &p = pl.p;
    const int nthr = pl.nthr;
    const dim_t C = p.g * CG, nblocks = div_up(C, W);
    if (p.dir == conv_direction::bwd_weights) {
        const row_source src{pl.src_direct, user_view(args.src, p.src), args.src, &p.src, p.dt, C,
                             p.i};
        const row_source dst{pl.dst_direct, user_view(args.dst, p.dst), args.dst, &p.dst, p.dt, C,
                             p.o};
        grouped_bwd_weights<CG>(pl, src, dst, args.out, nblocks);
        return;
    }
    const bool src_out = p.dir == conv_direction::bwd_data, dst_out = p.dir == conv_direction::fwd;
    scratch w(nblocks * p.ksp() * CG * W);
    grouped_pack_weights(p, nthr, args.wei, src_out, CG, nblocks, w.p);
    scratch bias(p.with_bias ? C + W : 0);
    if (p.with_bias) pack_bias(p, args.bias, C, bias.p);
    const float *bp = p.with_bias ? bias.p : nullptr;
    // Like the direct kernel: copied operands are streamed in chunks of images. Every output
    // row is computed on its own, so the chunking does not change any result. A bf16/f16 output
    // with contiguous channels is rounded in place (the plan's out_rounded_in_kernel).
    const bool rounded = pl.out_rounded_in_kernel;
    for (dim_t n0 = 0; n0 < p.mb; n0 += pl.images_per_chunk) {
        const direct_plan plc = chunk_plan(pl, n0);
        const dim_t nb = plc.p.mb;
        const data_operand src_op(p, nthr, pl.src_direct || (src_out && rounded),
                                  src_out ? args.out : args.src, p.src, C, p.i, !src_out, n0, nb);
        const data_operand dst_op(p, nthr, pl.dst_direct || (dst_out && rounded),
                                  dst_out ? args.out : args.dst, p.dst, C, p.o, !dst_out, n0, nb);
        if (dst_out && rounded) {
            const auto out = user_view<uint16_t>(image_at(args.out, p.dst, p.dt, n0), p.dst);
            grouped_fwd<CG>(plc, src_op.v, out, w.p, bp, nblocks);
        } else if (dst_out) {
            grouped_fwd<CG>(plc, src_op.v, dst_op.v, w.p, bp, nblocks);
            dst_op.store(nthr);
        } else if (rounded) {
            const auto out = user_view<uint16_t>(image_at(args.out, p.src, p.dt, n0), p.src);
            grouped_bwd_data<CG>(plc, out, dst_op.v, w.p, bp, nblocks);
        } else {
            grouped_bwd_data<CG>(plc, src_op.v, dst_op.v, w.p, bp, nblocks);
            src_op.store(nthr);
        }
    }
}

void run_grouped(const direct_plan &pl, const conv_args &args) {
    switch (pl.p.icg) {
        case 1: run_grouped_cg<1>(pl, args); break;
        case 2: run_grouped_cg<2>(pl, args); break;
        case 4: run_grouped_cg<4>(pl, args); break;
        case 8: run_grouped_cg<8>(pl, args); break;
        default: break;
    }
}
