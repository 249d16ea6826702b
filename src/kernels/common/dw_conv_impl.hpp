// The depthwise kernel (kernels/dw_kernels.hpp): fwd and bwd_data over one line engine, and
// the entry point. Included inside an ISA's namespace after kernel_helpers.hpp,
// direct_conv_impl.hpp (data_operand, pack_bias), dw_elements.hpp, dw_planes.hpp and
// dw_bwd_weights_impl.hpp.
//
// Both directions compute lines of outputs along w: output q of a line reads input pixel
// q*a + koff[k] for each tap k along w (fwd: a = stride, koff = kw*dl - pb; bwd_data, one line
// per stride phase r: a = 1, koff = (r + pb - kw*dl)/s for the kw whose division is exact),
// from each of the input rows the (kd, kh) taps reach, in each plane (dw_planes.hpp: one
// without copies). Weights are packed once per execute as [plane][tap][lane] f32, lanes padded
// to whole vectors with zeros.

// The w axis of one line.
struct dw_wline {
    dim_t nq = 0;                                  // outputs
    dim_t a = 1;                                   // input pixels per output step
    dim_t in_w = 0;                                // input pixels of a row
    const dim_t *koff = nullptr, *kidx = nullptr;  // per w tap: input offset, kw
    int nk = 0;
    dim_t q_lo = 0, q_hi = 0;      // outputs [q_lo, q_hi) read every tap inside the row
    dim_t out0 = 0, out_step = 1;  // output q is pixel out0 + q * out_step of the output row
    // Whether a tap at offset koff reads inside the row for some output. A tap that reads only
    // padding is left out of the line: it adds nothing, and with the huge pads and dilations
    // the API accepts, its offset times the pixel stride would overflow.
    bool reaches(dim_t koff) const {
        return imax(0, ceil_div(-koff, a)) < imin(nq, floor_div(in_w - 1 - koff, a) + 1);
    }
    void add_tap(dim_t *koffs, dim_t *kidxs, dim_t koff, dim_t kw) {
        if (!reaches(koff)) return;
        koffs[nk] = koff;
        kidxs[nk++] = kw;
    }
    void set_inside() {
        dim_t lo = 0, hi = nq;
        for (int k = 0; k < nk; ++k) {
            lo = imax(lo, ceil_div(-koff[k], a));
            hi = imin(hi, floor_div(in_w - 1 - koff[k], a) + 1);
        }
        q_lo = lo;
        q_hi = imax(lo, hi);
    }
};

// One tap of one line: its input row, its packed weights, its offset along w (the border
// checks, and the address of each pixel it reads: row + (q * a + koff) * ips).
template <typename T>
struct dw_tap {
    const T *row;  // the tap's input row, at pixel 0 channel 0
    const float *w;
    dim_t koff;  // the input pixel output 0 reads (far in the padding with a pad near 2^62)
};

// One line of one output row: its input rows (one per (kd, kh) tap that reaches them), the
// packed weights, the output.
template <int DT>
struct dw_line_job {
    using T = typename dw_elem<DT>::T;
    const dw_wline *L;
    const T *const *rows;  // input rows, at pixel 0 channel 0
    const dim_t *wrows;    // tap index of (kd, kh, kw = 0) for each row
    int nrows;
    dim_t ips;  // input pixel stride (elements)
    const float *wp;
    dim_t cpad;          // channels padded to whole vectors: the tap stride of wp
    const float *bias;   // padded like wp, or null
    T *out;              // output pixel q = 0, channel 0
    dim_t ostep;         // elements between outputs q and q + 1
    dw_tap<T> *taps;     // room for every tap (ksp): the (row, w tap) pairs, flattened by dw_line
    dw_ahead<T> *ahead;  // the next line's new rows, stepped once per channel group and block
    bool stream;         // whole vectors stored past the caches (dw_plan::stream_output)
    // f32 with vectors shifted onto whole lines (dw_lane_shift): the lanes of the first vector
    // that are channels of the pixel; head is false without a shift.
    bool head;
    mask_t mh;
    // Streamed f32 rows whose pixels share a line (the shift, with the pixel stride equal to
    // the channels): the row's line between pixels x - 1 and x is slot x of this stash, W
    // floats, filled by pixel x's first vector and pixel x - 1's last (dw_flush_shared_lines).
    // Null: the first and last vectors are stored in place.
    float *stash;
};

// Two vectors of bf16/f16 results, one line, streamed (T: looked up where it is used, only by
// the traits that round from their registers).
template <data_type DT, typename T = vt>
static inline void dw_stream_line(uint16_t *p, typename T::V lo, typename T::V hi) {
    T::template stream_half2<DT>(p, lo, hi);
}

// One input pixel's NV vectors of channels (at x): widened vector by vector, or as the two
// halves of a split block (dw_split_block).
template <int DT, int NV, bool TAIL, bool HEAD>
[[gnu::always_inline]] static inline void dw_load_pixel(const typename dw_elem<DT>::T *x,
                                                        V (&xv)[NV], int n, mask_t mk,
                                                        mask_t mh) {
    if constexpr (dw_split_block<DT, NV, TAIL>) {
        vt::load_bf16_split(x, xv[0], xv[1]);
    } else {
#pragma GCC unroll 4
        for (int v = 0; v < NV; ++v) xv[v] = dw_load_v<DT, NV, TAIL, HEAD>(x + v * W, v, n, mk, mh);
    }
}

// acc += one input pixel's NV vectors of channels (at x) times the tap's weights.
template <int DT, int NV, bool TAIL, bool HEAD>
[[gnu::always_inline]] static inline void dw_madd_pixel(V (&acc)[NV],
                                                        const typename dw_elem<DT>::T *x,
                                                        const V (&wv)[NV], int n, mask_t mk,
                                                        mask_t mh) {
    V xv[NV];
    dw_load_pixel<DT, NV, TAIL, HEAD>(x, xv, n, mk, mh);
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) acc[v] = vt::fma(xv[v], wv[v], acc[v]);
}

// Whether dw_rows_of_three computes this line: a stride of 1 or 2 (a) and three taps along w
// at consecutive offsets, ascending (the forward's kw) or, at a = 1, descending (a data
// gradient's stride phase: a stride-1 3x3, or a stride-2 kernel of 5). Returns the lowest
// offset, or INT64_MIN when the line is not of that kind; `desc` the order.
static inline dim_t dw_three_consecutive(const dw_wline &L, bool &desc) {
    if ((L.a != 1 && L.a != 2) || L.nk != 3) return INT64_MIN;
    const dim_t step = L.koff[1] - L.koff[0];
    if ((step != 1 && step != -1) || L.koff[2] - L.koff[1] != step) return INT64_MIN;
    desc = step < 0;
    if (desc && L.a != 1) return INT64_MIN;
    return imin(L.koff[0], L.koff[2]);
}

// The taps of a block on a line of three consecutive taps at stride A (dw_three_consecutive):
// each of the A * (UR - 1) + 3 input pixels of a row is loaded once and multiplied by the (up
// to) three taps that read it, where the tap loop loads it once per tap (3 UR loads: at stride
// 2, 17 against 24). The loads bound the tap loop: one 64-byte load per multiply-add (f32), and
// a Zen 5 core sustained about one such load per cycle, half its FMA rate. Each output sums the
// same products in the same order as the tap loop (the pixels visited in the taps' order of
// offsets), so the results are the same bits. CHECK (a block not INSIDE: at a border, or the
// line's last, of m < UR outputs): pixels outside the row are skipped, as the tap loop skips
// the taps that read them (outputs q >= m are computed from the pixels that exist, and not
// stored).
template <int DT, int NV, bool TAIL, bool HEAD, int UR, int A, bool DESC, bool CHECK>
[[gnu::always_inline]] static inline void dw_rows_of_three(V (&acc)[UR][NV],
                                                           const dw_line_job<DT> &j, int ntaps,
                                                           dim_t q0, dim_t c0, int n, mask_t mk,
                                                           dim_t kmin) {
    using T = typename dw_elem<DT>::T;
    const dim_t ips = j.ips;
    auto row_of_three = [&](int t) __attribute__((always_inline)) {
        V wv[3][NV];
#pragma GCC unroll 3
        for (int k = 0; k < 3; ++k)
#pragma GCC unroll 4
            for (int v = 0; v < NV; ++v)
                wv[DESC ? 2 - k : k][v] = vt::load(j.taps[t + k].w + c0 + v * W);
        // (Addresses only of pixels that exist: with pads near 2^62 the first pixel's offset
        // times the pixel stride would not fit; the pixel index does, as in the tap loop.)
        const T *row = j.taps[t].row;
        const dim_t ip0 = q0 * A + kmin, in_w = j.L->in_w;
        constexpr int npx = A * (UR - 1) + 3;
#pragma GCC unroll 32
        for (int i = 0; i < npx; ++i) {
            const int px = DESC ? npx - 1 - i : i;
            if (CHECK && (ip0 + px < 0 || ip0 + px >= in_w)) continue;
            V xv[NV];
            dw_load_pixel<DT, NV, TAIL, HEAD>(row + (ip0 + px) * ips + c0, xv, n, mk, j.mh);
#pragma GCC unroll 3
            for (int d = 0; d < 3; ++d) {
                const int q = (px - d) / A;
                if (px >= d && (px - d) % A == 0 && q < UR)
#pragma GCC unroll 4
                    for (int v = 0; v < NV; ++v) acc[q][v] = vt::fma(xv[v], wv[d][v], acc[q][v]);
            }
        }
    };
    // One input row per three taps (dw_line). A 3x3 kernel's three rows are unrolled: with the
    // row loop kept, its blocks ran 1.06-1.14x slower in f32 (MobileNetV2's 3x3 forward, data
    // gradient and stride-2 forward, one image in cache, 1 thread, Zen 4); bf16 ran the same.
    if (ntaps == 9) {
        row_of_three(0);
        row_of_three(3);
        row_of_three(6);
    } else {
        for (int t = 0; t + 3 <= ntaps; t += 3) row_of_three(t);
    }
}

// Outputs [q0, q0 + m) of channels [c0, c0 + NV*W) (the last vector partial when TAIL: n lanes).
// INSIDE: m == ur and every tap reads inside the row, no checks. The taps are one flat list,
// so the loop keeps few integers live (the pixels' addresses are two bases and two strides).
// HEAD: the first vector starts before channel 0 (the line's first channel group, j.mh).
template <int DT, int NV, bool TAIL, bool HEAD, int UR, bool INSIDE>
static void dw_block(const dw_line_job<DT> &j, int ntaps, dim_t q0, int m, dim_t c0, int n,
                     mask_t mk) {
    using T = typename dw_elem<DT>::T;
    const dw_wline &L = *j.L;
    V acc[UR][NV];
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) {
        const V b = j.bias ? vt::load(j.bias + c0 + v * W) : vt::zero();
#pragma GCC unroll 16
        for (int q = 0; q < UR; ++q) acc[q][v] = b;
    }
    // Addresses only of pixels that are read: with a stride and pads near 2^60 (taps far in the
    // padding) the stride times the pixel stride, or a tap's offset times it, does not fit in
    // 64 bits (UBSan in CI's fuzzer).
    const dim_t ips = j.ips;
    // (With 32 registers: the accumulators, three taps' weights and a pixel.)
    if constexpr (UR >= 8) {
        bool desc = false;
        const dim_t kmin = dw_three_consecutive(L, desc);
        if (kmin != INT64_MIN && ntaps % 3 == 0) {
            constexpr bool C = !INSIDE;
            if (desc)
                dw_rows_of_three<DT, NV, TAIL, HEAD, UR, 1, true, C>(acc, j, ntaps, q0, c0, n, mk,
                                                                     kmin);
            else if (L.a == 1)
                dw_rows_of_three<DT, NV, TAIL, HEAD, UR, 1, false, C>(acc, j, ntaps, q0, c0, n,
                                                                      mk, kmin);
            else
                dw_rows_of_three<DT, NV, TAIL, HEAD, UR, 2, false, C>(acc, j, ntaps, q0, c0, n,
                                                                      mk, kmin);
            ntaps = 0;  // (done: the tap loop below is skipped)
        }
    }
    for (int t = 0; t < ntaps; ++t) {
        const dw_tap<T> tp = j.taps[t];
        V wv[NV];
#pragma GCC unroll 4
        for (int v = 0; v < NV; ++v) wv[v] = vt::load(tp.w + c0 + v * W);
        const dim_t i0 = q0 * L.a + tp.koff;  // (the line's outputs' reach fits)
        // In a border block most taps still read inside for every pixel: only the others
        // check each pixel.
        if (INSIDE || (m == UR && i0 >= 0 && i0 + (UR - 1) * L.a < L.in_w)) {
            // (UR - 1 strides lie inside the row: the step fits.)
            const dim_t step = L.a * ips;
            const T *x = tp.row + i0 * ips + c0;
            const T *xb = x + (UR / 2) * step;
#pragma GCC unroll 16
            for (int q = 0; q < UR; ++q)
                dw_madd_pixel<DT, NV, TAIL, HEAD>(
                    acc[q], q < UR / 2 ? x + q * step : xb + (q - UR / 2) * step, wv, n, mk, j.mh);
        } else {
            // Constant trip count: acc stays in registers; the taps in the padding are skipped.
#pragma GCC unroll 16
            for (int q = 0; q < UR; ++q) {
                // Only for pixels that exist: q * stride past them may not fit in 64 bits.
                const dim_t iw = q < m ? i0 + q * L.a : -1;
                if (iw >= 0 && iw < L.in_w)
                    dw_madd_pixel<DT, NV, TAIL, HEAD>(acc[q], tp.row + iw * ips + c0, wv, n, mk,
                                                      j.mh);
            }
        }
    }
    const dim_t os = j.ostep;  // a local: the stores may not alias it
    T *o = j.out + q0 * os + c0;
    if constexpr (DT == dw_f32) {
        if (j.stream) {
#pragma GCC unroll 16
            for (int q = 0; q < UR; ++q)
                if (INSIDE || q < m)
#pragma GCC unroll 4
                    for (int v = 0; v < NV; ++v) {
                        // (Pixel x of the row: the stash's slots x and x + 1.)
                        float *slot =
                            j.stash ? j.stash + (L.out0 + (q0 + q) * L.out_step) * W : nullptr;
                        if (HEAD && v == 0)
                            vt::store_mask(slot ? slot : o + q * os, acc[q][0], j.mh);
                        else if (TAIL && v == NV - 1)
                            vt::store_mask(slot ? slot + W : o + q * os + v * W, acc[q][v], mk);
                        else
                            vt::stream(o + q * os + v * W, acc[q][v]);
                    }
            return;
        }
    } else if constexpr (dw_split_block<DT, NV, TAIL>) {
#pragma GCC unroll 16
        for (int q = 0; q < UR; ++q)
            if (INSIDE || q < m) vt::store_bf16_merge(o + q * os, acc[q][0], acc[q][1], j.stream);
        return;
    } else if constexpr (NV == 2 && !TAIL && vector_traits_with_half_stores<vt>) {
        // bf16/f16: a block's two vectors are one 64-byte line of 32 rounded outputs, streamed
        // where aligned (vt::stream_half2; else stored plainly). A block of one vector, or a
        // tail, stores as below: half a line streamed would reach memory as a partial line.
        if (j.stream) {
            constexpr data_type dt = dw_elem<DT>::dt;
#pragma GCC unroll 16
            for (int q = 0; q < UR; ++q)
                if (INSIDE || q < m) dw_stream_line<dt>(o + q * os, acc[q][0], acc[q][1]);
            return;
        }
    }
#pragma GCC unroll 16
    for (int q = 0; q < UR; ++q)
        if (INSIDE || q < m)
#pragma GCC unroll 4
            for (int v = 0; v < NV; ++v)
                dw_store_v<DT, NV, TAIL, HEAD>(o + q * os + v * W, acc[q][v], v, n, mk, j.mh);
}

template <int DT, int NV, bool TAIL, bool HEAD, int UR>
static void dw_block_any(const dw_line_job<DT> &j, int ntaps, dim_t q0, int m, dim_t c0, int n,
                         mask_t mk) {
    const dw_wline &L = *j.L;
    if (m == UR && q0 >= L.q_lo && q0 + UR <= L.q_hi)
        dw_block<DT, NV, TAIL, HEAD, UR, true>(j, ntaps, q0, m, c0, n, mk);
    else
        dw_block<DT, NV, TAIL, HEAD, UR, false>(j, ntaps, q0, m, c0, n, mk);
}

// The first channel group of a line whose vectors are shifted (f32; j.head): its first vector
// is masked to the pixel's channels. (Never a tail as well: the shift applies to W channels or
// more, which fill the first vector's lanes from the shift on and reach into the next.)
template <int DT, int UR>
static void dw_head_block(const dw_line_job<DT> &j, int ntaps, dim_t q0, int m, int nv, bool tail,
                          int n, mask_t mk) {
    if constexpr (DT == dw_f32) {
        if (nv == 2 && !tail)
            dw_block_any<DT, 2, false, true, UR>(j, ntaps, q0, m, 0, n, mk);
        else if (nv == 2)
            dw_block_any<DT, 2, true, true, UR>(j, ntaps, q0, m, 0, n, mk);
        else
            dw_block_any<DT, 1, false, true, UR>(j, ntaps, q0, m, 0, n, mk);
    }
}

// The whole line, channel groups innermost: the few input pixels of a block stay in L1 while
// every channel group of them is computed.
template <int DT, int UR>
static void dw_line(const dw_line_job<DT> &j, dim_t C) {
    const dw_wline &L = *j.L;
    int ntaps = 0;
    for (int r = 0; r < j.nrows; ++r)
        for (int k = 0; k < L.nk; ++k)
            j.taps[ntaps++] = {j.rows[r], j.wp + (j.wrows[r] + L.kidx[k]) * j.cpad, L.koff[k]};
    const dim_t nvec = div_up(C, W);
    const int n = int(C - (nvec - 1) * W);  // lanes of the last vector
    const mask_t mk = vt::mask(n);
    const bool tail = n < W;
    for (dim_t q0 = 0; q0 < L.nq; q0 += UR) {
        const int m = int(imin(UR, L.nq - q0));
        for (dim_t v0 = 0; v0 < nvec; v0 += dw_nv_max) {
            j.ahead->step();
            const dim_t c0 = v0 * W;
            const bool last = v0 + dw_nv_max >= nvec;
            const int nv = int(imin(dw_nv_max, nvec - v0));
            if (v0 == 0 && j.head)
                dw_head_block<DT, UR>(j, ntaps, q0, m, nv, last && tail, n, mk);
            else if (nv == 2 && !(last && tail))
                dw_block_any<DT, 2, false, false, UR>(j, ntaps, q0, m, c0, n, mk);
            else if (nv == 2)
                dw_block_any<DT, 2, true, false, UR>(j, ntaps, q0, m, c0, n, mk);
            else if (!(last && tail))
                dw_block_any<DT, 1, false, false, UR>(j, ntaps, q0, m, c0, n, mk);
            else
                dw_block_any<DT, 1, true, false, UR>(j, ntaps, q0, m, c0, n, mk);
        }
    }
}

// Weights as [plane][tap][cpad] f32: lane shift + c of plane pp multiplies plane pp's input
// channel c (the lanes before it are zeros: dw_lane_shift); with `split_order` (bf16) in the
// order of the split blocks (dw_split_lanes).
static void dw_pack_weights(const dw_plan &pl, const void *user, dim_t cpad, int shift,
                            bool split_order, float *out) {
    const conv_problem &p = pl.p;
    const weights_layout &l = p.wei;
    const dim_t ksp = p.ksp(), C = pl.lanes;
    parallel(pl.nthr, [&](int ithr, int nt) {
        dim_t s, e;
        split(pl.planes * ksp, nt, ithr, s, e);
        for (dim_t x = s; x < e; ++x) {
            const dim_t t = x % ksp, pp = x / ksp;
            const dim_t kw = t % p.k[2], kh = (t / p.k[2]) % p.k[1], kd = t / (p.k[2] * p.k[1]);
            const dim_t toff = kd * l.sp[0] + kh * l.sp[1] + kw * l.sp[2];
            float *o = out + x * cpad;
            for (dim_t c = 0; c < shift; ++c) o[c] = 0.f;
            for (dim_t c = 0; c < C; ++c)
                o[shift + c] = load_elem(p.dt, user, dw_weight_offset(p, c, pp) + toff);
            for (dim_t c = shift + C; c < cpad; ++c) o[c] = 0.f;
            if (split_order) dw_split_lanes(o, C);
        }
    });
}

// The lines of one direction over images [0, nb) of a chunk: fwd one w line per output row
// (n, od, oh); bwd_data one per stride phase along w of each src row (n, id, ih). `reach`:
// dw_fwd_reach or dw_bwd_reach.
template <typename T>
struct dw_lines {
    const std::vector<dw_wline> *wl;  // the w lines of every output row
    dim_t od, oh;                     // output rows: extents along d and h
    dw_planes_view<T> in;             // image 0 of the chunk
    dw_view<T> out;                   // image 0 of the chunk
    const float *wp, *bias;
    dim_t cpad;
    dim_t lanes;  // the plan's, plus the shift: the views start `shift` elements early
    int shift;    // dw_lane_shift
};

// The lines that a streamed f32 row's pixels share (dw_line_job::stash), each streamed whole
// from the stash once the row's lines are done; the row's first pixel's first vector and its
// last pixel's last vector, which share their lines with no pixel of the row, masked in place.
// Each pixel's first and last vectors of a row 16 bytes past a line were two masked stores to
// one line, written in two stride-phase lines apart in time: MobileNetV2's stride-2 data
// gradient and the x2 upsampler ran 2.3x slower than on an aligned tensor (2 threads).
static void dw_flush_shared_lines(float *row, dim_t pixels, dim_t C, const float *stash, mask_t mh,
                                  mask_t mk) {
    // (row: the view's pixel 0, `shift` elements before channel 0; a pixel's first vector is
    // at row + x * C, and its last at row + (x + 1) * C.)
    vt::store_mask(row, vt::load(stash), mh);
    for (dim_t x = 1; x < pixels; ++x) vt::stream(row + x * C, vt::load(stash + x * W));
    vt::store_mask(row + pixels * C, vt::load(stash + pixels * W), mk);
}

template <int UR, int DT, auto reach>
static void dw_run_lines(const dw_plan &pl, const dw_lines<typename dw_elem<DT>::T> &li, dim_t nb) {
    using T = typename dw_elem<DT>::T;
    const conv_problem &p = pl.p;
    const dim_t ksp = p.ksp(), nrt = p.k[0] * p.k[1] * pl.planes, lines = nb * li.od * li.oh;
    const bool stream = pl.stream_output;
    // (Row pixels: the w lines' outputs together.)
    dim_t row_pixels = 0;
    for (const dw_wline &L : *li.wl) row_pixels += L.nq;
    // (At most 256 KB of stash a thread: a row of 4096 pixels of one 16-lane vector; a longer
    // row, a 1-D image, keeps its masked stores.)
    const bool stash_rows = DT == dw_f32 && stream && li.shift > 0 &&
                            li.out.w == li.lanes - li.shift && (row_pixels + 1) * W <= 65536;
    scratch stash_mem(stash_rows ? pl.nthr * (row_pixels + 1) * W : 0);
    // Per thread: the rows of the current and of the next line, the next line's new rows.
    std::vector<const T *> rows_mem(size_t(pl.nthr * 3 * nrt));
    std::vector<dim_t> wrows_mem(size_t(pl.nthr * 2 * nrt));
    std::vector<dw_tap<T>> taps_mem(size_t(pl.nthr * ksp * pl.planes));
    // Steps per line (channel groups of blocks of outputs), over which the next line's rows are
    // fetched.
    const dim_t groups = div_up(div_up(li.lanes, W), dw_nv_max);
    dim_t steps = 0;
    for (const dw_wline &L : *li.wl) steps += div_up(L.nq, UR) * groups;
    // (In double: only rows that exist are fetched, and theirs fit in memory, but the extents
    // of a problem with an empty input may reach the dim_t range.)
    const double in_w = double((*li.wl)[0].in_w),
                 span = in_w > 0 ? ((in_w - 1) * double(li.in.v.w) + double(li.lanes)) *
                                           double(sizeof(T)) +
                                       63.0
                                 : 0.0;
    const dim_t row_bytes = span < 0x1p62 ? dim_t(span) : dim_t(1) << 62;
    const dim_t per_step = div_up(div_up(row_bytes, imax(steps, 1)), 64) * 64;
    // The input rows of a line and their taps' first weights.
    auto rows_of = [&](dim_t line, const T **rows, dim_t *wrows) {
        const dim_t oh = line % li.oh, od = (line / li.oh) % li.od, n = line / (li.oh * li.od);
        return dw_input_rows<reach>(p, li.in, n, od, oh, rows, wrows);
    };
    parallel(pl.nthr, [&](int ithr, int nt) {
        const T **rows = rows_mem.data() + ithr * 3 * nrt, **next = rows + nrt,
                **fresh = next + nrt;
        dim_t *wrows = wrows_mem.data() + ithr * 2 * nrt, *next_w = wrows + nrt;
        float *stash = stash_rows ? stash_mem.p + ithr * (row_pixels + 1) * W : nullptr;
        dw_tap<T> *taps = taps_mem.data() + ithr * ksp * pl.planes;
        dim_t s, e;
        split(lines, nt, ithr, s, e);
        int nr = s < e ? rows_of(s, rows, wrows) : 0;
        for (dim_t line = s; line < e; ++line) {
            const dim_t oh = line % li.oh, od = (line / li.oh) % li.od, n = line / (li.oh * li.od);
            dw_ahead<T> ahead;
            int nn = 0;
            if (line + 1 < e) {
                nn = rows_of(line + 1, next, next_w);
                for (int r = 0; r < nn; ++r) {
                    bool seen = false;
                    for (int c = 0; c < nr && !seen; ++c) seen = rows[c] == next[r];
                    if (!seen) fresh[ahead.nrows++] = next[r];
                }
                ahead.rows = fresh;
                ahead.bytes = row_bytes;
                ahead.per_step = per_step;
                ahead.l2 = pl.fetch_to_l2;
            }
            for (const dw_wline &L : *li.wl) {
                const dw_line_job<DT> j{&L, rows, wrows, nr, li.in.v.w, li.wp, li.cpad, li.bias,
                                        li.out.at(n, od, oh, L.out0),
                                        // (Only lines of several outputs step: one output
                                        // per line may have a stride of 2^60, whose product
                                        // with the pixel stride does not fit.)
                                        L.nq > 1 ? L.out_step * li.out.w : 0, taps, &ahead, stream,
                                        li.shift > 0, dw_head_mask(li.shift), stash};
                dw_line<DT, UR>(j, li.lanes);
            }
            if constexpr (DT == dw_f32)
                if (stash)
                    dw_flush_shared_lines(li.out.at(n, od, oh, 0), row_pixels, li.out.w, stash,
                                          dw_head_mask(li.shift), vt::mask(li.shift));
            std::swap(rows, next);
            std::swap(wrows, next_w);
            nr = nn;
        }
        if (stream) vt::stream_fence();  // the streamed stores land before the threads join
    });
}

// fwd: output q of a line reads input pixel q*stride + kw*dl - pb.
static std::vector<dw_wline> dw_fwd_wlines(const conv_problem &p, std::vector<dim_t> &koff,
                                           std::vector<dim_t> &kidx) {
    koff.resize(size_t(p.k[2]));
    kidx.resize(size_t(p.k[2]));
    std::vector<dw_wline> wl(1);
    dw_wline &L = wl[0];
    L.nq = p.o[2];
    L.a = p.s[2];
    L.in_w = p.i[2];
    for (dim_t kw = 0; kw < p.k[2]; ++kw)
        L.add_tap(koff.data(), kidx.data(), kw * p.dl[2] - p.pb[2], kw);
    L.koff = koff.data();
    L.kidx = kidx.data();
    L.set_inside();
    return wl;
}

// bwd_data, stride phases along w: src pixels r + s*q are reached by the kw with
// (r + pb - kw*dl) divisible by s, from the consecutive dst pixels q + (r + pb - kw*dl)/s.
static std::vector<dw_wline> dw_bwd_wlines(const conv_problem &p, std::vector<dim_t> &koff,
                                           std::vector<dim_t> &kidx) {
    const dim_t nph = imin(p.s[2], p.i[2]);
    koff.resize(size_t(p.k[2]));
    kidx.resize(size_t(p.k[2]));
    std::vector<dw_wline> phases(static_cast<size_t>(nph));
    dim_t used = 0;
    for (dim_t r = 0; r < nph; ++r) {
        dw_wline &L = phases[size_t(r)];
        L.nq = div_up(p.i[2] - r, p.s[2]);
        L.a = 1;
        L.in_w = p.o[2];
        L.out0 = r;
        L.out_step = p.s[2];
        L.koff = koff.data() + used;
        L.kidx = kidx.data() + used;
        for (dim_t kw = 0; kw < p.k[2]; ++kw) {
            const dim_t qw = r + p.pb[2] - kw * p.dl[2];
            if (floor_div(qw, p.s[2]) * p.s[2] == qw)
                L.add_tap(koff.data() + used, kidx.data() + used, floor_div(qw, p.s[2]), kw);
        }
        used += L.nk;
        L.set_inside();
    }
    return phases;
}

// fwd (in = src, out = dst) or bwd_data (in = dst, out = src), a chunk of images at a time:
// each chunk's planes are built, then its lines computed.
template <int UR, int DT>
static void dw_fwd_or_bwd_data(const dw_plan &pl, const dw_view<const typename dw_elem<DT>::T> &in,
                               const dw_view<typename dw_elem<DT>::T> &out, const float *wp,
                               dim_t cpad, const float *bias, int shift) {
    using T = typename dw_elem<DT>::T;
    const conv_problem &p = pl.p;
    const bool fwd = p.dir == conv_direction::fwd;
    std::vector<dim_t> koff, kidx;
    const std::vector<dw_wline> wl =
        fwd ? dw_fwd_wlines(p, koff, kidx) : dw_bwd_wlines(p, koff, kidx);
    const dim_t *in_sp = fwd ? p.i : p.o, *out_sp = fwd ? p.o : p.i;
    const dw_plane_room<T> room(pl, in_sp);
    for (dim_t n0 = 0; n0 < p.mb; n0 += pl.chunk) {
        const dim_t nb = imin(pl.chunk, p.mb - n0);
        const dw_lines<T> li{&wl,
                             out_sp[0],
                             out_sp[1],
                             dw_chunk_planes(pl, in, in_sp, n0, nb, room),
                             {out.p + n0 * out.n, out.n, out.d, out.h, out.w},
                             wp,
                             bias,
                             cpad,
                             pl.lanes + shift,
                             shift};
        if (fwd)
            dw_run_lines<UR, DT, dw_fwd_reach>(pl, li, nb);
        else
            dw_run_lines<UR, DT, dw_bwd_reach>(pl, li, nb);
    }
}

template <int UR, int DT>
static void dw_run_typed(const dw_plan &pl, const conv_args &args,
                         const dw_view<typename dw_elem<DT>::T> &src,
                         const dw_view<typename dw_elem<DT>::T> &dst, void *wei_out) {
    using T = typename dw_elem<DT>::T;
    const conv_problem &p = pl.p;
    const dim_t C = pl.lanes;
    // The vectors' shift onto whole vectors of memory, from the tensor they store (fwd,
    // bwd_data) or read most (bwd_weights: src, once per tap along w). Not with planes: the
    // input side is then rebuilt, lane by lane, from the tensor's own channel 0 (a channel
    // multiplier makes planes of one plane); nor with no data (an empty batch may come with
    // null tensors, and nothing is read).
    const bool bwd_w = p.dir == conv_direction::bwd_weights;
    const int shift = !pl.copies && p.mb > 0 && src.p && dst.p
                          ? dw_lane_shift(bwd_w || p.dir == conv_direction::bwd_data ? src : dst, C)
                          : 0;
    const dim_t cpad = div_up(C + shift, W) * W;
    // The views start `shift` elements before channel 0: the first vector's lanes before it
    // are masked (dw_head_mask), never read nor written.
    const dw_view<const T> csrc{src.p - shift, src.n, src.d, src.h, src.w},
        cdst{dst.p - shift, dst.n, dst.d, dst.h, dst.w};
    if (bwd_w) {
        auto in_place = [&](dim_t n0, dim_t, const auto &body) {
            body(dw_view<const T>{csrc.p + n0 * csrc.n, csrc.n, csrc.d, csrc.h, csrc.w},
                 dw_view<const T>{cdst.p + n0 * cdst.n, cdst.n, cdst.d, cdst.h, cdst.w});
        };
        dw_bwd_weights<DT>(pl, imax(p.mb, 1), in_place, cpad, shift, wei_out);
        return;
    }
    scratch w(pl.planes * p.ksp() * cpad);
    // (bf16: weights and bias in the order of the split blocks, dw_split_block.)
    dw_pack_weights(pl, args.wei, cpad, shift, DT == dw_bf16, w.p);
    scratch bias(p.with_bias ? shift + C + W : 0);
    if (p.with_bias) {
        for (int c = 0; c < shift; ++c) bias.p[c] = 0.f;
        pack_bias(p, args.bias, C, bias.p + shift);
    }
    if (DT == dw_bf16 && p.with_bias) dw_split_lanes(bias.p, C);
    const float *bp = p.with_bias ? bias.p : nullptr;
    if (p.dir == conv_direction::fwd)
        dw_fwd_or_bwd_data<UR, DT>(pl, csrc, {dst.p - shift, dst.n, dst.d, dst.h, dst.w}, w.p, cpad,
                                   bp, shift);
    else
        dw_fwd_or_bwd_data<UR, DT>(pl, cdst, {src.p - shift, src.n, src.d, src.h, src.w}, w.p, cpad,
                                   bp, shift);
}

// Images [n0, n0 + nb) of src (src_side) or dst as the NCX path computes them: a dense
// channels-last f32 copy (filled from the user's tensor when `read`), or the tensor itself
// when it is f32 with contiguous channels.
static data_operand dw_chunk_operand(const dw_plan &pl, bool src_side, void *user, bool read,
                                     dim_t n0, dim_t nb) {
    const conv_problem &p = pl.p;
    const data_layout &l = src_side ? p.src : p.dst;
    return data_operand(p, pl.nthr, p.dt == data_type::f32 && l.c == 1, user, l,
                        p.g * (src_side ? p.icg : p.ocg), src_side ? p.i : p.o, read, n0, nb);
}

template <int UR>
static void dw_run(const dw_plan &pl, const conv_args &args) {
    const conv_problem &p = pl.p;
    const bool src_out = p.dir == conv_direction::bwd_data, dst_out = p.dir == conv_direction::fwd;
    void *src_user = const_cast<void *>(src_out ? args.out : args.src);
    void *dst_user = const_cast<void *>(dst_out ? args.out : args.dst);
    if (pl.native) {
        auto view = [](void *ptr, const data_layout &l, auto *tag) {
            using T = std::remove_pointer_t<decltype(tag)>;
            return dw_view<T>{static_cast<T *>(ptr), l.n, l.sp[0], l.sp[1], l.sp[2]};
        };
        switch (p.dt) {
            case data_type::bf16:
                dw_run_typed<UR, dw_bf16>(pl, args, view(src_user, p.src, (uint16_t *)nullptr),
                                          view(dst_user, p.dst, (uint16_t *)nullptr), args.out);
                return;
            case data_type::f16:
                dw_run_typed<UR, dw_f16>(pl, args, view(src_user, p.src, (uint16_t *)nullptr),
                                         view(dst_user, p.dst, (uint16_t *)nullptr), args.out);
                return;
            default:
                dw_run_typed<UR, dw_f32>(pl, args, view(src_user, p.src, (float *)nullptr),
                                         view(dst_user, p.dst, (float *)nullptr), args.out);
                return;
        }
    }
    // Channels not contiguous (NCX): dense channels-last f32 copies of a chunk of images at a
    // time (dw_plan::ncx_chunk), the output written back after each. Each image's result is
    // the same whatever the chunking (the lines of one image never read another's); the
    // weight gradient sums every chunk into the same per-thread partials.
    if (p.dir == conv_direction::bwd_weights) {
        const dim_t C = pl.lanes, cpad = div_up(C, W) * W;
        auto chunk = [&](dim_t n0, dim_t nb, const auto &body) {
            const data_operand s_op = dw_chunk_operand(pl, true, src_user, true, n0, nb);
            const data_operand d_op = dw_chunk_operand(pl, false, dst_user, true, n0, nb);
            const fview &s = s_op.v, &d = d_op.v;
            body(dw_view<const float>{s.p, s.n, s.d, s.h, s.w},
                 dw_view<const float>{d.p, d.n, d.d, d.h, d.w});
        };
        dw_bwd_weights<dw_f32>(pl, pl.ncx_chunk, chunk, cpad, 0, args.out);
        return;
    }
    for (dim_t n0 = 0; n0 < imax(p.mb, 1); n0 += pl.ncx_chunk) {
        dw_plan cp = pl;
        cp.p.mb = imin(pl.ncx_chunk, p.mb - n0);
        const data_operand src_op = dw_chunk_operand(pl, true, src_user, !src_out, n0, cp.p.mb);
        const data_operand dst_op = dw_chunk_operand(pl, false, dst_user, !dst_out, n0, cp.p.mb);
        const fview &s = src_op.v, &d = dst_op.v;
        dw_run_typed<UR, dw_f32>(cp, args, {s.p, s.n, s.d, s.h, s.w}, {d.p, d.n, d.d, d.h, d.w},
                                 args.out);
        if (src_out) src_op.store(pl.nthr);
        if (dst_out) dst_op.store(pl.nthr);
    }
}

void run_depthwise(const dw_plan &pl, const conv_args &args) {
    // The register tile's pixels: the same rule as make_dw_kernel's (32 registers: 8, else 6).
    dw_run<(W >= 16 ? 8 : 6)>(pl, args);
}
