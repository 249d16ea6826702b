// The NCX depthwise kernel (kernels/dw_ncx_kernels.hpp): pixels on the lanes, one plane
// (image, channel) at a time. Included inside an ISA's namespace after kernel_helpers.hpp,
// direct_conv_impl.hpp (pack_bias), dw_elements.hpp and dw_planes.hpp (dw_fwd_reach,
// dw_bwd_reach).

// Lanes [a, b) of a vector, 0 <= a <= b <= W.
static inline mask_t dwn_lanes(dim_t a, dim_t b) {
    return mask_t(vt::mask(int(b)) & ~vt::mask(int(a)));
}

// One w tap of a line: output q reads element q * step + koff of the input row's stride phase
// `phase` (step: the line's), inside the row for outputs [lo, hi).
struct dwn_wtap {
    dim_t kw, koff, lo, hi;
    dim_t phase;
};

// A vector mask as an element of std::vector (the mask type itself may be a vector type,
// whose attributes a template argument drops).
struct dwn_mask {
    mask_t m;
};

// Element masks of the two vectors of 2W elements whose even elements are lanes [a, b).
static inline void dwn_pair_masks(dim_t a, dim_t b, mask_t &lo, mask_t &hi) {
    uint32_t bits = 0;
    for (dim_t l = a; l < b; ++l) bits |= 1u << unsigned(2 * l);
    lo = vt::mask_bits(bits & ((1u << W) - 1u));
    hi = vt::mask_bits(bits >> W);
}

// A line of outputs along w: output q is pixel out0 + q * out_step of its row. The taps that
// read inside for no output are left out. Vector v (outputs [v*W, v*W + W)) is `inside` when
// every tap reads inside for all its lanes; else masks[v * taps + k] are the lanes tap k reads
// inside for (the same for every row, so computed once, not per row).
// step 2 (f32 stride 2, read in place): lane q of a tap is the even element of two vectors
// of 2W input elements; pair_masks[2 * (v * taps + k) + {0, 1}] are their element masks, and
// `inside` also needs the odd element after the last lane inside the row (in_w elements).
struct dwn_line {
    dim_t nq = 0, out0 = 0, out_step = 1;
    dim_t step = 1, in_w = 0;
    std::vector<dwn_wtap> taps;
    std::vector<char> inside;
    std::vector<dwn_mask> masks, pair_masks;

    // Tap kw reading element q * step + koff of a phase of in_len elements.
    void add_tap(dim_t kw, dim_t phase, dim_t koff, dim_t in_len) {
        const dim_t a = imax(0, ceil_div(-koff, step));
        const dim_t b = imin(nq, floor_div(in_len - 1 - koff, step) + 1);
        if (a < b) taps.push_back({kw, koff, a, b, phase});
    }
    void finish() {
        const dim_t nvec = div_up(nq, W), nk = dim_t(taps.size());
        inside.assign(size_t(nvec), 1);
        masks.resize(size_t(nvec * nk));
        pair_masks.resize(step == 2 ? size_t(2 * nvec * nk) : 0);
        for (dim_t v = 0; v < nvec; ++v) {
            const dim_t q0 = v * W, m = imin(W, nq - q0);
            if (m < W) inside[size_t(v)] = 0;
            for (dim_t k = 0; k < nk; ++k) {
                const dwn_wtap &t = taps[size_t(k)];
                // Lanes [a, b) of the vector read inside the row; a tap that starts past the
                // vector (a large dilation) has none, and a is kept within the vector's m lanes
                // so that the masks never shift by W or more.
                const dim_t a = imin(imax(t.lo - q0, 0), m), b = imax(a, imin(t.hi - q0, m));
                if (a > 0 || b < W) inside[size_t(v)] = 0;
                if (step == 2 && 2 * (q0 + W - 1) + t.koff + 1 >= in_w) inside[size_t(v)] = 0;
                masks[size_t(v * nk + k)].m = dwn_lanes(a, b);
                if (step == 2)
                    dwn_pair_masks(a, b, pair_masks[size_t(2 * (v * nk + k))].m,
                                   pair_masks[size_t(2 * (v * nk + k) + 1)].m);
            }
        }
    }
};

// Elements of stride phase r of a row of n pixels split into s phases.
static inline dim_t dwn_phase_len(dim_t n, dim_t s, dim_t r) {
    return r < n ? div_up(n - r, s) : 0;
}

// fwd and bwd_weights: the dst row; tap kw reads src pixel q*s + kw*dl - pb, which is element
// q + floor((kw*dl - pb) / s) of phase (kw*dl - pb) mod s of the src row split into s phases,
// or, with pairs (dw_ncx_pairs), element 2q + kw*dl - pb of the row itself.
static dwn_line dwn_fwd_line(const conv_problem &p) {
    dwn_line L;
    L.nq = p.o[2];
    const dim_t s = p.s[2];
    if (dw_ncx_pairs(p)) L.step = 2, L.in_w = p.i[2];
    for (dim_t kw = 0; kw < p.k[2]; ++kw) {
        const dim_t x = kw * p.dl[2] - p.pb[2], q = floor_div(x, s), r = x - q * s;
        if (L.step == 2)
            L.add_tap(kw, 0, x, p.i[2]);
        else
            L.add_tap(kw, r, q, dwn_phase_len(p.i[2], s, r));
    }
    L.finish();
    return L;
}

// bwd_data, one line per stride phase r of the src row: src pixels r + s*q are reached by
// the kw with (r + pb - kw*dl) divisible by s, from dst pixels q + (r + pb - kw*dl)/s.
static std::vector<dwn_line> dwn_bwd_lines(const conv_problem &p) {
    const dim_t s = p.s[2];
    std::vector<dwn_line> lines(static_cast<size_t>(imin(s, p.i[2])));
    for (dim_t r = 0; r < dim_t(lines.size()); ++r) {
        dwn_line &L = lines[size_t(r)];
        L.nq = dwn_phase_len(p.i[2], s, r);
        L.out0 = r;
        L.out_step = s;
        for (dim_t kw = 0; kw < p.k[2]; ++kw) {
            const dim_t x = r + p.pb[2] - kw * p.dl[2];
            if (floor_div(x, s) * s == x) L.add_tap(kw, 0, floor_div(x, s), p.o[2]);
        }
        L.finish();
    }
    return lines;
}

// One tap of a row of outputs: its input at output q = 0 as an element offset from the row's
// base input pixel, its weight tap (kd, kh, kw) and its w tap k in the line.
struct dwn_rtap {
    dim_t off, tap;
    int k;
};

constexpr int dwn_nb = 4;  // vectors of outputs per block: independent sums in flight

// Vectors [v0, v0 + NV) of a line. Bit v of INSIDE: every tap reads inside for every lane of
// vector v (border vectors only pay the masks); else each tap runs on its lanes (the others keep
// their sums: a padded tap is not multiplied) and the last vector of the line stores only its
// outputs.
template <int NV, unsigned INSIDE, int STEP>
static inline void dwn_block(const dwn_line &L, const float *in, const dwn_rtap *t, int nt,
                             const float *wc, dim_t v0, V bias, float *out) {
    const dim_t q0 = v0 * W, nk = dim_t(L.taps.size());
    const dwn_mask *mk = L.masks.data() + v0 * nk;
    const dwn_mask *pk = STEP == 2 ? L.pair_masks.data() + 2 * v0 * nk : nullptr;
    V acc[NV];
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) acc[v] = bias;
    for (int i = 0; i < nt; ++i) {
        const V w = vt::bcast(wc + t[i].tap);
        const float *x = in + t[i].off + STEP * q0;
#pragma GCC unroll 4
        for (int v = 0; v < NV; ++v) {
            const float *xv = x + STEP * v * W;
            if ((INSIDE >> v) & 1u) {
                const V a = STEP == 2 ? vt::even(vt::load(xv), vt::load(xv + W)) : vt::load(xv);
                acc[v] = vt::fma(a, w, acc[v]);
            } else {
                const size_t j = size_t(v * nk + t[i].k);
                const mask_t m = mk[j].m;
                const V a = STEP == 2 ? vt::even(vt::load_mask(xv, pk[2 * j].m),
                                                 vt::load_mask(xv + W, pk[2 * j + 1].m))
                                      : vt::load_mask(xv, m);
                acc[v] = vt::fma_mask(a, w, acc[v], m);
            }
        }
    }
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) {
        const dim_t q = q0 + v * W;
        if (((INSIDE >> v) & 1u) || q + W <= L.nq)
            vt::store(out + q, acc[v]);
        else
            vt::store_mask(out + q, acc[v], vt::mask(int(L.nq - q)));
    }
}

// The block of each set of inside vectors (bit v: vector v inside), per step. A plain array
// (std::array of this pointer type drops the vector argument's attributes, with a warning).
using dwn_block_fn = void (*)(const dwn_line &, const float *, const dwn_rtap *, int, const float *,
                              dim_t, V, float *);
template <int NV, int STEP, size_t... B>
struct dwn_block_table {
    static constexpr dwn_block_fn fn[] = {&dwn_block<NV, unsigned(B), STEP>...};
};
template <int NV, int STEP, size_t... B>
static dwn_block_table<NV, STEP, B...> dwn_blocks(std::index_sequence<B...>);  // (type only)

template <int NV>
static inline void dwn_block_any(const dwn_line &L, const float *in, const dwn_rtap *t, int nt,
                                 const float *wc, dim_t v0, V bias, float *out) {
    using step1 = decltype(dwn_blocks<NV, 1>(std::make_index_sequence<1u << NV>()));
    using step2 = decltype(dwn_blocks<NV, 2>(std::make_index_sequence<1u << NV>()));
    unsigned inside = 0;
    for (int v = 0; v < NV; ++v) inside |= unsigned(L.inside[size_t(v0 + v)] != 0) << v;
    (L.step == 2 ? step2::fn : step1::fn)[inside](L, in, t, nt, wc, v0, bias, out);
}

// out[q] = bias + sum over the taps of wc[tap] * in[off + q], for the line's outputs.
static void dwn_line_run(const dwn_line &L, const float *in, const std::vector<dwn_rtap> &taps,
                         const float *wc, float bias, float *out) {
    const V b = vt::bcast(&bias);
    const dwn_rtap *t = taps.data();
    const int nt = int(taps.size());
    const dim_t nvec = div_up(L.nq, W);
    for (dim_t v0 = 0; v0 < nvec; v0 += dwn_nb) {
        switch (imin(dwn_nb, nvec - v0)) {
            case 1:
                dwn_block_any<1>(L, in, t, nt, wc, v0, b, out);
                break;
            case 2:
                dwn_block_any<2>(L, in, t, nt, wc, v0, b, out);
                break;
            case 3:
                dwn_block_any<3>(L, in, t, nt, wc, v0, b, out);
                break;
            default:
                dwn_block_any<4>(L, in, t, nt, wc, v0, b, out);
                break;
        }
    }
}

// A plane of rows (d, h) of n pixels (row strides sd, sh; w contiguous) as f32 rows split into
// `split` stride phases of plen elements: pixel iw of row (d, h) goes to
// out[((d * H + h) * split + iw % split) * plen + iw / split]. tmp: n f32 (bf16/f16 widened).
template <typename T>
static void dwn_stage(data_type dt, const T *x, const dim_t *ext, dim_t sd, dim_t sh, dim_t split,
                      dim_t plen, float *tmp, float *out) {
    const dim_t n = ext[2];
    for (dim_t d = 0; d < ext[0]; ++d)
        for (dim_t h = 0; h < ext[1]; ++h) {
            const T *row = x + d * sd + h * sh;
            float *o = out + (d * ext[1] + h) * split * plen;
            const float *f;
            if constexpr (std::is_same_v<T, float>) {
                f = row;  // (split > 1: f32 rows of one phase are read in place)
            } else {
                vt::widen(dt, row, split == 1 ? o : tmp, n);
                if (split == 1) continue;
                f = tmp;
            }
            if (split == 2) {
                // Vectors of 2W pixels, the last one masked (no element by element tail).
                const dim_t n1 = n / 2;  // pixels of phase 1 (phase 0: plen)
                for (dim_t j = 0; j < plen; j += W) {
                    const dim_t a_n = imin(W, n - 2 * j), b_n = imax(0, imin(W, n - 2 * j - W));
                    const V a = vt::load_mask(f + 2 * j, vt::mask(int(a_n)));
                    const V b = vt::load_mask(f + 2 * j + W, vt::mask(int(b_n)));
                    vt::store_mask(o + j, vt::even(a, b), vt::mask(int(imin(W, plen - j))));
                    vt::store_mask(o + plen + j, vt::odd(a, b),
                                   vt::mask(int(imax(0, imin(W, n1 - j)))));
                }
            } else {
                for (dim_t r = 0; r < split; ++r)
                    for (dim_t iw = r, j = 0; iw < n; iw += split, ++j) o[r * plen + j] = f[iw];
            }
        }
}

// The f32 rows of one plane's input side: the tensor itself or a staged copy.
struct dwn_rows {
    const float *p;
    dim_t d, h, plen;
    const float *row(dim_t id, dim_t ih) const { return p + id * d + ih * h; }
};

// The row strides (d, h) and phase length of dwn_input's rows.
static dwn_rows dwn_input_shape(data_type dt, const data_layout &l, const dim_t *ext, dim_t split) {
    if (dt == data_type::f32 && split == 1) return {nullptr, l.sp[0], l.sp[1], 0};
    const dim_t plen = div_up(ext[2], split);
    return {nullptr, ext[1] * split * plen, split * plen, plen};
}

// The input side of one plane (extents ext, layout l), staged into `plane` when the type is
// not f32 or the plane is split into phases.
template <typename T>
static dwn_rows dwn_input(data_type dt, const T *x, const data_layout &l, const dim_t *ext,
                          dim_t split, float *tmp, float *plane) {
    dwn_rows r = dwn_input_shape(dt, l, ext, split);
    if (std::is_same_v<T, float> && split == 1) {
        r.p = reinterpret_cast<const float *>(x);
        return r;
    }
    dwn_stage(dt, x, ext, l.sp[0], l.sp[1], split, r.plen, tmp, plane);
    r.p = plane;
    return r;
}

// The staged floats of one plane's input side (0 when read in place).
static dim_t dwn_stage_floats(data_type dt, const dim_t *ext, dim_t split) {
    return dt == data_type::f32 && split == 1 ? 0 : ext[0] * ext[1] * split * div_up(ext[2], split);
}

// Per-thread scratch: pieces of given float counts, each rounded to whole 64-byte lines.
struct dwn_room {
    dim_t per = 0;
    std::vector<dim_t> at;
    explicit dwn_room(std::initializer_list<dim_t> sizes) {
        for (dim_t s : sizes) at.push_back(per), per += div_up(s, 16) * 16;
    }
};

// The taps along axis a (0: d, 1: h) that each output coordinate x reaches: pairs (k, input
// coordinate - base(x)), base(x) the input coordinate of its first tap. Most coordinates share
// a few patterns (all taps inside; the borders; the stride phases of bwd_data), so the taps of
// a row are listed once per pattern, not per row.
struct dwn_axis {
    std::vector<dim_t> base;
    std::vector<size_t> pattern;
    std::vector<std::vector<std::pair<dim_t, dim_t>>> patterns;
};

template <auto reach>
static dwn_axis dwn_axis_of(const conv_problem &p, int a, dim_t n) {
    dwn_axis ax;
    ax.base.resize(size_t(n));
    ax.pattern.resize(size_t(n));
    std::map<std::vector<std::pair<dim_t, dim_t>>, size_t> ids;
    std::vector<std::pair<dim_t, dim_t>> taps;
    for (dim_t x = 0; x < n; ++x) {
        taps.clear();
        dim_t base = 0;
        for (dim_t k = 0; k < p.k[a]; ++k) {
            const dim_t i = reach(p, a, x, k);
            if (i < 0) continue;
            if (taps.empty()) base = i;
            taps.emplace_back(k, i - base);
        }
        const auto it = ids.try_emplace(taps, ax.patterns.size()).first;
        if (it->second == ax.patterns.size()) ax.patterns.push_back(taps);
        ax.base[size_t(x)] = base;
        ax.pattern[size_t(x)] = it->second;
    }
    return ax;
}

// The taps of a row for each (line, d pattern, h pattern), in that order: the input of rows
// (d, h) strides sd, sh, split into phases of plen.
static std::vector<std::vector<dwn_rtap>> dwn_row_taps(const conv_problem &p,
                                                       const std::vector<dwn_line> &lines,
                                                       const dwn_axis &D, const dwn_axis &H,
                                                       dim_t sd, dim_t sh, dim_t plen) {
    std::vector<std::vector<dwn_rtap>> all;
    for (const dwn_line &L : lines)
        for (const auto &pd : D.patterns)
            for (const auto &ph : H.patterns) {
                std::vector<dwn_rtap> &v = all.emplace_back();
                for (const auto &[kd, rd] : pd)
                    for (const auto &[kh, rh] : ph)
                        for (size_t k = 0; k < L.taps.size(); ++k) {
                            const dwn_wtap &t = L.taps[k];
                            v.push_back({rd * sd + rh * sh + t.phase * plen + t.koff,
                                         (kd * p.k[1] + kh) * p.k[2] + t.kw, int(k)});
                        }
            }
    return all;
}

// bwd_data: the phase lines (each nq outputs, `ls` apart in ph) into the src row `out` of n
// pixels, f32 (then narrowed to T from `full`, n floats, when T is not f32).
template <typename T>
static void dwn_interleave(data_type dt, const std::vector<dwn_line> &lines, const float *ph,
                           dim_t ls, dim_t n, float *full, T *out) {
    const dim_t s = lines[0].out_step;
    if (s == 1) {  // one line, the row itself
        if constexpr (std::is_same_v<T, float>)
            std::memcpy(out, ph, size_t(n) * sizeof(float));
        else
            vt::narrow(dt, ph, out, n);
        return;
    }
    float *f = std::is_same_v<T, float> ? reinterpret_cast<float *>(out) : full;
    dim_t done = 0;  // pixels [0, done) interleaved by vectors
    if (s == 2 && lines.size() == 2) {
        for (dim_t j = 0; 2 * j + 2 * W <= n; j += W, done += 2 * W) {
            const V a = vt::load(ph + j), b = vt::load(ph + ls + j);
            vt::store(f + 2 * j, vt::interleave_lo(a, b));
            vt::store(f + 2 * j + W, vt::interleave_hi(a, b));
        }
    }
    // The rest phase by phase: pixel r + s*j is element j of phase r.
    for (dim_t r = 0; r < dim_t(lines.size()); ++r)
        for (dim_t j = ceil_div(done - r, s), x = r + s * j; x < n; ++j, x += s)
            f[x] = ph[r * ls + j];
    if constexpr (!std::is_same_v<T, float>) vt::narrow(dt, f, out, n);
}

// The input rows of a plane read in place, fetched a little ahead of the output rows that read
// them: the rows are consumed in order, at the proportional pace of the output rows, and the
// next two are requested before they are needed. Stride-2 layers read twice the input per
// output and waited on it (MobileNetV2's stride-2 depthwise forward: 24-26 -> 18-19 ms, 1
// thread, on a Xeon whose L3 held the tensors).
struct dwn_prefetch {
    const dwn_rows &in;
    const dim_t *ext;  // input extents
    dim_t out_rows;
    bool on;          // (staged copies are in cache already)
    dim_t paced = 0;  // input rows the output rows so far account for
    dim_t next = 0;   // input rows [0, next) requested; row (nd, nh)
    dim_t nd = 0, nh = 0;
    // Called for output rows 0, 1, ... in order. No divisions: this runs once per output row of
    // about a hundred cycles.
    void rows_for(dim_t r) {
        if (!on) return;
        constexpr dim_t lookahead = 2;
        const dim_t rows = ext[0] * ext[1];
        while (paced < rows && (paced + 1) * out_rows <= (r + 1) * rows) ++paced;
        for (const dim_t upto = imin(rows, paced + lookahead); next < upto; ++next) {
            const char *q = reinterpret_cast<const char *>(in.row(nd, nh));
            for (dim_t b = 0; b < ext[2] * dim_t(sizeof(float)); b += 64)
                __builtin_prefetch(q + b, 0, 3);
            if (++nh == ext[1]) nh = 0, ++nd;
        }
    }
};

// fwd (src -> dst) and bwd_data (dst -> src), planes split over the threads.
template <int DT>
static void dwn_fwd_or_bwd_data(const dw_ncx_plan &pl, const conv_args &args, const float *wp,
                                const float *bias) {
    using T = typename dw_elem<DT>::T;
    const conv_problem &p = pl.p;
    const bool fwd = p.dir == conv_direction::fwd;
    const data_layout &il = fwd ? p.src : p.dst, &ol = fwd ? p.dst : p.src;
    const dim_t *isp = fwd ? p.i : p.o, *osp = fwd ? p.o : p.i;
    const T *in = static_cast<const T *>(fwd ? args.src : args.dst);
    T *out = static_cast<T *>(args.out);
    const dim_t phases = fwd ? dw_ncx_src_phases(p) : 1, ksp = p.ksp(), C = p.g;
    const bool staged = dwn_stage_floats(p.dt, isp, phases) > 0;
    const std::vector<dwn_line> lines =
        fwd ? std::vector<dwn_line>{dwn_fwd_line(p)} : dwn_bwd_lines(p);
    // The lines write the user's row when it is f32 and one line is the whole row.
    const bool direct = DT == dw_f32 && lines.size() == 1 && lines[0].out_step == 1;
    dim_t qmax = 0;
    for (const dwn_line &L : lines) qmax = imax(qmax, L.nq);
    const dim_t ls = div_up(qmax, W) * W;  // line stride in the row buffer
    const dwn_room room{dwn_stage_floats(p.dt, isp, phases), isp[2],
                        direct ? 0 : dim_t(lines.size()) * ls, direct ? 0 : osp[2]};
    const dwn_rows shape = dwn_input_shape(p.dt, il, isp, phases);
    const dwn_axis D =
        fwd ? dwn_axis_of<dw_fwd_reach>(p, 0, osp[0]) : dwn_axis_of<dw_bwd_reach>(p, 0, osp[0]);
    const dwn_axis H =
        fwd ? dwn_axis_of<dw_fwd_reach>(p, 1, osp[1]) : dwn_axis_of<dw_bwd_reach>(p, 1, osp[1]);
    const std::vector<std::vector<dwn_rtap>> row_taps =
        dwn_row_taps(p, lines, D, H, shape.d, shape.h, shape.plen);
    const size_t nd = D.patterns.size(), nh = H.patterns.size();
    scratch mem(pl.nthr * room.per);
    parallel(pl.nthr, [&](int ithr, int nt) {
        float *base = mem.p + ithr * room.per;
        float *plane = base + room.at[0], *tmp = base + room.at[1];
        float *lbuf = base + room.at[2], *full = base + room.at[3];
        dim_t s0, e0;
        split(p.mb * C, nt, ithr, s0, e0);
        for (dim_t x = s0; x < e0; ++x) {
            const dim_t n = x / C, c = x % C;
            const dwn_rows src =
                dwn_input(p.dt, in + n * il.n + c * il.c, il, isp, phases, tmp, plane);
            T *op = out + n * ol.n + c * ol.c;
            const float *w = wp + c * ksp;
            const float b = bias ? bias[c] : 0.f;
            dwn_prefetch ahead{src, isp, osp[0] * osp[1], !staged};
            for (dim_t od = 0; od < osp[0]; ++od)
                for (dim_t oh = 0; oh < osp[1]; ++oh) {
                    ahead.rows_for(od * osp[1] + oh);
                    const float *row =
                        src.p + D.base[size_t(od)] * src.d + H.base[size_t(oh)] * src.h;
                    const size_t pat = D.pattern[size_t(od)] * nh + H.pattern[size_t(oh)];
                    T *orow = op + od * ol.sp[0] + oh * ol.sp[1];
                    for (size_t li = 0; li < lines.size(); ++li) {
                        float *o = direct ? reinterpret_cast<float *>(orow) : lbuf + dim_t(li) * ls;
                        dwn_line_run(lines[li], row, row_taps[li * nd * nh + pat], w, b, o);
                    }
                    if (direct) continue;
                    if (fwd) {
                        if constexpr (DT != dw_f32) vt::narrow(p.dt, lbuf, orow, osp[2]);
                    } else {
                        dwn_interleave(p.dt, lines, lbuf, ls, osp[2], full, orow);
                    }
                }
        }
    });
}

// The sum of a vector's lanes, in lane order.
static inline float dwn_hsum(V v) {
    alignas(64) float t[W];
    vt::store(t, v);
    float s = 0.f;
    for (int l = 0; l < W; ++l) s += t[l];
    return s;
}

// bwd_weights, w taps [k0, k0 + KB) of the line of one (kd, kh), over the rows (od, oh) it
// reaches: adds each tap's sum of dst x src into P[tap]. Two sets of sums (even and odd
// vectors of a row) keep twice the FMA chains in flight.
template <int KB, int STEP>
static void dwn_bww_taps(const conv_problem &p, const dwn_line &L, size_t k0, dim_t kd, dim_t kh,
                         const dwn_rows &src, const dwn_rows &dst, float *P, dwn_prefetch *ahead) {
    const dwn_wtap *wt = L.taps.data() + k0;
    const dim_t nvec = div_up(L.nq, W), nk = dim_t(L.taps.size());
    V acc[2][KB];
#pragma GCC unroll 8
    for (int k = 0; k < KB; ++k) acc[0][k] = acc[1][k] = vt::zero();
    // Vector v of a row into sum set u.
    auto vec = [&](const float *const *x, const float *drow, dim_t v, int u) {
        const dim_t q0 = v * W;
        if (L.inside[size_t(v)]) {
            const V g = vt::load(drow + q0);
#pragma GCC unroll 8
            for (int k = 0; k < KB; ++k) {
                const float *xk = x[k] + STEP * q0;
                const V a = STEP == 2 ? vt::even(vt::load(xk), vt::load(xk + W)) : vt::load(xk);
                acc[u][k] = vt::fma(a, g, acc[u][k]);
            }
            return;
        }
        const V g = vt::load_mask(drow + q0, vt::mask(int(imin(W, L.nq - q0))));
        const size_t j0 = size_t(v * nk) + k0;
        const dwn_mask *mk = L.masks.data() + j0;
#pragma GCC unroll 8
        for (int k = 0; k < KB; ++k) {
            const float *xk = x[k] + STEP * q0;
            const dwn_mask *pk = STEP == 2 ? L.pair_masks.data() + 2 * (j0 + size_t(k)) : nullptr;
            const V a = STEP == 2
                            ? vt::even(vt::load_mask(xk, pk[0].m), vt::load_mask(xk + W, pk[1].m))
                            : vt::load_mask(xk, mk[k].m);
            acc[u][k] = vt::fma_mask(a, g, acc[u][k], mk[k].m);
        }
    };
    for (dim_t od = 0; od < p.o[0]; ++od) {
        const dim_t id = dw_fwd_reach(p, 0, od, kd);
        for (dim_t oh = 0; oh < p.o[1]; ++oh) {
            if (ahead) ahead[0].rows_for(od * p.o[1] + oh), ahead[1].rows_for(od * p.o[1] + oh);
            const dim_t ih = dw_fwd_reach(p, 1, oh, kh);
            if (id < 0 || ih < 0) continue;
            const float *srow = src.row(id, ih), *drow = dst.row(od, oh);
            const float *x[KB];
#pragma GCC unroll 8
            for (int k = 0; k < KB; ++k) x[k] = srow + wt[k].phase * src.plen + wt[k].koff;
            dim_t v = 0;
            for (; v + 2 <= nvec; v += 2) {
                vec(x, drow, v, 0);
                vec(x, drow, v + 1, 1);
            }
            if (v < nvec) vec(x, drow, v, 0);
        }
    }
#pragma GCC unroll 8
    for (int k = 0; k < KB; ++k)
        P[(kd * p.k[1] + kh) * p.k[2] + wt[k].kw] += dwn_hsum(vt::add(acc[0][k], acc[1][k]));
}

constexpr int dwn_kb = 4;  // w taps per pass of bwd_weights (two sets of sums: 8 registers)

static void dwn_bww_any(int kb, dim_t step, const conv_problem &p, const dwn_line &L, size_t k0,
                        dim_t kd, dim_t kh, const dwn_rows &src, const dwn_rows &dst, float *P,
                        dwn_prefetch *ahead) {
    using fn = void (*)(const conv_problem &, const dwn_line &, size_t, dim_t, dim_t,
                        const dwn_rows &, const dwn_rows &, float *, dwn_prefetch *);
    static constexpr fn by_step[2][dwn_kb] = {
        {dwn_bww_taps<1, 1>, dwn_bww_taps<2, 1>, dwn_bww_taps<3, 1>, dwn_bww_taps<4, 1>},
        {dwn_bww_taps<1, 2>, dwn_bww_taps<2, 2>, dwn_bww_taps<3, 2>, dwn_bww_taps<4, 2>}};
    by_step[step == 2][kb - 1](p, L, k0, kd, kh, src, dst, P, ahead);
}

template <int DT>
static void dwn_bwd_weights(const dw_ncx_plan &pl, const conv_args &args) {
    using T = typename dw_elem<DT>::T;
    const conv_problem &p = pl.p;
    const T *src = static_cast<const T *>(args.src), *dst = static_cast<const T *>(args.dst);
    const dim_t ksp = p.ksp(), C = p.g, part = C * ksp;
    const dim_t s = dw_ncx_src_phases(p);
    const dwn_line L = dwn_fwd_line(p);
    const dwn_room room{dwn_stage_floats(p.dt, p.i, s), dwn_stage_floats(p.dt, p.o, 1),
                        imax(p.i[2], p.o[2])};
    scratch mem(pl.nthr * room.per);
    scratch partials(pl.nthr * part);
    parallel(pl.nthr, [&](int ithr, int nt) {
        float *base = mem.p + ithr * room.per;
        float *P = partials.p + ithr * part;
        for (dim_t x = 0; x < part; ++x) P[x] = 0.f;
        dim_t s0, e0;
        split(p.mb * C, nt, ithr, s0, e0);
        for (dim_t x = s0; x < e0; ++x) {
            const dim_t n = x / C, c = x % C;
            float *tmp = base + room.at[2];
            const dwn_rows sr = dwn_input(p.dt, src + n * p.src.n + c * p.src.c, p.src, p.i, s, tmp,
                                          base + room.at[0]);
            const dwn_rows dr = dwn_input(p.dt, dst + n * p.dst.n + c * p.dst.c, p.dst, p.o, 1, tmp,
                                          base + room.at[1]);
            float *Pc = P + c * ksp;
            // The first pass over the rows reads the plane from memory (dwn_prefetch); the
            // others find it in cache.
            const bool in_place = p.dt == data_type::f32 && s == 1;
            dwn_prefetch ahead[2] = {{sr, p.i, p.o[0] * p.o[1], in_place},
                                     {dr, p.o, p.o[0] * p.o[1], in_place}};
            bool first = true;
            for (dim_t kd = 0; kd < p.k[0]; ++kd)
                for (dim_t kh = 0; kh < p.k[1]; ++kh)
                    for (size_t k0 = 0; k0 < L.taps.size(); k0 += dwn_kb) {
                        const int kb = int(imin(dwn_kb, dim_t(L.taps.size() - k0)));
                        dwn_bww_any(kb, L.step, p, L, k0, kd, kh, sr, dr, Pc,
                                    first ? ahead : nullptr);
                        first = false;
                    }
        }
    });
    // The partials in thread order, rounded once.
    parallel(pl.nthr, [&](int ithr, int nt) {
        const weights_layout &l = p.wei;
        dim_t xs, xe;
        split(part, nt, ithr, xs, xe);
        for (dim_t x = xs; x < xe; ++x) {
            const dim_t c = x / ksp, t = x % ksp;
            const dim_t kw = t % p.k[2], kh = (t / p.k[2]) % p.k[1], kd = t / (p.k[2] * p.k[1]);
            float sum = partials.p[x];
            for (int q = 1; q < pl.nthr; ++q) sum += partials.p[q * part + x];
            store_elem(p.dt, args.out, c * l.oc + kd * l.sp[0] + kh * l.sp[1] + kw * l.sp[2], sum);
        }
    });
}

template <int DT>
static void dwn_run(const dw_ncx_plan &pl, const conv_args &args) {
    const conv_problem &p = pl.p;
    if (p.dir == conv_direction::bwd_weights) {
        dwn_bwd_weights<DT>(pl, args);
        return;
    }
    // Weights [channel][tap] f32.
    const dim_t ksp = p.ksp(), C = p.g;
    scratch w(C * ksp);
    const weights_layout &l = p.wei;
    for (dim_t c = 0; c < C; ++c)
        for (dim_t t = 0; t < ksp; ++t) {
            const dim_t kw = t % p.k[2], kh = (t / p.k[2]) % p.k[1], kd = t / (p.k[2] * p.k[1]);
            w.p[c * ksp + t] =
                load_elem(p.dt, args.wei, c * l.oc + kd * l.sp[0] + kh * l.sp[1] + kw * l.sp[2]);
        }
    scratch bias(p.with_bias ? C + W : 0);
    if (p.with_bias) pack_bias(p, args.bias, C, bias.p);
    dwn_fwd_or_bwd_data<DT>(pl, args, w.p, p.with_bias ? bias.p : nullptr);
}

void run_depthwise_ncx(const dw_ncx_plan &pl, const conv_args &args) {
    switch (pl.p.dt) {
        case data_type::bf16:
            dwn_run<dw_bf16>(pl, args);
            return;
        case data_type::f16:
            dwn_run<dw_f16>(pl, args);
            return;
        default:
            dwn_run<dw_f32>(pl, args);
            return;
    }
}
