// bwd_weights of the depthwise kernel (kernels/dw_kernels.hpp):
//   dW[c][tap] = sum over (n, od, oh, ow) of dst[n][od][oh][ow][c] * src[n][id][ih][iw][c].
// Each thread sums the rows (n, od, oh) of a static split into its own f32 partial weights
// [tap][cpad]; a second region adds the partials in thread order and rounds once, so results
// repeat bit for bit with the same thread count. With planes (dw_planes.hpp) the partials are
// [plane][tap][cpad] and src is read a chunk of planes at a time. Included after dw_planes.hpp.

constexpr int dw_kb_max = 4;  // taps along w per register tile (x up to 2 channel vectors)

// The most lines of new src rows fetched ahead per step of the weight gradient (dw_bww_images);
// beyond it, the next row is left to the hardware. Measured on Zen 3 (2 threads, alternated
// pairs): MobileNetV2's 3x3 ran 1.4-1.6x faster fetching its one new row (19 lines per step),
// while its stride-2 layer in f32 (2 rows of 112 pixels, 150 lines per step) ran 0.80x with
// them, its steps' own loads waiting behind the prefetches; the x2 upsampler's
// ConvTransposeBackwardWeights (56 lines) was the same either way. On Zen 5 (2 threads, 3
// alternated rounds) the stride-2 layer in bf16 and f16 (76 lines) ran 1.1-1.4x faster with
// them (bf16 3.75-3.88 -> 2.58-2.96 ms), where the limit was 48; f32 again 0.8-0.9x at 160.
// Rows fetched into L2 (dw_plan::fetch_to_l2) have no limit: that f32 layer ran 1.2x faster
// with its 150 lines a step fetched into L2 than with none (Zen 4, 2 threads, 5 alternated
// rounds: 9.8-11.6 -> 8.2-9.3 ms).
constexpr dim_t dw_bww_ahead_lines = 96;

// One (kd, kh) row of taps, taps [kw0, kw0 + KB) of it, channels [c0, c0 + NV*W): the
// accumulators of the KB taps run along the outputs that read inside the row for all of them,
// then each tap alone finishes its own border outputs. Adds into P (at tap kw0, channel c0).
// Not inlined: GCC 12 inlined it into dw_bww_images' row loop once that loop walked a list of
// rows, and MobileNetV2's stride-2 weight gradient took 15.5 ms instead of 10.9 (Zen 3).
// HEAD: the first vector starts before channel 0 (dw_lane_shift), its lanes of mh loaded.
template <int DT, int NV, bool TAIL, bool HEAD, int KB>
[[gnu::noinline]] static void dw_bww_taps(const conv_problem &p,
                                          const typename dw_elem<DT>::T *drow,
                                          const typename dw_elem<DT>::T *srow, dim_t dps, dim_t sps,
                                          dim_t kw0, const dim_t *lo_all, const dim_t *hi_all,
                                          float *P, dim_t cpad, int n, mask_t mk, mask_t mh) {
    using T = typename dw_elem<DT>::T;
    const dim_t s = p.s[2];
    const dim_t *lo = lo_all + kw0, *hi = hi_all + kw0;
    dim_t off[KB];
    for (int k = 0; k < KB; ++k) off[k] = (kw0 + k) * p.dl[2] - p.pb[2];
    // Offsets grow with k: the first tap has the latest start, the last the earliest end.
    // Pixels are addressed by their index in the row, ow * s + off[k], which is inside it for
    // every output a tap reads; ow * s * sps and off[k] * sps alone overflowed with a stride and
    // pads near 2^60 (UBSan), though their sum is a real address.
    const dim_t blo = lo[0], bhi = imax(blo, hi[KB - 1]);
    // U independent sets of accumulators along ow (summed in a fixed order at the end): more
    // FMA chains in flight than KB * NV alone, where the registers allow.
    constexpr int U = 2 * (KB * NV + NV) <= (W >= 16 ? 30 : 14) ? 2 : 1;
    V acc[KB][NV], acc2[KB][NV];
#pragma GCC unroll 4
    for (int k = 0; k < KB; ++k)
#pragma GCC unroll 4
        for (int v = 0; v < NV; ++v) acc[k][v] = acc2[k][v] = vt::zero();
    dim_t ow = blo;
    if constexpr (U == 2) {
        // bf16/f16, undilated taps at a stride S below KB: the two outputs' windows overlap,
        // output ow + 1 reading at tap k the pixel output ow reads at tap k + S. Each of the
        // KB + S pixels is loaded and widened once for both, not 2 * KB times (MobileNetV2's
        // 3x3: 4 or 5 instead of 6; the x2 upsampler's 4 taps at stride 2: 6 instead of 8).
        // Every accumulator takes the same products in the same order, so the same bits. Not
        // f32, whose loads fold into the FMAs: measured on Zen 5 (1 thread, alternated), the
        // f32 weight gradients ran as fast or slower with shared loads (MobileNetV2's stride-2
        // layer 1.08x slower), where bf16 ran 1.15x (3x3) and 1.1x (x2 upsampler) faster.
        auto pairs = [&]<int S>() {
            for (; ow + 2 <= bhi; ow += 2) {
                V d[NV], d2[NV];
                const T *dp = drow + ow * dps;
#pragma GCC unroll 4
                for (int v = 0; v < NV; ++v) {
                    d[v] = dw_load_v<DT, NV, TAIL, HEAD>(dp + v * W, v, n, mk, mh);
                    d2[v] = dw_load_v<DT, NV, TAIL, HEAD>(dp + dps + v * W, v, n, mk, mh);
                }
                if constexpr (S > 0) {
                    const T *x0 = srow + (ow * s + off[0]) * sps;  // (ow, tap 0)
#pragma GCC unroll 8
                    for (int j = 0; j < KB + S; ++j)
#pragma GCC unroll 4
                        for (int v = 0; v < NV; ++v) {
                            const V x = dw_load_v<DT, NV, TAIL, HEAD>(x0 + j * sps + v * W, v, n,
                                                                     mk, mh);
                            if (j < KB) acc[j][v] = vt::fma(d[v], x, acc[j][v]);
                            if (j >= S) acc2[j - S][v] = vt::fma(d2[v], x, acc2[j - S][v]);
                        }
                } else {
#pragma GCC unroll 4
                    for (int k = 0; k < KB; ++k)
#pragma GCC unroll 4
                        for (int v = 0; v < NV; ++v) {
                            const T *x = srow + (ow * s + off[k]) * sps + v * W;
                            const T *x2 = srow + ((ow + 1) * s + off[k]) * sps + v * W;
                            acc[k][v] = vt::fma(d[v], dw_load_v<DT, NV, TAIL, HEAD>(x, v, n, mk, mh),
                                                acc[k][v]);
                            acc2[k][v] = vt::fma(
                                d2[v], dw_load_v<DT, NV, TAIL, HEAD>(x2, v, n, mk, mh), acc2[k][v]);
                        }
                }
            }
        };
        const bool undilated = p.dl[2] == 1;
        if constexpr (DT != dw_f32 && KB >= 2) {
            if (undilated && s == 1) pairs.template operator()<1>();
        }
        if constexpr (DT != dw_f32 && KB >= 3) {
            if (undilated && s == 2) pairs.template operator()<2>();
        }
        pairs.template operator()<0>();  // (the rest, or all: nothing left after the above)
    }
    for (; ow < bhi; ++ow) {
        V d[NV];
        const T *dp = drow + ow * dps;
#pragma GCC unroll 4
        for (int v = 0; v < NV; ++v) d[v] = dw_load_v<DT, NV, TAIL, HEAD>(dp + v * W, v, n, mk, mh);
#pragma GCC unroll 4
        for (int k = 0; k < KB; ++k)
#pragma GCC unroll 4
            for (int v = 0; v < NV; ++v)
                acc[k][v] = vt::fma(d[v],
                                    dw_load_v<DT, NV, TAIL, HEAD>(
                                        srow + (ow * s + off[k]) * sps + v * W, v, n, mk, mh),
                                    acc[k][v]);
    }
    if constexpr (U == 2) {
#pragma GCC unroll 4
        for (int k = 0; k < KB; ++k)
#pragma GCC unroll 4
            for (int v = 0; v < NV; ++v) acc[k][v] = vt::add(acc[k][v], acc2[k][v]);
    }
#pragma GCC unroll 4
    for (int k = 0; k < KB; ++k) {
        auto one = [&](dim_t ow) {
            const T *dp = drow + ow * dps, *sp = srow + (ow * s + off[k]) * sps;
#pragma GCC unroll 4
            for (int v = 0; v < NV; ++v)
                acc[k][v] =
                    vt::fma(dw_load_v<DT, NV, TAIL, HEAD>(dp + v * W, v, n, mk, mh),
                            dw_load_v<DT, NV, TAIL, HEAD>(sp + v * W, v, n, mk, mh), acc[k][v]);
        };
        if (blo < bhi) {
            for (dim_t ow = lo[k]; ow < blo; ++ow) one(ow);
            for (dim_t ow = bhi; ow < hi[k]; ++ow) one(ow);
        } else {
            for (dim_t ow = lo[k]; ow < hi[k]; ++ow) one(ow);
        }
        float *pk = P + k * cpad;
#pragma GCC unroll 4
        for (int v = 0; v < NV; ++v)
            vt::store(pk + v * W, vt::add(vt::load(pk + v * W), acc[k][v]));
    }
}

template <int DT, int NV, bool TAIL, bool HEAD>
static void dw_bww_row(const conv_problem &p, const typename dw_elem<DT>::T *drow,
                       const typename dw_elem<DT>::T *srow, dim_t dps, dim_t sps, const dim_t *lo,
                       const dim_t *hi, float *P, dim_t cpad, int n, mask_t mk, mask_t mh) {
    for (dim_t kw0 = 0; kw0 < p.k[2]; kw0 += dw_kb_max) {
        float *pk = P + kw0 * cpad;
        switch (imin(dw_kb_max, p.k[2] - kw0)) {
            case 1:
                dw_bww_taps<DT, NV, TAIL, HEAD, 1>(p, drow, srow, dps, sps, kw0, lo, hi, pk, cpad,
                                                   n, mk, mh);
                break;
            case 2:
                dw_bww_taps<DT, NV, TAIL, HEAD, 2>(p, drow, srow, dps, sps, kw0, lo, hi, pk, cpad,
                                                   n, mk, mh);
                break;
            case 3:
                dw_bww_taps<DT, NV, TAIL, HEAD, 3>(p, drow, srow, dps, sps, kw0, lo, hi, pk, cpad,
                                                   n, mk, mh);
                break;
            default:
                dw_bww_taps<DT, NV, TAIL, HEAD, 4>(p, drow, srow, dps, sps, kw0, lo, hi, pk, cpad,
                                                   n, mk, mh);
                break;
        }
    }
}

// The first channel group of a row whose vectors are shifted (f32): its first vector masked to
// the pixel's channels (never the tail as well: dw_lane_shift leaves channel W - 1 to it).
template <int DT>
static void dw_bww_head_row(const conv_problem &p, const typename dw_elem<DT>::T *drow,
                            const typename dw_elem<DT>::T *srow, dim_t dps, dim_t sps,
                            const dim_t *lo, const dim_t *hi, float *P, dim_t cpad, int nv,
                            bool tail, int n, mask_t mk, mask_t mh) {
    if constexpr (DT == dw_f32) {
        if (nv == 2 && !tail)
            dw_bww_row<DT, 2, false, true>(p, drow, srow, dps, sps, lo, hi, P, cpad, n, mk, mh);
        else if (nv == 2)
            dw_bww_row<DT, 2, true, true>(p, drow, srow, dps, sps, lo, hi, P, cpad, n, mk, mh);
        else
            dw_bww_row<DT, 1, false, true>(p, drow, srow, dps, sps, lo, hi, P, cpad, n, mk, mh);
    }
}

// Images [0, mb) of src and dst (image 0 of the views first) into the threads' partials,
// a chunk of planes at a time.
template <int DT>
static void dw_bww_images(const dw_plan &pl, const dw_view<const typename dw_elem<DT>::T> &src,
                          const dw_view<const typename dw_elem<DT>::T> &dst, dim_t mb,
                          const std::vector<dim_t> &lo, const std::vector<dim_t> &hi, dim_t cpad,
                          int shift, float *partials, dim_t part,
                          const dw_plane_room<typename dw_elem<DT>::T> &room) {
    using T = typename dw_elem<DT>::T;
    const conv_problem &p = pl.p;
    // (The views start `shift` elements before channel 0: dw_lane_shift.)
    const dim_t nvec = cpad / W, C = pl.lanes + shift;
    const int n = int(C - (nvec - 1) * W);
    const mask_t mk = vt::mask(n), mh = dw_head_mask(shift);
    const bool tail = n < W;
    const dim_t nrt = p.k[0] * p.k[1] * pl.planes, groups = div_up(nvec, dw_nv_max);
    // Per thread: the src rows of the current and of the next output row with their taps' first
    // weights, the next row's new ones.
    std::vector<const T *> rows_mem(size_t(pl.nthr * 3 * nrt));
    std::vector<dim_t> wrows_mem(size_t(pl.nthr * 2 * nrt));
    // Bytes of a src and of a dst row's pixels (in double: see dw_run_lines).
    auto span = [&](dim_t w, dim_t ps) {
        const double b =
            w > 0 ? (double(w - 1) * double(ps) + double(C)) * double(sizeof(T)) + 63.0 : 0.0;
        return b < 0x1p62 ? dim_t(b) : dim_t(1) << 62;
    };
    for (dim_t n0 = 0; n0 < mb; n0 += pl.chunk) {
        const dim_t nb = imin(pl.chunk, mb - n0);
        const dw_planes_view<T> in = dw_chunk_planes(pl, src, p.i, n0, nb, room);
        const dim_t src_bytes = span(p.i[2], in.v.w), dst_bytes = span(p.o[2], dst.w);
        const dim_t rows = nb * p.o[0] * p.o[1];
        auto at = [&](dim_t row, dim_t &nn, dim_t &od, dim_t &oh) {
            oh = row % p.o[1], od = (row / p.o[1]) % p.o[0], nn = row / (p.o[1] * p.o[0]);
        };
        parallel(pl.nthr, [&](int ithr, int nt) {
            float *P = partials + ithr * part;
            const T **cur = rows_mem.data() + ithr * 3 * nrt, **next = cur + nrt,
                    **fresh = next + nrt;
            dim_t *wcur = wrows_mem.data() + ithr * 2 * nrt, *wnext = wcur + nrt;
            const T *next_dst = nullptr;
            dim_t s, e, nn, od, oh;
            split(rows, nt, ithr, s, e);
            int nc = 0;
            if (s < e) {
                at(s, nn, od, oh);
                nc = dw_input_rows<dw_fwd_reach>(p, in, nn, od, oh, cur, wcur);
            }
            for (dim_t row = s; row < e; ++row) {
                at(row, nn, od, oh);
                const T *drow_all = dst.at(n0 + nn, od, oh, 0);
                // The next row's dst row and the src rows this one does not read, fetched a
                // slice per step (a src row of a channel group) while this row computes, as the
                // lines of fwd and bwd_data do (dw_ahead): MobileNetV2's 3x3 weight gradient
                // waited on those loads.
                dw_ahead<T> sa, da;
                int nx = 0;
                if (row + 1 < e) {
                    dim_t n1, d1, h1;
                    at(row + 1, n1, d1, h1);
                    nx = dw_input_rows<dw_fwd_reach>(p, in, n1, d1, h1, next, wnext);
                    for (int r = 0; r < nx; ++r) {
                        bool seen = false;
                        for (int c = 0; c < nc && !seen; ++c) seen = cur[c] == next[r];
                        if (!seen) fresh[sa.nrows++] = next[r];
                    }
                    next_dst = dst.at(n0 + n1, d1, h1, 0);
                    const dim_t steps = groups * imax(nc, 1);
                    sa.rows = fresh;
                    sa.bytes = src_bytes;
                    sa.per_step = div_up(div_up(src_bytes, steps), 64) * 64;
                    da.rows = &next_dst;
                    da.nrows = 1;
                    da.bytes = dst_bytes;
                    da.per_step = div_up(div_up(dst_bytes, steps), 64) * 64;
                    sa.l2 = da.l2 = pl.fetch_to_l2;
                    if (!pl.fetch_to_l2 && sa.per_step * sa.nrows > dw_bww_ahead_lines * 64)
                        sa.nrows = da.nrows = 0;
                }
                // Channel groups outermost: their part of the dst row stays in L1 across the
                // taps.
                for (dim_t v0 = 0; v0 < nvec; v0 += dw_nv_max) {
                    const dim_t c0 = v0 * W;
                    const bool last_tail = v0 + dw_nv_max >= nvec && tail;
                    const int nv = int(imin(dw_nv_max, nvec - v0));
                    const T *drow = drow_all + c0;
                    for (int r = 0; r < nc; ++r) {
                        sa.step();
                        da.step();
                        const T *srow = cur[r] + c0;
                        float *pt = P + wcur[r] * cpad + c0;
                        if (v0 == 0 && shift > 0)
                            dw_bww_head_row<DT>(p, drow, srow, dst.w, in.v.w, lo.data(), hi.data(),
                                                pt, cpad, nv, last_tail, n, mk, mh);
                        else if (nv == 2 && !last_tail)
                            dw_bww_row<DT, 2, false, false>(p, drow, srow, dst.w, in.v.w, lo.data(),
                                                            hi.data(), pt, cpad, n, mk, mh);
                        else if (nv == 2)
                            dw_bww_row<DT, 2, true, false>(p, drow, srow, dst.w, in.v.w, lo.data(),
                                                           hi.data(), pt, cpad, n, mk, mh);
                        else if (!last_tail)
                            dw_bww_row<DT, 1, false, false>(p, drow, srow, dst.w, in.v.w, lo.data(),
                                                            hi.data(), pt, cpad, n, mk, mh);
                        else
                            dw_bww_row<DT, 1, true, false>(p, drow, srow, dst.w, in.v.w, lo.data(),
                                                           hi.data(), pt, cpad, n, mk, mh);
                    }
                }
                std::swap(cur, next);
                std::swap(wcur, wnext);
                nc = nx;
            }
        });
    }
}

// `views(n0, nb, body)` calls body(src, dst) with views of images [n0, n0 + nb) (image n0
// first): the tensors themselves, or channels-last copies of that chunk (NCX, plan
// ncx_chunk images at a time; `outer` is that chunk, the batch when nothing is copied).
template <int DT, class Views>
static void dw_bwd_weights(const dw_plan &pl, dim_t outer, const Views &views, dim_t cpad,
                           int shift, void *user_w) {
    using T = typename dw_elem<DT>::T;
    const conv_problem &p = pl.p;
    const dim_t ksp = p.ksp(), C = pl.lanes, part = pl.planes * ksp * cpad;
    // The outputs ow each kw reads inside the row, [lo, hi): once, not per row (divisions).
    std::vector<dim_t> lo(size_t(p.k[2])), hi(size_t(p.k[2]));
    for (dim_t kw = 0; kw < p.k[2]; ++kw) {
        tap_w_range(p, kw, lo[size_t(kw)], hi[size_t(kw)]);
        hi[size_t(kw)] = imax(lo[size_t(kw)], hi[size_t(kw)]);
    }
    scratch partials(pl.nthr * part);
    const dw_plane_room<T> room(pl, p.i);
    parallel(pl.nthr, [&](int ithr, int) {
        float *P = partials.p + ithr * part;
        for (dim_t x = 0; x < part; ++x) P[x] = 0.f;
    });
    // dst is read in place (its lanes are the weights' oc = g*ocg + j); src a chunk of planes
    // at a time (plane i at lane g*ocg + j: src channel g*icg + i).
    for (dim_t c0 = 0; c0 < p.mb; c0 += outer)
        views(c0, imin(outer, p.mb - c0),
              [&](const dw_view<const T> &src, const dw_view<const T> &dst) {
                  dw_bww_images<DT>(pl, src, dst, imin(outer, p.mb - c0), lo, hi, cpad, shift,
                                    partials.p, part, room);
              });
    // The partials in thread order, rounded once: lane shift + c of plane i is w[oc = c][i].
    parallel(pl.nthr, [&](int ithr, int nt) {
        const weights_layout &l = p.wei;
        dim_t xs, xe;
        split(C * pl.planes * ksp, nt, ithr, xs, xe);
        for (dim_t x = xs; x < xe; ++x) {
            const dim_t c = x / (pl.planes * ksp), pt = x % (pl.planes * ksp);
            const dim_t t = pt % ksp, pp = pt / ksp;
            const dim_t kw = t % p.k[2], kh = (t / p.k[2]) % p.k[1], kd = t / (p.k[2] * p.k[1]);
            float sum = partials.p[pt * cpad + shift + c];
            for (int q = 1; q < pl.nthr; ++q) sum += partials.p[q * part + pt * cpad + shift + c];
            store_elem(p.dt, user_w,
                       dw_weight_offset(p, c, pp) + kd * l.sp[0] + kh * l.sp[1] + kw * l.sp[2],
                       sum);
        }
    });
}
