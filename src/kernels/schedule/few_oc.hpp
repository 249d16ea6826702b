// The few-output-channels schedule (plan and rationale in kernels/few_oc_kernels.hpp): src
// channels on the lanes, for forwards and weight gradients with 1-4 dst channels per group.
// Included by each ISA's translation unit inside its own namespace, after bwd_weights.hpp
// (row_source, row_buffers, tap_row_of).

// Weights as [g][tap][o][cpad] f32, the lanes from icg on zero.
static void few_oc_pack_weights(const few_oc_plan &pl, const void *user, float *wp) {
    const conv_problem &p = pl.p;
    const weights_layout &l = p.wei;
    const dim_t ksp = p.ksp();
    for (dim_t g = 0; g < p.g; ++g)
        for (dim_t t = 0; t < ksp; ++t) {
            const dim_t base = weight_row_offset(p, g, t, 0);  // (output channel 0 of g)
            for (dim_t o = 0; o < p.ocg; ++o) {
                float *row = wp + ((g * ksp + t) * p.ocg + o) * pl.cpad;
                for (dim_t c = 0; c < p.icg; ++c)
                    row[c] = load_elem(p.dt, user, base + o * l.oc + c * l.ic);
                for (dim_t c = p.icg; c < pl.cpad; ++c) row[c] = 0.f;
            }
        }
}

// The user's own bf16/f16 rows (channels contiguous), read in place and widened in the loads
// (few_oc_plan::native16; the interface of row_source: row pointers, a pixel stride).
struct few_oc_rows16 {
    tview<const uint16_t> v;
    few_oc_rows16(const void *t, const data_layout &l) : v(user_view<const uint16_t>(t, l)) {}
    const uint16_t *row(dim_t in, dim_t id, dim_t ih) const { return v.at(in, id, ih, 0); }
    dim_t pixel_stride() const { return v.w; }
};

// One element of diff_dst, widened from DT, on every lane.
template <data_type DT>
static inline V few_oc_bcast(const float *x) {
    return vt::bcast(x);
}
template <data_type DT>
static inline V few_oc_bcast(const uint16_t *x) {
    const float f = load_elem(DT, x, 0);
    return vt::bcast(&f);
}

// The src rows one output row (n, od, oh) reads through its taps (kd, kh) inside src, with
// channel 0 of group g, and each one's first tap index (kd * KH + kh) * KW. Returns how many.
template <typename Rows, typename T>
static int few_oc_tap_rows(const conv_problem &p, const Rows &src, dim_t row, dim_t g,
                           const T **rows, dim_t *t0) {
    int n = 0;
    for (dim_t hd = 0; hd < p.k[0] * p.k[1]; ++hd) {
        const tap_row tr = tap_row_of(p, row, hd / p.k[1], hd % p.k[1]);
        if (!tr.valid) continue;
        rows[n] = src.row(tr.n, tr.id, tr.ih) + g * p.icg;
        t0[n++] = hd * p.k[2];
    }
    return n;
}

// ------------------------------------------------------------------------------- fwd --

// Lane j of the result: the sum of a[j]'s lanes (a is clobbered). Pairs of vectors are merged
// level by level, each pair's even and odd lanes added (two permutes and an add): after log2(W)
// levels the W sums are in order. 2W - 2 permutes, where a W x W transpose takes 4W.
static inline V few_oc_lane_sums(V (&a)[W]) {
#pragma GCC unroll 5
    for (int n = W; n > 1; n /= 2)
#pragma GCC unroll 8
        for (int i = 0; i < n / 2; ++i)
            a[i] = vt::add(vt::even(a[2 * i], a[2 * i + 1]), vt::odd(a[2 * i], a[2 * i + 1]));
    return a[0];
}

// One block of R = W / O output pixels [ow0, ow0 + m) and their O outputs: accumulator q * O + o
// holds, lane by lane, the products of pixel q's channels with output o's weights, over every
// tap; the W accumulators' lane sums (a transpose, then W - 1 adds) land in `sums`, lane
// q * O + o. Taps in the padding are left out.
template <int O, bool TAIL, data_type DT, typename T>
static void few_oc_fwd_block(const few_oc_plan &pl, const T *const *rows, const dim_t *t0,
                             int nrows, dim_t ps, const float *wg, dim_t ow0, int m, float *sums) {
    constexpr int R = W / O;
    const conv_problem &p = pl.p;
    const dim_t cpad = pl.cpad, ncv = cpad / W, s = p.s[2];
    const int ntail = int(p.icg - (ncv - 1) * W);
    const mask_t mk = vt::mask(ntail);
    V acc[W];
#pragma GCC unroll 16
    for (int a = 0; a < W; ++a) acc[a] = vt::zero();
    for (int r = 0; r < nrows; ++r) {
        for (dim_t kw = 0; kw < p.k[2]; ++kw) {
            const float *wt = wg + (t0[r] + kw) * O * cpad;
            const dim_t i0 = ow0 * s + kw * p.dl[2] - p.pb[2];  // pixel 0's src pixel
            // Every pixel of a full block inside src (in division: R strides may not fit).
            const bool inside = m == R && i0 >= 0 && i0 < p.i[2] && (p.i[2] - 1 - i0) / s >= R - 1;
            for (dim_t cv = 0; cv < ncv; ++cv) {
                const bool masked = TAIL && cv == ncv - 1;
                V wv[O];
#pragma GCC unroll 4
                for (int o = 0; o < O; ++o) wv[o] = vt::load(wt + o * cpad + cv * W);
                auto madd = [&](int q, const T *x) {
                    const V xv = masked ? load_widened_tail<DT>(x, ntail, mk) : load_widened<DT>(x);
#pragma GCC unroll 4
                    for (int o = 0; o < O; ++o) acc[q * O + o] = vt::fma(xv, wv[o], acc[q * O + o]);
                };
                if (inside) {
                    const T *x = rows[r] + i0 * ps + cv * W;
                    const dim_t step = s * ps;
#pragma GCC unroll 16
                    for (int q = 0; q < R; ++q) madd(q, x + q * step);
                } else {
#pragma GCC unroll 16
                    for (int q = 0; q < R; ++q) {
                        // (Only pixels that exist: q strides past them may not fit.)
                        const dim_t iw = q < m ? i0 + q * s : -1;
                        if (iw >= 0 && iw < p.i[2]) madd(q, rows[r] + iw * ps + cv * W);
                    }
                }
            }
        }
    }
    vt::store(sums, few_oc_lane_sums(acc));
}

template <int O, data_type DT, typename T>
static void few_oc_fwd_block_any(const few_oc_plan &pl, const T *const *rows, const dim_t *t0,
                                 int nrows, dim_t ps, const float *wg, dim_t ow0, int m,
                                 float *sums) {
    if (pl.p.icg % W)
        few_oc_fwd_block<O, true, DT>(pl, rows, t0, nrows, ps, wg, ow0, m, sums);
    else
        few_oc_fwd_block<O, false, DT>(pl, rows, t0, nrows, ps, wg, ow0, m, sums);
}

// The output rows [r0, r1) of one thread: src through `src` (row_source: f32 rows, in place or
// converted a chunk at a time; few_oc_rows16: the user's bf16/f16 rows, widened in the loads).
template <data_type DT, typename Rows>
static void few_oc_fwd_rows(const few_oc_plan &pl, const conv_args &args, const float *wp,
                            const float *bias, Rows &src, dim_t r0, dim_t r1) {
    using T = std::remove_const_t<std::remove_pointer_t<decltype(src.row(0, 0, 0))>>;
    const conv_problem &p = pl.p;
    const dim_t ksp = p.ksp(), nhd = p.k[0] * p.k[1];
    const int R = pl.pixels;
    std::vector<const T *> trows(static_cast<size_t>(nhd));
    std::vector<dim_t> t0(static_cast<size_t>(nhd));
    alignas(64) float sums[W];
    for (dim_t row = r0; row < r1; ++row) {
        const tap_row at = tap_row_of(p, row, 0, 0);  // (n, od, oh)
        for (dim_t g = 0; g < p.g; ++g) {
            const int nr = few_oc_tap_rows(p, src, row, g, trows.data(), t0.data());
            const float *wg = wp + g * ksp * p.ocg * pl.cpad;
            const dim_t obase =
                at.n * p.dst.n + at.od * p.dst.sp[0] + at.oh * p.dst.sp[1] + g * p.ocg * p.dst.c;
            for (dim_t ow0 = 0; ow0 < p.o[2]; ow0 += R) {
                const int m = int(imin(R, p.o[2] - ow0));
                const dim_t ps = src.pixel_stride();
                switch (p.ocg) {
                    case 1:
                        few_oc_fwd_block_any<1, DT>(pl, trows.data(), t0.data(), nr, ps, wg, ow0, m,
                                                    sums);
                        break;
                    case 2:
                        few_oc_fwd_block_any<2, DT>(pl, trows.data(), t0.data(), nr, ps, wg, ow0, m,
                                                    sums);
                        break;
                    case 3:
                        few_oc_fwd_block_any<3, DT>(pl, trows.data(), t0.data(), nr, ps, wg, ow0, m,
                                                    sums);
                        break;
                    default:
                        few_oc_fwd_block_any<4, DT>(pl, trows.data(), t0.data(), nr, ps, wg, ow0, m,
                                                    sums);
                        break;
                }
                for (int q = 0; q < m; ++q)
                    for (dim_t o = 0; o < p.ocg; ++o) {
                        float v = sums[q * p.ocg + o];
                        if (bias) v += bias[g * p.ocg + o];
                        store_elem(p.dt, args.out, obase + (ow0 + q) * p.dst.sp[2] + o * p.dst.c,
                                   v);
                    }
            }
        }
    }
}

static void few_oc_fwd(const few_oc_plan &pl, const conv_args &args) {
    const conv_problem &p = pl.p;
    const dim_t ksp = p.ksp(), rows = p.mb * p.o[0] * p.o[1];
    if (rows == 0 || p.o[2] == 0) return;
    scratch wp(p.g * ksp * p.ocg * pl.cpad);
    few_oc_pack_weights(pl, args.wei, wp.p);
    scratch bias(p.with_bias ? p.oc() : 0);
    for (dim_t c = 0; p.with_bias && c < p.oc(); ++c)
        bias.p[c] = load_elem(p.dt, args.bias, c * p.bias_stride);
    const float *bp = p.with_bias ? bias.p : nullptr;
    const row_source src0{
        pl.src_direct, user_view(args.src, p.src), args.src, &p.src, p.dt, p.ic(), p.i};
    const row_source no_dst{true, fview{}, nullptr, &p.dst, p.dt, p.oc(), p.o};
    parallel(pl.nthr, [&](int ithr, int nt) {
        dim_t r0, r1;
        split(rows, nt, ithr, r0, r1);
        if (pl.native16) {
            few_oc_rows16 src(args.src, p.src);
            if (p.dt == data_type::bf16)
                few_oc_fwd_rows<data_type::bf16>(pl, args, wp.p, bp, src, r0, r1);
            else
                few_oc_fwd_rows<data_type::f16>(pl, args, wp.p, bp, src, r0, r1);
            return;
        }
        row_source src = src0, dst = no_dst;
        const row_buffers bufs(p, src, dst, r0, r1, pl.rows_per_chunk);
        for (dim_t c = r0; c < r1; c += pl.rows_per_chunk) {
            const dim_t ce = imin(c + pl.rows_per_chunk, r1);
            row_buffers::convert(p, src, dst, c, ce);
            few_oc_fwd_rows<data_type::f32>(pl, args, wp.p, bp, src, c, ce);
        }
    });
}

// ----------------------------------------------------------------------- bwd_weights --

// Accumulators a register block holds: (kw, channel vector) pairs times O.
inline constexpr int few_oc_acc_budget = W == 16 ? 24 : 10;

// The pairs [j0, j0 + np) of one tap row (kd, kh) of group g (pair j: kw = j / ncv, channel
// vector cv = j % ncv), over the rows [c, ce) of diff_dst, added into `part`
// ([tap][o][cpad] of the group). Per output pixel: O broadcasts of diff_dst, one load of src
// per pair, O FMAs per pair; the pixels where every pair's tap is inside src without checks.
// Rows: row_source (f32 rows: the user's, or converted copies) or few_oc_rows16 (DT's).
template <int O, bool TAIL, data_type DT, typename Rows>
static void few_oc_bww_block(const few_oc_plan &pl, const Rows &src, const Rows &dst, dim_t c,
                             dim_t ce, dim_t g, dim_t hd, dim_t j0, int np, float *part) {
    constexpr int P = few_oc_acc_budget / O;
    const conv_problem &p = pl.p;
    const dim_t cpad = pl.cpad, ncv = cpad / W, s = p.s[2];
    const int ntail = int(p.icg - (ncv - 1) * W);
    const mask_t mk = vt::mask(ntail);
    const dim_t ps = src.pixel_stride(), dps = dst.pixel_stride();
    // Per pair: its src offset from pixel ow * s (off of its tap, plus its channel vector), the
    // output pixels its tap reads inside src, and whether it is the masked last vector.
    dim_t xoff[P], lo[P], hi[P];
    bool masked[P];
    dim_t ilo = 0, ihi = p.o[2], ulo = p.o[2], uhi = 0;  // every pair's pixels; any pair's
    for (int j = 0; j < P; ++j) {
        const dim_t jj = j0 + (j < np ? j : 0), kw = jj / ncv, cv = jj % ncv;
        const dim_t off = tap_w_range(p, kw, lo[j], hi[j]);
        // (A tap with no pixel inside may lie 2^60 pixels out: its offset is never used.)
        xoff[j] = lo[j] < hi[j] ? off * ps + cv * W : 0;
        masked[j] = TAIL && cv == ncv - 1;
        if (j >= np) continue;
        ilo = imax(ilo, lo[j]), ihi = imin(ihi, hi[j]);
        ulo = imin(ulo, lo[j]), uhi = imax(uhi, hi[j]);
    }
    if (ulo >= uhi) return;
    if (ilo >= ihi) ilo = ihi = uhi;  // no pixel inside for all: every pixel checked
    V acc[P][O];
#pragma GCC unroll 24
    for (int j = 0; j < P; ++j)
#pragma GCC unroll 4
        for (int o = 0; o < O; ++o) acc[j][o] = vt::zero();
    for (dim_t row = c; row < ce; ++row) {
        const tap_row tr = tap_row_of(p, row, hd / p.k[1], hd % p.k[1]);
        if (!tr.valid) continue;
        const auto *x0 = src.row(tr.n, tr.id, tr.ih) + g * p.icg;
        const auto *d0 = dst.row(tr.n, tr.od, tr.oh) + g * p.ocg;
        auto pixel = [&](dim_t ow, auto checked) {
            V dv[O];
#pragma GCC unroll 4
            for (int o = 0; o < O; ++o) dv[o] = few_oc_bcast<DT>(d0 + ow * dps + o);
            const auto *x = x0 + ow * s * ps;
#pragma GCC unroll 24
            for (int j = 0; j < P; ++j) {
                if (j >= np) continue;
                if constexpr (decltype(checked)::value)
                    if (ow < lo[j] || ow >= hi[j]) continue;
                const V xv = masked[j] ? load_widened_tail<DT>(x + xoff[j], ntail, mk)
                                       : load_widened<DT>(x + xoff[j]);
#pragma GCC unroll 4
                for (int o = 0; o < O; ++o) acc[j][o] = vt::fma(xv, dv[o], acc[j][o]);
            }
        };
        for (dim_t ow = ulo; ow < ilo; ++ow) pixel(ow, std::true_type{});
        for (dim_t ow = ilo; ow < ihi; ++ow) pixel(ow, std::false_type{});
        for (dim_t ow = ihi; ow < uhi; ++ow) pixel(ow, std::true_type{});
    }
    for (int j = 0; j < np; ++j) {
        const dim_t jj = j0 + j, kw = jj / ncv, cv = jj % ncv;
        for (int o = 0; o < O; ++o) {
            float *w = part + ((hd * p.k[2] + kw) * O + o) * cpad + cv * W;
            vt::store(w, vt::add(vt::load(w), acc[j][o]));
        }
    }
}

template <int O, data_type DT = data_type::f32, typename Rows = row_source>
static void few_oc_bww_rows(const few_oc_plan &pl, const Rows &src, const Rows &dst, dim_t c,
                            dim_t ce, float *part) {
    const conv_problem &p = pl.p;
    const dim_t ncv = pl.cpad / W, pairs = p.k[2] * ncv, ksp = p.ksp();
    constexpr int P = few_oc_acc_budget / O;
    for (dim_t g = 0; g < p.g; ++g)
        for (dim_t hd = 0; hd < p.k[0] * p.k[1]; ++hd)
            for (dim_t j0 = 0; j0 < pairs; j0 += P) {
                const int np = int(imin(P, pairs - j0));
                float *pg = part + g * ksp * O * pl.cpad;
                if (p.icg % W)
                    few_oc_bww_block<O, true, DT>(pl, src, dst, c, ce, g, hd, j0, np, pg);
                else
                    few_oc_bww_block<O, false, DT>(pl, src, dst, c, ce, g, hd, j0, np, pg);
            }
}

// Rows [c, ce) of diff_dst into `part`, the register block's outputs as the group's (1-4).
template <data_type DT, typename Rows>
static void few_oc_bww_chunk(const few_oc_plan &pl, const Rows &src, const Rows &dst, dim_t c,
                             dim_t ce, float *part) {
    switch (pl.p.ocg) {
        case 1:
            return few_oc_bww_rows<1, DT>(pl, src, dst, c, ce, part);
        case 2:
            return few_oc_bww_rows<2, DT>(pl, src, dst, c, ce, part);
        case 3:
            return few_oc_bww_rows<3, DT>(pl, src, dst, c, ce, part);
        default:
            return few_oc_bww_rows<4, DT>(pl, src, dst, c, ce, part);
    }
}

// bf16/f16 rows with contiguous channels (few_oc_plan::native16): read in place, each load
// widened, over rows [r0, r1) of diff_dst in the chunks of converted rows (the same order of
// sums).
template <data_type DT>
static void few_oc_bww_native16(const few_oc_plan &pl, const conv_args &args, dim_t r0, dim_t r1,
                                float *part) {
    const few_oc_rows16 src(args.src, pl.p.src), dst(args.dst, pl.p.dst);
    for (dim_t c = r0; c < r1; c += pl.rows_per_chunk)
        few_oc_bww_chunk<DT>(pl, src, dst, c, imin(c + pl.rows_per_chunk, r1), part);
}

static void few_oc_bwd_weights(const few_oc_plan &pl, const conv_args &args) {
    const conv_problem &p = pl.p;
    const dim_t ksp = p.ksp(), rows = p.mb * p.o[0] * p.o[1];
    const dim_t part = p.g * ksp * p.ocg * pl.cpad;  // one thread's partial weights
    const row_source src0{
        pl.src_direct, user_view(args.src, p.src), args.src, &p.src, p.dt, p.ic(), p.i};
    const row_source dst0{
        pl.dst_direct, user_view(args.dst, p.dst), args.dst, &p.dst, p.dt, p.oc(), p.o};
    const int nthr = pl.nthr;
    scratch partials(nthr * part);
    parallel(nthr, [&](int ithr, int nt) {
        float *mine = partials.p + ithr * part;
        for (dim_t e = 0; e < part; ++e) mine[e] = 0.f;
        // (No rows: an empty batch, whose extents may be near the dim_t range; zero weights.)
        if (rows == 0) return;
        dim_t r0, r1;
        split(rows, nt, ithr, r0, r1);
        if (pl.native16) {
            if (p.dt == data_type::bf16)
                few_oc_bww_native16<data_type::bf16>(pl, args, r0, r1, mine);
            else
                few_oc_bww_native16<data_type::f16>(pl, args, r0, r1, mine);
            return;
        }
        row_source src = src0, dst = dst0;
        const row_buffers bufs(p, src, dst, r0, r1, pl.rows_per_chunk);
        for (dim_t c = r0; c < r1; c += pl.rows_per_chunk) {
            const dim_t ce = imin(c + pl.rows_per_chunk, r1);
            row_buffers::convert(p, src, dst, c, ce);
            few_oc_bww_chunk<data_type::f32>(pl, src, dst, c, ce, mine);
        }
    });
    // The threads' partials in thread order, rounded once into the user's weights.
    const weights_layout &l = p.wei;
    parallel(nthr, [&](int ithr, int nt) {
        dim_t s, e;
        split(p.g * ksp * p.ocg, nt, ithr, s, e);
        for (dim_t x = s; x < e; ++x) {
            const dim_t o = x % p.ocg, t = (x / p.ocg) % ksp, g = x / (p.ocg * ksp);
            const dim_t base = weight_row_offset(p, g, t, 0) + o * l.oc;
            for (dim_t ci = 0; ci < p.icg; ++ci) {
                float sum = 0.f;
                for (int q = 0; q < nthr; ++q) sum += partials.p[q * part + x * pl.cpad + ci];
                store_elem(p.dt, args.out, base + ci * l.ic, sum);
            }
        }
    });
}

void run_few_oc(const few_oc_plan &pl, const conv_args &args) {
    if (pl.p.dir == conv_direction::fwd)
        few_oc_fwd(pl, args);
    else
        few_oc_bwd_weights(pl, args);
}
