// bwd_weights of the depthwise kernel (kernels/dw_kernels.hpp):
//   dW[c][tap] = sum over (n, od, oh, ow) of dst[n][od][oh][ow][c] * src[n][id][ih][iw][c].
// Each thread sums the rows (n, od, oh) of a static split into its own f32 partial weights
// [tap][cpad]; a second region adds the partials in thread order and rounds once, so results
// repeat bit for bit with the same thread count. With planes (dw_planes.hpp) the partials are
// [plane][tap][cpad] and src is read a chunk of planes at a time. Included after dw_planes.hpp.

constexpr int dw_kb_max = 4;  // taps along w per register tile (x up to 2 channel vectors)

// One (kd, kh) row of taps, taps [kw0, kw0 + KB) of it, channels [c0, c0 + NV*W): the
// accumulators of the KB taps run along the outputs that read inside the row for all of them,
// then each tap alone finishes its own border outputs. Adds into P (at tap kw0, channel c0).
template <int DT, int NV, bool TAIL, int KB>
static void dw_bww_taps(const conv_problem &p, const typename dw_elem<DT>::T *drow,
                        const typename dw_elem<DT>::T *srow, dim_t dps, dim_t sps, dim_t kw0,
                        const dim_t *lo_all, const dim_t *hi_all, float *P, dim_t cpad, int n,
                        mask_t mk) {
    using T = typename dw_elem<DT>::T;
    const dim_t s = p.s[2];
    const dim_t *lo = lo_all + kw0, *hi = hi_all + kw0;
    dim_t off[KB];
    for (int k = 0; k < KB; ++k) off[k] = (kw0 + k) * p.dl[2] - p.pb[2];
    // Offsets grow with k: the first tap has the latest start, the last the earliest end.
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
        for (; ow + 2 <= bhi; ow += 2) {
            V d[NV], d2[NV];
            const T *dp = drow + ow * dps;
#pragma GCC unroll 4
            for (int v = 0; v < NV; ++v) {
                d[v] = dw_load_v<DT, NV, TAIL>(dp + v * W, v, n, mk);
                d2[v] = dw_load_v<DT, NV, TAIL>(dp + dps + v * W, v, n, mk);
            }
            const T *sp = srow + ow * s * sps;
#pragma GCC unroll 4
            for (int k = 0; k < KB; ++k)
#pragma GCC unroll 4
                for (int v = 0; v < NV; ++v) {
                    const T *x = sp + off[k] * sps + v * W;
                    acc[k][v] = vt::fma(d[v], dw_load_v<DT, NV, TAIL>(x, v, n, mk), acc[k][v]);
                    acc2[k][v] =
                        vt::fma(d2[v], dw_load_v<DT, NV, TAIL>(x + s * sps, v, n, mk), acc2[k][v]);
                }
        }
    }
    for (; ow < bhi; ++ow) {
        V d[NV];
        const T *dp = drow + ow * dps;
#pragma GCC unroll 4
        for (int v = 0; v < NV; ++v) d[v] = dw_load_v<DT, NV, TAIL>(dp + v * W, v, n, mk);
        const T *sp = srow + ow * s * sps;
#pragma GCC unroll 4
        for (int k = 0; k < KB; ++k)
#pragma GCC unroll 4
            for (int v = 0; v < NV; ++v)
                acc[k][v] = vt::fma(
                    d[v], dw_load_v<DT, NV, TAIL>(sp + off[k] * sps + v * W, v, n, mk), acc[k][v]);
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
                acc[k][v] = vt::fma(dw_load_v<DT, NV, TAIL>(dp + v * W, v, n, mk),
                                    dw_load_v<DT, NV, TAIL>(sp + v * W, v, n, mk), acc[k][v]);
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

template <int DT, int NV, bool TAIL>
static void dw_bww_row(const conv_problem &p, const typename dw_elem<DT>::T *drow,
                       const typename dw_elem<DT>::T *srow, dim_t dps, dim_t sps, const dim_t *lo,
                       const dim_t *hi, float *P, dim_t cpad, int n, mask_t mk) {
    for (dim_t kw0 = 0; kw0 < p.k[2]; kw0 += dw_kb_max) {
        float *pk = P + kw0 * cpad;
        switch (imin(dw_kb_max, p.k[2] - kw0)) {
            case 1:
                dw_bww_taps<DT, NV, TAIL, 1>(p, drow, srow, dps, sps, kw0, lo, hi, pk, cpad, n, mk);
                break;
            case 2:
                dw_bww_taps<DT, NV, TAIL, 2>(p, drow, srow, dps, sps, kw0, lo, hi, pk, cpad, n, mk);
                break;
            case 3:
                dw_bww_taps<DT, NV, TAIL, 3>(p, drow, srow, dps, sps, kw0, lo, hi, pk, cpad, n, mk);
                break;
            default:
                dw_bww_taps<DT, NV, TAIL, 4>(p, drow, srow, dps, sps, kw0, lo, hi, pk, cpad, n, mk);
                break;
        }
    }
}

// Images [0, mb) of src and dst (image 0 of the views first) into the threads' partials,
// a chunk of planes at a time.
template <int DT>
static void dw_bww_images(const dw_plan &pl, const dw_view<const typename dw_elem<DT>::T> &src,
                          const dw_view<const typename dw_elem<DT>::T> &dst, dim_t mb,
                          const std::vector<dim_t> &lo, const std::vector<dim_t> &hi, dim_t cpad,
                          float *partials, dim_t part,
                          const dw_plane_room<typename dw_elem<DT>::T> &room) {
    using T = typename dw_elem<DT>::T;
    const conv_problem &p = pl.p;
    const dim_t ksp = p.ksp(), nvec = cpad / W, C = pl.lanes;
    const int n = int(C - (nvec - 1) * W);
    const mask_t mk = vt::mask(n);
    const bool tail = n < W;
    for (dim_t n0 = 0; n0 < mb; n0 += pl.chunk) {
        const dim_t nb = imin(pl.chunk, mb - n0);
        const dw_planes_view<T> in = dw_chunk_planes(pl, src, p.i, n0, nb, room);
        const dim_t rows = nb * p.o[0] * p.o[1];
        parallel(pl.nthr, [&](int ithr, int nt) {
            float *P = partials + ithr * part;
            dim_t s, e;
            split(rows, nt, ithr, s, e);
            for (dim_t row = s; row < e; ++row) {
                const dim_t oh = row % p.o[1], od = (row / p.o[1]) % p.o[0],
                            nn = row / (p.o[1] * p.o[0]);
                // Channel groups outermost: their part of the dst row stays in L1 across the
                // taps.
                for (dim_t v0 = 0; v0 < nvec; v0 += dw_nv_max) {
                    const dim_t c0 = v0 * W;
                    const bool last_tail = v0 + dw_nv_max >= nvec && tail;
                    const int nv = int(imin(dw_nv_max, nvec - v0));
                    const T *drow = dst.at(n0 + nn, od, oh, 0) + c0;
                    for (dim_t kd = 0; kd < p.k[0]; ++kd) {
                        const dim_t id = dw_fwd_reach(p, 0, od, kd);
                        if (id < 0) continue;
                        for (dim_t kh = 0; kh < p.k[1]; ++kh) {
                            const dim_t ih = dw_fwd_reach(p, 1, oh, kh);
                            if (ih < 0) continue;
                            for (int pp = 0; pp < pl.planes; ++pp) {
                                const T *srow = in.v.at(nn, id, ih, 0) + pp * in.pstride + c0;
                                float *pt =
                                    P + (pp * ksp + (kd * p.k[1] + kh) * p.k[2]) * cpad + c0;
                                if (nv == 2 && !last_tail)
                                    dw_bww_row<DT, 2, false>(p, drow, srow, dst.w, in.v.w,
                                                             lo.data(), hi.data(), pt, cpad, n, mk);
                                else if (nv == 2)
                                    dw_bww_row<DT, 2, true>(p, drow, srow, dst.w, in.v.w, lo.data(),
                                                            hi.data(), pt, cpad, n, mk);
                                else if (!last_tail)
                                    dw_bww_row<DT, 1, false>(p, drow, srow, dst.w, in.v.w,
                                                             lo.data(), hi.data(), pt, cpad, n, mk);
                                else
                                    dw_bww_row<DT, 1, true>(p, drow, srow, dst.w, in.v.w, lo.data(),
                                                            hi.data(), pt, cpad, n, mk);
                            }
                        }
                    }
                }
            }
        });
    }
}

// `views(n0, nb, body)` calls body(src, dst) with views of images [n0, n0 + nb) (image n0
// first): the tensors themselves, or channels-last copies of that chunk (NCX, plan
// ncx_chunk images at a time; `outer` is that chunk, the batch when nothing is copied).
template <int DT, class Views>
static void dw_bwd_weights(const dw_plan &pl, dim_t outer, const Views &views, dim_t cpad,
                           void *user_w) {
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
                  dw_bww_images<DT>(pl, src, dst, imin(outer, p.mb - c0), lo, hi, cpad, partials.p,
                                    part, room);
              });
    // The partials in thread order, rounded once: lane c of plane i is w[oc = c][i].
    parallel(pl.nthr, [&](int ithr, int nt) {
        const weights_layout &l = p.wei;
        dim_t xs, xe;
        split(C * pl.planes * ksp, nt, ithr, xs, xe);
        for (dim_t x = xs; x < xe; ++x) {
            const dim_t c = x / (pl.planes * ksp), pt = x % (pl.planes * ksp);
            const dim_t t = pt % ksp, pp = pt / ksp;
            const dim_t kw = t % p.k[2], kh = (t / p.k[2]) % p.k[1], kd = t / (p.k[2] * p.k[1]);
            float sum = partials.p[pt * cpad + c];
            for (int q = 1; q < pl.nthr; ++q) sum += partials.p[q * part + pt * cpad + c];
            store_elem(p.dt, user_w,
                       dw_weight_offset(p, c, pp) + kd * l.sp[0] + kh * l.sp[1] + kw * l.sp[2],
                       sum);
        }
    });
}
