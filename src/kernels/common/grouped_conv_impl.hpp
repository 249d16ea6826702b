// Grouped and depthwise convolution with few channels per group (ICg == OCg == cg, cg a divisor
// of the vector width W and smaller than it). The general kernel would fill only cg of W lanes;
// here the lanes are the channels of W/cg whole groups at once, one vector load per pixel.
// - fwd and bwd_data: the lanes are the input side's channels. Per output pixel, cg vectors of
//   sums acc[j] hold in lane l the products for output channel j of l's group, one FMA per
//   tap and j with no lane movement; then grouped_reduce adds each group's lanes of acc[j]
//   into its lane j (log2 cg steps of blends, an in-lane swap and an add).
// - bwd_weights: the lanes are src's channels, and a permutation per diff_dst pixel and output
//   channel of the group serves a register group of taps (below).
// fwd and bwd_data run grouped_schedule.hpp's loops over the lanes policy grouped_f32_lanes.
// Included after direct_conv_impl.hpp, grouped_reduce.hpp and grouped_schedule.hpp in an ISA's
// namespace; needs vt::perm_t, vt::perm_index(cg, i), vt::permute(v, idx).

struct gplan_view {
    const conv_problem *p;
    dim_t cg, C, nblocks;  // channels per group, all channels, W-blocks of channels
};

// The products of input vector x (lanes: input channels) with a tap's packed weights [j][W],
// into acc[j] (output channel j of each lane's group), the weights read by the FMAs from L1.
template <int CG>
static inline void grouped_fma(V x, const float *w, V (&acc)[CG]) {
#pragma GCC unroll 8
    for (int j = 0; j < CG; ++j) acc[j] = vt::fma(x, vt::load(w + j * W), acc[j]);
}
// The same for a tile of GM pixels at once, whose inputs x are in registers, each weight vector
// loaded once for all of them (in a register: GCC would otherwise hoist every j's weights, and
// with 32 registers spilled an accumulator of the 3 x 8 tile to the stack, whose load and store
// around each FMA took a third of the time on ResNeXt's 3x3). With 16 registers the tile's
// inputs and sums would not fit: one pixel at a time (grouped_fma).
template <int CG, int GM>
static inline void grouped_fma_tile(const V (&x)[GM], const float *w, V (&acc)[GM][CG]) {
    if constexpr (W >= 16) {
#pragma GCC unroll 8
        for (int j = 0; j < CG; ++j) {
            V wj = vt::load(w + j * W);
            if constexpr (vt::in_register) asm("" : "+v"(wj));
#pragma GCC unroll 8
            for (int q = 0; q < GM; ++q) acc[q][j] = vt::fma(x[q], wj, acc[q][j]);
        }
    } else {
#pragma GCC unroll 8
        for (int q = 0; q < GM; ++q) grouped_fma<CG>(x[q], w, acc[q]);
    }
}

// Output pixels per register tile: cg sums each, within 24 of the 32 registers (12 of AVX2's 16).
template <int CG>
constexpr int grouped_tile() {
    constexpr int fit = (W >= 16 ? 24 : 12) / CG;
    return CG == 1 || fit > 8 ? 8 : fit;
}

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

// The f32 lanes (grouped_schedule.hpp's policy): a channel per lane, W/cg groups per vector,
// packed weights [block][tap][j][W]. CE of finish: the output's element (float, or bf16/f16
// bits rounded in place, direct_plan::out_rounded_in_kernel).
template <int CG>
struct grouped_f32_lanes {
    using in_t = float;
    static constexpr int gm = grouped_tile<CG>(), cg = CG;
    static constexpr dim_t cb = W;
    const float *wp, *bias;
    dim_t ksp;
    data_type dt;
    static dim_t block_bytes(const conv_problem &p) { return p.ksp() * CG * W * dim_t(sizeof(float)); }
    const float *weights(dim_t b, dim_t t) const { return wp + ((b * ksp + t) * CG) * W; }
    static mask_t mask(int nc) { return vt::mask(nc); }
    static inline void tile(const float *x, dim_t step, mask_t mk, const float *w, V (&acc)[gm][CG]) {
        V xv[gm];
#pragma GCC unroll 8
        for (int q = 0; q < gm; ++q) xv[q] = vt::load_mask(x + q * step, mk);
        grouped_fma_tile<CG, gm>(xv, w, acc);
    }
    static inline void one(const float *x, mask_t mk, const float *w, V (&acc)[CG]) {
        grouped_fma<CG>(vt::load_mask(x, mk), w, acc);
    }
    template <typename CE>
    inline void finish(const V (&acc)[CG], dim_t c0, int nc, CE *o) const {
        const mask_t mk = vt::mask(nc);
        const V sum = grouped_reduce<CG>(acc);
        grouped_store(o, bias ? vt::add(sum, vt::load_mask(bias + c0, mk)) : sum, mk, nc, dt);
    }
};

// bwd_weights (CG = cg): dW[oc][icg][tap] = sum_pix dst[pix][oc] * src[pix'][group(oc) base + icg].
// The lanes are the src side: lane l of block b is input channel l % cg of group (b*W + l) / cg.
// Per diff_dst pixel, one permutation per output channel j of the group brings every lane its
// group's diff_dst channel j, and serves a whole group of taps at once, whose sums (taps x
// channels vectors) stay in registers along the row. (Permuting src instead, once per pixel
// and tap, kept the permutations level with the FMAs on the shuffle port: 1.4x slower on
// ResNeXt's 3x3.) The taps read a zero-bordered copy of a run of rows' src rows of the block
// (shared by the run's rows through the taps along h), so no tap checks bounds.
// Per-thread partial sums [block][tap][j][W] (lane l: dW[oc = group base + j][icg = l % cg]),
// reduced in a fixed order.
constexpr int gbw_taps = W >= 16 ? 9 : 4;  // taps per register group (AVX2: 16 registers)

// Where the weight gradient's copies read a data tensor: f32 rows (the user's, or chunks that
// row_source converted), or the user's bf16/f16 rows with contiguous channels, widened by the
// copy itself (converting them first would be one more pass over the tensor through memory).
struct grouped_pixels {
    const row_source *rows;  // f32 rows; null: the user's 16-bit rows
    tview<uint16_t> u16;
    data_type dt;
    const void *row(dim_t n, dim_t d, dim_t h) const {
        return rows ? static_cast<const void *>(rows->row(n, d, h)) : u16.at(n, d, h, 0);
    }
    // Channel block b of pixel w of a row into out: W floats, those past C zero.
    void load_block(const void *row, dim_t w, dim_t b, dim_t C, float *out) const {
        const dim_t c0 = b * W, nc = imin(W, C - c0);
        if (rows) {
            const float *x = static_cast<const float *>(row) + w * rows->pixel_stride() + c0;
            vt::store(out, vt::load_mask(x, vt::mask(int(nc))));
            return;
        }
        if (nc < W) vt::store(out, vt::zero());
        vt::widen(dt, static_cast<const uint16_t *>(row) + w * u16.w + c0, out, nc);
    }
};

// The zero-bordered src rows of one block that a run of diff_dst rows [oh0, oh0 + nr) of plane
// (n, od) reads: [kd span][h span][wp][W], in padded coordinates (input index + front padding),
// so tap (kd, kh, kw) of output pixel (oh0 + r, ow) is at box + tap_offset + (r*s1*wp + ow*s2)*W.
// The run's diff_dst rows of the block are copied too, dense: a channels-last row's pixels of
// one block lie a row of channels apart (1 KiB for 256), so in place they would all fall in a
// few sets of L1 and evict each other between the passes over them. All blocks are filled in
// one pass over the run's pixels, which reads each pixel's channels in order (block by block,
// the loads ran a row of channels apart and waited on memory).
struct grouped_box {
    dim_t bd, bh, wp;  // extents along d, h, w
    grouped_box(const conv_problem &p, dim_t nr)
        : bd((p.k[0] - 1) * p.dl[0] + 1), bh((nr - 1) * p.s[1] + (p.k[1] - 1) * p.dl[1] + 1),
          wp((p.o[2] - 1) * p.s[2] + (p.k[2] - 1) * p.dl[2] + 1) {}
    // grouped_why_not declines problems whose one-row box outgrows both L2 and 4x the src image,
    // and the run is grown only while its box fits L1 (grouped_bwd_weights_run, in double), so
    // this product fits a dim_t.
    dim_t floats() const { return bd * bh * wp * W; }
    dim_t tap_offset(const conv_problem &p, dim_t t) const {
        const dim_t kw = t % p.k[2], kh = (t / p.k[2]) % p.k[1], kd = t / (p.k[2] * p.k[1]);
        return ((kd * p.dl[0] * bh + kh * p.dl[1]) * wp + kw * p.dl[2]) * W;
    }
    // Fills the rows some tap reads of blocks [b0, b1) (the others stay unread: their src rows
    // may not be in a converted chunk); positions outside the input are zero. Block b's box is
    // at box + (b - b0) * bstride.
    void fill(const conv_problem &p, const grouped_pixels &src, dim_t n, dim_t od, dim_t oh0, dim_t nr,
              dim_t C, dim_t b0, dim_t b1, float *box, dim_t bstride) const {
        for (dim_t kd = 0; kd < p.k[0]; ++kd)
            for (dim_t y = 0; y < bh; ++y) {
                bool read = false;
                for (dim_t kh = 0; kh < p.k[1] && !read; ++kh) {
                    const dim_t q = y - kh * p.dl[1];
                    read = q >= 0 && q % p.s[1] == 0 && q / p.s[1] < nr;
                }
                if (!read) continue;
                float *o = box + (kd * p.dl[0] * bh + y) * wp * W;
                const dim_t id = od * p.s[0] + kd * p.dl[0] - p.pb[0], ih = oh0 * p.s[1] + y - p.pb[1];
                const bool row_in = id >= 0 && id < p.i[0] && ih >= 0 && ih < p.i[1];
                const void *srow = row_in ? src.row(n, id, ih) : nullptr;
                for (dim_t x = 0; x < wp; ++x) {
                    const dim_t iw = x - p.pb[2];
                    const bool in = row_in && iw >= 0 && iw < p.i[2];
                    for (dim_t b = b0; b < b1; ++b) {
                        float *out = o + (b - b0) * bstride + x * W;
                        if (in)
                            src.load_block(srow, iw, b, C, out);
                        else
                            vt::store(out, vt::zero());
                    }
                }
            }
    }
    // The run's diff_dst rows of blocks [b0, b1): [nr][o2][W] at out + (b - b0) * bstride.
    static void fill_dst(const conv_problem &p, const grouped_pixels &dst, dim_t n, dim_t od, dim_t oh0,
                         dim_t nr, dim_t C, dim_t b0, dim_t b1, float *out, dim_t bstride) {
        for (dim_t r = 0; r < nr; ++r) {
            const void *drow = dst.row(n, od, oh0 + r);
            for (dim_t ow = 0; ow < p.o[2]; ++ow)
                for (dim_t b = b0; b < b1; ++b)
                    dst.load_block(drow, ow, b, C, out + (b - b0) * bstride + (r * p.o[2] + ow) * W);
        }
    }
};

// One register group: taps [t0, t0 + nt) (nt <= NT; the missing ones repeat tap t0 and are not
// stored) and output channels [j0, j0 + NJ) of the group, over the run's rows, added into P.
template <int CG, int NT, int NJ>
static void grouped_bwd_weights_group(const conv_problem &p, const grouped_box &g, const float *box,
                                      const float *drows, dim_t nr, dim_t c0, dim_t t0, int nt,
                                      int j0, const typename vt::perm_t *perm, float *P) {
    dim_t toff[NT];
    for (int t = 0; t < NT; ++t) toff[t] = g.tap_offset(p, t0 + (t < nt ? t : 0));
    typename vt::perm_t pj[NJ];
    for (int j = 0; j < NJ; ++j) pj[j] = perm[j0 + j];
    // (One output pixel per row: the stride may be beyond any image, and is never stepped.)
    const dim_t sstep = p.o[2] > 1 ? p.s[2] * W : 0, ksp = p.ksp(), b = c0 / W;
    for (dim_t r = 0; r < nr; ++r) {
        // Every index into acc is a constant after unrolling, so acc stays in registers.
        V acc[NT][NJ];
#pragma GCC unroll 9
        for (int t = 0; t < NT; ++t)
#pragma GCC unroll 2
            for (int j = 0; j < NJ; ++j) acc[t][j] = vt::zero();
        const float *drow = drows + r * p.o[2] * W;
        const float *sp = box + r * p.s[1] * g.wp * W;
        for (dim_t ow = 0; ow < p.o[2]; ++ow, sp += sstep) {
            const V dv = vt::load(drow + ow * W);
            V dp[NJ];
#pragma GCC unroll 2
            for (int j = 0; j < NJ; ++j) dp[j] = CG == 1 ? dv : vt::permute(dv, pj[j]);
#pragma GCC unroll 9
            for (int t = 0; t < NT; ++t) {
                V sv = vt::load(sp + toff[t]);
                // One load per tap, in a register: GCC would otherwise fold it into each FMA,
                // and the loads (with the permutations') would rival the FMAs (5% here).
                if constexpr (vt::in_register) asm("" : "+v"(sv));
#pragma GCC unroll 2
                for (int j = 0; j < NJ; ++j) acc[t][j] = vt::fma(dp[j], sv, acc[t][j]);
            }
        }
        // Added row by row, as the sums of each row: the bits do not depend on where runs (or
        // chunks of converted rows, or the layout) start and end.
#pragma GCC unroll 9
        for (int t = 0; t < NT; ++t)
#pragma GCC unroll 2
            for (int j = 0; j < NJ; ++j) {
                if (t >= nt) continue;
                float *pp = P + ((b * ksp + t0 + t) * CG + j0 + j) * W;
                vt::store(pp, vt::add(acc[t][j], vt::load(pp)));
            }
    }
}

// The floats of one block's box and diff_dst rows for runs of nr rows.
static dim_t grouped_block_floats(const conv_problem &p, dim_t nr) {
    return grouped_box(p, nr).floats() + nr * p.o[2] * W;
}
// The same in bytes, in double: the extents of a run grow by a stride per row, and strides,
// dilations and pads may reach the dim_t range.
static double grouped_block_bytes(const conv_problem &p, dim_t nr) {
    return grouped_box_bytes(p, nr, W) + double(nr) * double(p.o[2]) * W * double(sizeof(float));
}
// The most diff_dst rows of one plane per run whose box and rows of one block fit half of L1,
// and of all blocks half of L2.
static dim_t grouped_bwd_weights_run(const direct_plan &pl, dim_t nblocks) {
    const conv_problem &p = pl.p;
    const auto fits = [&](dim_t nr) {
        const double bytes = grouped_block_bytes(p, nr);
        return bytes <= double(pl.caches.l1d / 2) &&
               double(nblocks) * bytes <= double(pl.caches.l2 / 2);
    };
    dim_t nr = 1;
    while (nr < p.o[1] && fits(nr + 1)) ++nr;
    return nr;
}
// The blocks filled in one pass: all, unless their boxes outgrow half of L2 (long rows, many
// channels), so the scratch stays near one block's rows.
static dim_t grouped_blocks_per_fill(const direct_plan &pl, dim_t nblocks, dim_t bstride) {
    return imax(1, imin(nblocks, pl.caches.l2 / 2 / (bstride * dim_t(sizeof(float)))));
}

template <int CG>
static void grouped_bwd_weights(const direct_plan &pl, const row_source &src0,
                                const row_source &dst0, bool src16, bool dst16, void *user_w,
                                dim_t nblocks) {
    const conv_problem &p = pl.p;
    const dim_t ksp = p.ksp(), C = p.g * CG, rows = p.mb * p.o[0] * p.o[1];
    const dim_t part = nblocks * ksp * CG * W;
    constexpr int NJ = CG < 2 ? CG : 2, NT = gbw_taps;
    scratch partials(pl.nthr * part);
    typename vt::perm_t perm[CG];
    for (int i = 0; i < CG; ++i) perm[i] = vt::perm_index(CG, i);
    const dim_t run = grouped_bwd_weights_run(pl, nblocks), bstride = grouped_block_floats(p, run);
    const dim_t bfill = grouped_blocks_per_fill(pl, nblocks, bstride);
    // Partial sums, then their fixed-order reduction: two regions (no barrier inside one).
    parallel(pl.nthr, [&](int ithr, int nt) {
        float *P = partials.p + ithr * part;
        for (dim_t x = 0; x < part; ++x) P[x] = 0.f;
        dim_t s, e;
        split(rows, nt, ithr, s, e);
        // Copied operands are converted per chunk of rows, like the direct kernel's bwd_weights.
        row_source src = src0, dst = dst0;
        const row_buffers bufs(p, src, dst, s, e, pl.rows_per_chunk);
        const grouped_pixels spx{src16 ? nullptr : &src, user_view<uint16_t>(src.user, p.src), p.dt};
        const grouped_pixels dpx{dst16 ? nullptr : &dst, user_view<uint16_t>(dst.user, p.dst), p.dt};
        scratch box(bfill * bstride);
        for (dim_t row = s, re; row < e; row = re) {
            const dim_t chunk_end = imin(e, s + ((row - s) / pl.rows_per_chunk + 1) * pl.rows_per_chunk);
            if ((row - s) % pl.rows_per_chunk == 0) row_buffers::convert(p, src, dst, row, chunk_end);
            // A run: rows of one plane (n, od), in one chunk.
            re = imin(imin(row + run, chunk_end), (row / p.o[1] + 1) * p.o[1]);
            const dim_t oh0 = row % p.o[1], od = (row / p.o[1]) % p.o[0], n = row / (p.o[1] * p.o[0]);
            const dim_t nr = re - row;
            const grouped_box g(p, nr);
            // Per block of a fill: its box, then its diff_dst rows.
            for (dim_t b0 = 0; b0 < nblocks; b0 += bfill) {
                const dim_t b1 = imin(nblocks, b0 + bfill);
                g.fill(p, spx, n, od, oh0, nr, C, b0, b1, box.p, bstride);
                grouped_box::fill_dst(p, dpx, n, od, oh0, nr, C, b0, b1, box.p + g.floats(), bstride);
                for (dim_t b = b0; b < b1; ++b) {
                    const float *bb = box.p + (b - b0) * bstride;
                    for (dim_t t0 = 0; t0 < ksp; t0 += NT)
                        for (int j0 = 0; j0 < CG; j0 += NJ)
                            grouped_bwd_weights_group<CG, NT, NJ>(p, g, bb, bb + g.floats(), nr, b * W, t0,
                                                                  int(imin(NT, ksp - t0)), j0, perm, P);
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
            const dim_t toff = kd * l.sp[0] + kh * l.sp[1] + kw * l.sp[2];
            // Lane ln holds input channel c % cg of its group, against output channel j.
            for (int j = 0; j < CG; ++j) {
                float sum = 0.f;
                for (int q = 0; q < nt; ++q) sum += partials.p[q * part + ((b * ksp + t) * CG + j) * W + ln];
                store_elem(p.dt, user_w, (c - c % CG + j) * l.oc + (c % CG) * l.ic + toff, sum);
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
        // bf16/f16 rows with contiguous channels are widened by the copies of the weight
        // gradient (grouped_pixels), so their row sources convert nothing (marked direct, and
        // read only through grouped_pixels).
        const bool low = p.dt != data_type::f32, src16 = low && p.src.c == 1, dst16 = low && p.dst.c == 1;
        const row_source src{pl.src_direct || src16, user_view(args.src, p.src), args.src, &p.src, p.dt,
                             C, p.i};
        const row_source dst{pl.dst_direct || dst16, user_view(args.dst, p.dst), args.dst, &p.dst, p.dt,
                             C, p.o};
        grouped_bwd_weights<CG>(pl, src, dst, src16, dst16, args.out, nblocks);
        return;
    }
    const bool src_out = p.dir == conv_direction::bwd_data, dst_out = p.dir == conv_direction::fwd;
    // The lanes are the input side's channels: fwd takes the transposed packing.
    scratch w(nblocks * p.ksp() * CG * W);
    grouped_pack_weights(p, nthr, !src_out, CG, nblocks, W, w.p,
                         [&](dim_t off) { return load_elem(p.dt, args.wei, off); });
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
        const grouped_f32_lanes<CG> ln{w.p, bp, p.ksp(), p.dt};
        if (dst_out && rounded) {
            const auto out = user_view<uint16_t>(image_at(args.out, p.dst, p.dt, n0), p.dst);
            grouped_fwd_rows(plc, ln, src_op.v, out, nblocks);
        } else if (dst_out) {
            grouped_fwd_rows(plc, ln, src_op.v, dst_op.v, nblocks);
            dst_op.store(nthr);
        } else if (rounded) {
            const auto out = user_view<uint16_t>(image_at(args.out, p.src, p.dt, n0), p.src);
            grouped_bwd_data_rows(plc, ln, out, dst_op.v, nblocks);
        } else {
            grouped_bwd_data_rows(plc, ln, src_op.v, dst_op.v, nblocks);
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
