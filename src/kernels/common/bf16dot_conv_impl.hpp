// Direct convolution on vdpbf16ps (the bf16 microkernel, K packing 2): bf16 tensors, and f32
// tensors under fpmath_mode bf16 (rounded once to bf16 while packing). f32 accumulation, one
// rounding to the output type. Included after data_operands.hpp (data_operand, pack_bias)
// by the AVX512_BF16 unit (native instruction) and by the plain AVX-512 unit (bit-exact
// emulation), so the same source runs natively or emulated.
//
//   fwd, bwd_data: the gather schedule with K = channels of a group in pairs. A channel pair is
//     one 32-bit broadcast, straight from the user's tensor when it is bf16 with contiguous
//     channels and an even count per group; otherwise from a dense copy [pixel][g][Kp] whose
//     odd channel count is padded with a zero channel. Weights are packed VNNI once per run. A
//     bf16 output with contiguous channels whose rows fill their vectors is rounded in place by
//     the microkernel (make_bf16dot_kernel says when); any other output goes through an f32
//     copy, stored after.
//   bwd_weights: K is the pixel axis. src is transposed per row into [g][w phase][ic][column]
//     (w phase = iw mod stride, column = iw div stride plus a zero left margin), so the pixels
//     one tap reads along a dst row are consecutive and a pixel pair is one 32-bit broadcast;
//     margins are zero, so every tap reduces the whole dst row, pairs aligned at ow = 0.
//     diff_dst is packed as VNNI pixel pairs [row][g][ow/2][oc][2] (odd widths end with a zero
//     pixel). Both are packed by each thread a chunk of its rows at a time, just before the
//     chunk's products, and only the src rows and phases some tap reads; a row beyond the L2
//     budget has its diff_dst packed a chunk of pixels at a time. With few input channels the
//     taps along w share the register tiles, rows (kw, channel).

// The reduced-side data tensor of fwd/bwd_data as bf16 channel pairs.
struct pairs_operand {
    scratch copy;
    tview<bf16_t> v{};
    dim_t chan = 0;  // elements from one group's channels to the next (even)
    // (Not `used`: an empty operand, for the flattened forward, which reads its own copy.)
    pairs_operand(const conv_problem &p, int nthr, const void *user, const data_layout &l, dim_t cg,
                  const dim_t *sp, bool used = true)
        : copy(!used || in_place(p, l, cg)
                   ? 0
                   : div_up(p.mb * sp[0] * sp[1] * sp[2] * p.g * (cg + cg % 2), 2)) {
        if (!used) return;
        if (in_place(p, l, cg)) {
            v = user_view<bf16_t>(user, l);
            chan = cg;
            return;
        }
        chan = cg + cg % 2;
        const dim_t C = p.g * chan;
        bf16_t *out = reinterpret_cast<bf16_t *>(copy.p);
        v = {out, sp[0] * sp[1] * sp[2] * C, sp[1] * sp[2] * C, sp[2] * C, C};
        const bool contiguous = l.c == 1 && (p.dt == data_type::bf16 || p.dt == data_type::f32);
        // Row by row (flattened n, d, h; a long row split between threads), each row's pixels
        // in turn, as the flattened copy: no per-pixel divisions. (FCN's 21-channel x2
        // ConvTranspose, 360 KB of diff_dst pairs: the copy takes an eighth of the op, 2
        // threads, Zen 5, most of it reading the user's tensor; a second copy from cache takes
        // a third of the time.) f32 under fpmath_mode bf16 is rounded by vectors.
        for_row_pieces(nthr, p.mb * sp[0] * sp[1], sp[2], [&](dim_t r, dim_t w0, dim_t w1) {
            const dim_t h = r % sp[1], d = (r / sp[1]) % sp[0], n = r / (sp[1] * sp[0]);
            const dim_t row = n * l.n + d * l.sp[0] + h * l.sp[1];
            for (dim_t w = w0; w < w1; ++w) {
                const dim_t base = row + w * l.sp[2];
                bf16_t *o = out + (r * sp[2] + w) * C;
                for (dim_t g = 0; g < p.g; ++g) {
                    if (contiguous && p.dt == data_type::bf16)  // (odd channels: only the pad)
                        std::memcpy(o + g * chan, static_cast<const bf16_t *>(user) + base + g * cg,
                                    size_t(cg) * sizeof(bf16_t));
                    else if (contiguous)  // (f32 under fpmath_mode bf16: rounded by vectors)
                        vt::narrow(data_type::bf16,
                                   static_cast<const float *>(user) + base + g * cg, o + g * chan,
                                   cg);
                    else
                        for (dim_t c = 0; c < cg; ++c)
                            o[g * chan + c] = bf16_at(p.dt, user, base + (g * cg + c) * l.c);
                    if (cg % 2) o[g * chan + cg] = 0;
                }
            }
        });
    }
    // bf16 with contiguous channels and whole pairs per group: no copy.
    static bool in_place(const conv_problem &p, const data_layout &l, dim_t cg) {
        return p.dt == data_type::bf16 && l.c == 1 && cg % 2 == 0;
    }
};

// Whether no packed bf16 is infinite or NaN, checked by each packing thread on what it has
// just written (in cache). As in the f32 kernel's pack_weights: where the problem reads padding,
// the gathers multiply the zeros of padding (0 * inf = NaN), so a kernel that met a non-finite
// weight computes by the reference, which leaves padded taps out; the kernel guards itself, and
// dispatch's guard (a pass over all the user's weights, 6% of DCGAN's 4 MiB data gradient) is
// not put in front of it. The packed values are the ones multiplied: an f32 weight beyond bf16's
// range (fpmath_mode bf16) is caught as the infinity it becomes.
static bool bf16_finite(const bf16_t *v, dim_t n) {
    return bits_finite<uint16_t>(v, n, 1, uint16_t(0x7f80));
}

// Weights as VNNI pairs [g][tap][K/2][ldn][2]: fwd k = icg, n = ocg; bwd_data k = ocg, n = icg.
// Returns whether they are all finite (bf16_finite).
static bool pack_weight_pairs(const conv_problem &p, int nthr, const void *user, bool transposed,
                              dim_t ldn, bf16_t *out) {
    const weights_layout &l = p.wei;
    const dim_t ksp = p.ksp(), K = transposed ? p.ocg : p.icg, N = transposed ? p.icg : p.ocg;
    const dim_t per_tap = vnni_pairs_size(K, ldn);
    std::atomic<bool> finite{true};
    parallel(nthr, [&](int ithr, int nt) {
        dim_t s, e;
        split(p.g * ksp, nt, ithr, s, e);
        for (dim_t gt = s; gt < e; ++gt) {
            const dim_t g = gt / ksp, t = gt % ksp;
            if (!tap_is_read(p, t)) continue;  // (as the f32 kernel's pack_weights)
            const dim_t kw = t % p.k[2], kh = (t / p.k[2]) % p.k[1], kd = t / (p.k[2] * p.k[1]);
            const dim_t toff = kd * l.sp[0] + kh * l.sp[1] + kw * l.sp[2];
            const matrix_view v{const_cast<void *>(user), p.dt, g * p.ocg * l.oc + toff,
                                transposed ? l.oc : l.ic, transposed ? l.ic : l.oc};
            pack_bf16_pairs(v, K, N, ldn, out + gt * per_tap);
            if (!bf16_finite(out + gt * per_tap, per_tap))
                finite.store(false, std::memory_order_relaxed);
        }
    });
    return finite.load();
}

// The weights of bwd_data with its stride phases along w merged (direct_merges_w_phases,
// direct_plan.hpp) as VNNI pairs [tap (kd, kh, jd)][ocg/2][ldn][2]: column r * icg + c of tap
// jd is the weight (oc = k, ic = c) of kernel column kw = r + s * jd, the s sub-pixels' columns
// side by side; the columns past s * icg are zero. Each (tap, r) is packed by pack_bf16_pairs
// into the thread's panel of icg columns, then placed. Returns whether they are all finite.
static bool pack_w_merged_weight_pairs(const conv_problem &p, int nthr, const void *user, dim_t ldn,
                                       bf16_t *out) {
    const weights_layout &l = p.wei;
    const dim_t s = p.s[2], nd = p.k[2] / s, K = p.ocg, N = p.icg, KP = K / 2 + K % 2;
    const dim_t ntaps = w_merged_taps(p), per_tap = vnni_pairs_size(K, ldn);
    const dim_t per_sub = vnni_pairs_size(K, N);
    scratch panels(div_up(dim_t(nthr) * per_sub, 2));
    std::atomic<bool> finite{true};
    parallel(nthr, [&](int ithr, int nt) {
        dim_t b, e;
        split(ntaps, nt, ithr, b, e);
        bf16_t *sub = reinterpret_cast<bf16_t *>(panels.p) + ithr * per_sub;
        for (dim_t t = b; t < e; ++t) {
            const dim_t jd = t % nd, kh = (t / nd) % p.k[1], kd = t / (nd * p.k[1]);
            if (!tap_is_read(p, (kd * p.k[1] + kh) * p.k[2], false)) continue;  // (no gather's)
            bf16_t *o = out + t * per_tap;
            for (dim_t r = 0; r < s; ++r) {
                const dim_t kw = r + s * jd;
                const matrix_view v{const_cast<void *>(user), p.dt,
                                    kd * l.sp[0] + kh * l.sp[1] + kw * l.sp[2], l.oc, l.ic};
                pack_bf16_pairs(v, K, N, N, sub);
                for (dim_t kp = 0; kp < KP; ++kp)
                    std::memcpy(o + (kp * ldn + r * N) * 2, sub + kp * N * 2,
                                size_t(N) * 2 * sizeof(bf16_t));
            }
            for (dim_t kp = 0; kp < KP; ++kp)
                std::memset(o + (kp * ldn + s * N) * 2, 0,
                            size_t(ldn - s * N) * 2 * sizeof(bf16_t));
            if (!bf16_finite(o, per_tap)) finite.store(false, std::memory_order_relaxed);
        }
    });
    return finite.load();
}

// The forward with few input channels (direct_flattens_w: the first layer of a network, 3
// channels) reduces the kernel width and the channels together: one tap per (kd, kh), whose
// window of KW columns is KW x Kp consecutive bf16 of a copy of src [n][d][h][wpad][Kp], padded
// along w with zero columns (column x is iw = x - pb). K = KW x Kp rounded up to a pair (flat_k):
// the pairs run across the taps (kw, c), (kw, c + 1) ... (kw + 1, 0), and an odd window takes one
// element past its last column, the next column's channel 0, times a zero weight. By channel
// pairs alone each broadcast had 2 pairs to multiply, and the kernel lost to the f32 one.
// Kp is the channel count, with no zero channel (ResNet-50's stem: 11 pairs per window, where a
// zero fourth channel made 14), unless a copied pixel is not finite: 0 x inf would be NaN where
// the element past the window is a real pixel, so such a src is copied again with a zero
// channel (Kp even, no element past the window), and the weights are packed to match.
static dim_t flat_k(const conv_problem &p, dim_t Kp) {
    return p.k[2] * Kp + (p.k[2] * Kp) % 2;
}
static dim_t flat_padded_w(const conv_problem &p, dim_t Kp) {  // (as the f32 kernel's run_fwd)
    const dim_t windows = (p.o[2] - 1) * p.s[2] + p.k[2];
    // (The last window's element past its end lies in the row: one more column.)
    return imax(p.i[2] + p.pb[2] + p.pe[2], windows + (p.k[2] * Kp) % 2);
}
struct flat_pairs_operand {
    scratch copy;
    tview<bf16_t> v{};
    dim_t chan = 0;  // Kp
    // (Not `used`: an empty operand, for the forward by channel pairs.)
    // (Room for either copy: the one without a zero channel may have a longer row, one column
    // more, where the row is narrow: 7 channels, a 1-pixel image, kernel 3, pads 1.)
    flat_pairs_operand(const conv_problem &p, int nthr, const void *user, bool used)
        : copy(used ? div_up(p.mb * p.i[0] * p.i[1] *
                                 imax(flat_padded_w(p, p.icg) * p.icg,
                                      flat_padded_w(p, p.icg + 1) * (p.icg + 1)),
                             2)
                    : 0),
          chan(p.icg) {
        if (!used) return;
        // An odd window reads past its end: the copy must be finite (see above).
        const bool odd_window = (p.k[2] * chan) % 2 != 0;
        if (!fill(p, nthr, user, odd_window)) {
            chan = p.icg + 1;
            fill(p, nthr, user, false);
        }
    }

  private:
    // Copies src with `chan` channels a pixel. Returns false when `check` and a copied value
    // is not finite.
    bool fill(const conv_problem &p, int nthr, const void *user, bool check) {
        const data_layout &l = p.src;
        const dim_t wpad = flat_padded_w(p, chan), C = p.icg, Kp = chan, row = wpad * Kp;
        bf16_t *out = reinterpret_cast<bf16_t *>(copy.p);
        v = {out, p.i[0] * p.i[1] * row, p.i[1] * row, row, Kp};
        const dim_t rows = p.mb * p.i[0] * p.i[1];
        const bool contiguous_bf16 = p.dt == data_type::bf16 && l.c == 1;
        std::atomic<bool> finite{true};
        parallel(nthr, [&](int ithr, int nt) {
            dim_t s, e;
            split(rows, nt, ithr, s, e);
            for (dim_t r = s; r < e; ++r) {
                const dim_t h = r % p.i[1], d = (r / p.i[1]) % p.i[0], n = r / (p.i[1] * p.i[0]);
                const dim_t base = n * l.n + d * l.sp[0] + h * l.sp[1];
                bf16_t *o = out + r * row;
                // Zero columns left and right of the image (padding, and windows' overhang).
                std::memset(o, 0, size_t(p.pb[2] * Kp) * sizeof(bf16_t));
                const dim_t right = (p.pb[2] + p.i[2]) * Kp;
                std::memset(o + right, 0, size_t(row - right) * sizeof(bf16_t));
                bf16_t *px = o + p.pb[2] * Kp;
                if (contiguous_bf16 && Kp == C && l.sp[2] == C) {
                    // Dense pixels, no zero channel: the row is already the copy's layout.
                    std::memcpy(px, static_cast<const bf16_t *>(user) + base,
                                size_t(p.i[2] * C) * sizeof(bf16_t));
                } else if (contiguous_bf16) {
                    const bf16_t *in = static_cast<const bf16_t *>(user) + base;
                    // (A loop, not a memcpy per pixel: 1-7 channels, where the call cost as
                    // much as the rest of the copy.)
                    for (dim_t w = 0; w < p.i[2]; ++w, px += Kp) {
                        for (dim_t c = 0; c < C; ++c) px[c] = in[w * l.sp[2] + c];
                        if (Kp > C) px[C] = 0;
                    }
                } else {
                    for (dim_t w = 0; w < p.i[2]; ++w, px += Kp) {
                        for (dim_t c = 0; c < C; ++c)
                            px[c] = bf16_at(p.dt, user, base + w * l.sp[2] + c * l.c);
                        if (Kp > C) px[C] = 0;
                    }
                }
                if (check && !bf16_finite(o + p.pb[2] * Kp, p.i[2] * Kp))
                    finite.store(false, std::memory_order_relaxed);
            }
        });
        return finite.load();
    }
};

// Weights of the flattened forward as VNNI pairs [kd][kh][flat_k / 2][ldn][2]: row
// kw * Kp + c, zero for a padding channel (Kp even: each kw's channels are packed as an odd K,
// paired with zeros). Pairs across the taps (Kp odd): row by row, the rows of a pair from two
// taps, and a zero row past the window when KW x Kp is odd. Returns whether they are all finite
// (bf16_finite).
static bool pack_flat_weight_pairs(const conv_problem &p, int nthr, const void *user, dim_t Kp,
                                   dim_t ldn, bf16_t *out) {
    const weights_layout &l = p.wei;
    const dim_t taps = p.k[0] * p.k[1];
    std::atomic<bool> finite{true};
    if (Kp % 2) {
        const dim_t K = flat_k(p, Kp), window = p.k[2] * Kp;
        parallel(nthr, [&](int ithr, int nt) {
            dim_t s, e;
            split(taps, nt, ithr, s, e);
            for (dim_t th = s; th < e; ++th) {
                const dim_t kh = th % p.k[1], kd = th / p.k[1];
                bf16_t *o = out + th * K * ldn;
                for (dim_t r = 0; r < K; ++r) {
                    const dim_t kw = r / Kp, c = r % Kp;
                    const dim_t base = kd * l.sp[0] + kh * l.sp[1] + kw * l.sp[2] + c * l.ic;
                    bf16_t *row = o + (r / 2) * ldn * 2 + r % 2;
                    for (dim_t n = 0; n < p.ocg; ++n)
                        row[2 * n] = r < window ? bf16_at(p.dt, user, base + n * l.oc) : 0;
                    for (dim_t n = p.ocg; n < ldn; ++n) row[2 * n] = 0;
                }
                if (!bf16_finite(o, K * ldn)) finite.store(false, std::memory_order_relaxed);
            }
        });
        return finite.load();
    }
    parallel(nthr, [&](int ithr, int nt) {
        dim_t s, e;
        split(taps * p.k[2], nt, ithr, s, e);
        for (dim_t tw = s; tw < e; ++tw) {
            const dim_t kw = tw % p.k[2], kh = (tw / p.k[2]) % p.k[1], kd = tw / (p.k[2] * p.k[1]);
            const dim_t toff = kd * l.sp[0] + kh * l.sp[1] + kw * l.sp[2];
            const matrix_view v{const_cast<void *>(user), p.dt, toff, l.ic, l.oc};
            bf16_t *o = out + (tw / p.k[2] * p.k[2] + kw) * Kp * ldn;
            pack_bf16_pairs(v, p.icg, p.ocg, ldn, o);
            if (!bf16_finite(o, Kp * ldn)) finite.store(false, std::memory_order_relaxed);
        }
    });
    return finite.load();
}

// Runs f(plan, n0) over the plan's chunks of images (chunk_plan: its batch is the chunk's) when
// `copies`, so that each chunk's copies stay within the threads' L2; else once, over the whole
// batch with the plan itself: one parallel region, where nothing is copied.
template <class F>
static void for_image_chunks(const direct_plan &pl, bool copies, F &&f) {
    if (!copies) {
        if (pl.p.mb > 0) f(pl, dim_t(0));
        return;
    }
    for (dim_t n0 = 0; n0 < pl.p.mb; n0 += pl.images_per_chunk) f(chunk_plan(pl, n0), n0);
}

// CE: the element type of the gather's C, as in the f32 kernel's run_fwd: float (dst in place
// when f32, else its f32 copy, stored after), or the bits of a bf16/f16 dst with contiguous
// channels rounded in place by the microkernel (plan.out_rounded_in_kernel).
template <typename CE>
static void run_pairs_fwd(const direct_plan &pl, const conv_args &args) {
    constexpr bool rounded_in_kernel = sizeof(CE) == 2;
    const conv_problem &p = pl.p;
    const int nthr = pl.nthr;
    const bool flat = direct_flattens_w(pl);  // (direct_plan.hpp)
    // src as the flattened windows' padded copy, the whole batch's: whether it needs a zero
    // channel (a pixel not finite) decides the packing of the weights, one for all the images.
    // (Empty when not flat: src then goes as channel pairs, a chunk of images at a time.)
    const flat_pairs_operand src_flat(p, nthr, args.src, flat);
    const dim_t Kp = flat ? src_flat.chan : p.icg + p.icg % 2, ldn = panel_ld(p.ocg);
    const dim_t K = flat ? flat_k(p, Kp) : Kp, ksp = flat ? p.k[0] * p.k[1] : p.ksp();
    scratch wp(div_up(p.g * ksp * vnni_pairs_size(K, ldn), 2));
    const bool finite =
        flat ? pack_flat_weight_pairs(p, nthr, args.wei, Kp, ldn, reinterpret_cast<bf16_t *>(wp.p))
             : pack_weight_pairs(p, nthr, args.wei, false, ldn, reinterpret_cast<bf16_t *>(wp.p));
    if (!finite && p.reads_padding()) return ref_conv_execute(p, args);
    scratch bias(p.with_bias ? p.oc() + W : 0);
    if (p.with_bias) pack_bias(p, args.bias, p.oc(), bias.p);
    const dim_t a_chan = Kp;  // (pairs_operand::chan too, in place or copied)
    const dim_t nzeros = gather_zeros_len(p.g, a_chan, K);  // (bf16 elements, in floats)
    scratch zeros(nzeros);
    std::memset(zeros.p, 0, size_t(nzeros) * sizeof(float));
    scratch taps_mem(4 * 2 * p.ksp());
    gather_tap *taps = reinterpret_cast<gather_tap *>(taps_mem.p);
    int ntaps = 0;
    for (dim_t kd = 0; kd < p.k[0]; ++kd)
        for (dim_t kh = 0; kh < p.k[1]; ++kh) {
            if (flat) {  // one tap per (kd, kh); the window starts at padded column ow * s
                if (tap_reads_input(p, 0, kd) && tap_reads_input(p, 1, kh))
                    taps[ntaps++] = {{kd * p.dl[0] - p.pb[0], kh * p.dl[1] - p.pb[1], 0},
                                     kd * p.k[1] + kh};
                continue;
            }
            for (dim_t kw = 0; kw < p.k[2]; ++kw)
                if (tap_is_read(p, (kd * p.k[1] + kh) * p.k[2] + kw))
                    taps[ntaps++] = {
                        {kd * p.dl[0] - p.pb[0], kh * p.dl[1] - p.pb[1], kw * p.dl[2] - p.pb[2]},
                        (kd * p.k[1] + kh) * p.k[2] + kw};
        }
    gather_job<bf16_t, CE> j{};
    j.c_chan = p.ocg;
    j.a_chan = a_chan;
    for (int x = 0; x < 3; ++x) j.ax[x] = {p.o[x], 0, 1, p.s[x], p.i[x], 0};
    if (flat) j.ax[2].a_size = flat_padded_w(p, Kp);
    j.taps = taps;
    j.ntaps = ntaps;
    j.w = reinterpret_cast<const bf16_t *>(wp.p);
    j.ldn = ldn;
    j.ksp = ksp;
    j.K = K;
    j.bias = p.with_bias ? bias.p : nullptr;
    j.zeros = reinterpret_cast<const bf16_t *>(zeros.p);
    // By the plan's chunks of images, as the data gradient: src's channel pairs and a copied dst
    // (f32, stored after) are one chunk's. The whole batch at once when flat, or when nothing is
    // copied (src's pairs read in place, dst written in place).
    const bool copies = !flat && (!pairs_operand::in_place(p, p.src, p.icg) ||
                                  !(pl.dst_direct || rounded_in_kernel));
    for_image_chunks(pl, copies, [&](const direct_plan &plc, dim_t n0) {
        const pairs_operand src(plc.p, nthr, image_at(args.src, p.src, p.dt, n0), p.src, p.icg, p.i,
                                !flat);
        const data_operand dst_op(p, nthr, pl.dst_direct || rounded_in_kernel, args.out, p.dst,
                                  p.oc(), p.o, false, n0, plc.p.mb);
        j.pl = &plc;
        j.av = flat ? src_flat.v : src.v;
        if constexpr (rounded_in_kernel)
            j.cv = user_view<uint16_t>(dst_op.user, p.dst);  // (the chunk's first image)
        else
            j.cv = dst_op.v;
        gather_parallel(&j, 1);
        dst_op.store(nthr, pl.stream_copied_output);
    });
}

template <typename CE>  // as for run_pairs_fwd: the C of the gathers, diff_src's bits or float
static void run_pairs_bwd_data(const direct_plan &pl, const conv_args &args) {
    constexpr bool rounded_in_kernel = sizeof(CE) == 2;
    const conv_problem &p = pl.p;
    const int nthr = pl.nthr;
    const bool in_place = pl.src_direct || rounded_in_kernel;  // (diff_src, else its f32 copy)
    const bool merge_w = pl.merge_w_phases;                    // (direct_plan.hpp)
    const dim_t sw = merge_w ? p.s[2] : 1;  // src pixels per C pixel of the gathers
    const dim_t Kp = p.ocg + p.ocg % 2, ldn = panel_ld(sw * p.icg);
    const dim_t ntaps_packed = merge_w ? w_merged_taps(p) : p.ksp();
    scratch wt(div_up(p.g * ntaps_packed * vnni_pairs_size(p.ocg, ldn), 2));
    const bool finite =
        merge_w
            ? pack_w_merged_weight_pairs(p, nthr, args.wei, ldn, reinterpret_cast<bf16_t *>(wt.p))
            : pack_weight_pairs(p, nthr, args.wei, true, ldn, reinterpret_cast<bf16_t *>(wt.p));
    if (!finite && p.reads_padding()) return ref_conv_execute(p, args);
    // (Merged: the bias of each sub-pixel's channels.)
    scratch bias(p.with_bias ? sw * p.ic() + W : 0);
    if (p.with_bias) pack_bias(p, args.bias, p.ic(), bias.p, sw);
    const dim_t nzeros = gather_zeros_len(p.g, Kp, Kp);  // (bf16 elements, in floats)
    scratch zeros(nzeros);
    std::memset(zeros.p, 0, size_t(nzeros) * sizeof(float));
    scratch taps_mem(4 * 2 * p.ksp());
    gather_tap *taps = reinterpret_cast<gather_tap *>(taps_mem.p);

    gather_job<bf16_t, CE> j{};
    j.pl = &pl;
    j.c_chan = sw * p.icg;
    j.a_chan = Kp;  // (pairs_operand::chan, in place or copied)
    j.taps = taps;
    j.w = reinterpret_cast<const bf16_t *>(wt.p);
    j.ldn = ldn;
    j.ksp = ntaps_packed;
    j.K = Kp;
    j.bias = p.with_bias ? bias.p : nullptr;
    j.zeros = reinterpret_cast<const bf16_t *>(zeros.p);
    // One gather per stride phase (schedule/gather.hpp), as in the f32 kernel, or per phase
    // along d and h with those along w merged.
    scratch jobs_mem(dim_t(sizeof(gather_job<bf16_t, CE>) / sizeof(float) + 1) * stride_phases(p));
    gather_job<bf16_t, CE> *jobs = reinterpret_cast<gather_job<bf16_t, CE> *>(jobs_mem.p);
    const dim_t nphases = bwd_data_phase_jobs(p, j, taps, jobs, merge_w);
    // By chunks of the plan's images, as the f32 kernel: dst's pairs and a copied diff_src (f32,
    // stored after) are a chunk's, within the threads' L2, not the whole batch's. (FCN's
    // 21-channel x2 ConvTranspose at batch 256: the process's peak memory 50.9 -> 27.0 MB, its
    // f32 copy of diff_src 25 MB; the time within the noise, Zen 5, 2 threads.) The whole batch
    // at once when nothing is copied: one parallel region, not one per chunk.
    const bool copies = !pairs_operand::in_place(p, p.dst, p.ocg) || !in_place;
    for_image_chunks(pl, copies, [&](const direct_plan &plc, dim_t n0) {
        const pairs_operand dst(plc.p, nthr, image_at(args.dst, p.dst, p.dt, n0), p.dst, p.ocg,
                                p.o);
        const data_operand src_op(p, nthr, in_place, args.out, p.src, p.ic(), p.i, false, n0,
                                  plc.p.mb);
        for (dim_t ph = 0; ph < nphases; ++ph) {
            jobs[ph].pl = &plc;
            jobs[ph].av = dst.v;
            if constexpr (rounded_in_kernel)
                jobs[ph].cv = user_view<uint16_t>(src_op.user, p.src);  // (the chunk's first image)
            else
                jobs[ph].cv = src_op.v;
            jobs[ph].cv.w *= sw;
        }
        gather_parallel(jobs, nphases);
        src_op.store(nthr, pl.stream_copied_output);
    });
}

// ---------------------------------------------------------------------------- bwd_weights --

// The geometry of the transposed src (see the top of this file).
struct pixel_pairs_geometry {
    dim_t Ke;    // dst pixels per row, rounded up to a pair
    dim_t L;     // zero columns left of iw = 0: column(ow, tap) = L + ow + floor(off / s) >= 0
    dim_t cols;  // columns per (g, phase, ic): every column a tap reads
    dim_t s;     // w stride = phases
};
static pixel_pairs_geometry pixel_pairs_of(const conv_problem &p) {
    pixel_pairs_geometry q;
    q.s = p.s[2];
    q.Ke = p.o[2] + p.o[2] % 2;
    q.L = -floor_div(-p.pb[2], q.s);
    q.cols = imax(1, q.L + q.Ke + floor_div((p.k[2] - 1) * p.dl[2] - p.pb[2], q.s));
    return q;
}

// Which src rows and w phases any tap reads: a strided 1x1 kernel reads every other row and one
// phase in two, so only a quarter of src is transposed (ResNet-50's stride-2 projection spent
// as long transposing all of it, and zeroing the copy, as on its products).
struct src_reads {
    std::vector<char> d, h, phase;
    src_reads(const conv_problem &p, dim_t s)
        : d(size_t(p.i[0])), h(size_t(p.i[1])), phase(size_t(s)) {
        for (int x = 0; x < 2; ++x) {
            std::vector<char> &v = x == 0 ? d : h;
            for (dim_t o = 0; o < p.o[x]; ++o)
                for (dim_t k = 0; k < p.k[x]; ++k) {
                    const dim_t i = o * p.s[x] + k * p.dl[x] - p.pb[x];
                    if (i >= 0 && i < p.i[x]) v[size_t(i)] = 1;
                }
        }
        for (dim_t kw = 0; kw < p.k[2]; ++kw) {
            dim_t lo, hi;
            const dim_t off = tap_w_range(p, kw, lo, hi);
            if (lo < hi) phase[size_t(off - floor_div(off, s) * s)] = 1;
        }
    }
    bool row(const conv_problem &p, dim_t r) const {
        return h[size_t(r % p.i[1])] && d[size_t((r / p.i[1]) % p.i[0])];
    }
};

// src row r transposed into o (see the top of this file): the phases some tap reads, zero
// margins; the columns of unread phases are left as they are.
static void transpose_src_row(const conv_problem &p, const pixel_pairs_geometry &q,
                              const src_reads &reads, const void *src, dim_t r, bf16_t *o) {
    const dim_t G = p.g, icg = p.icg;
    const dim_t ih = r % p.i[1], id = (r / p.i[1]) % p.i[0], n = r / (p.i[1] * p.i[0]);
    const data_layout &l = p.src;
    const dim_t base = n * l.n + id * l.sp[0] + ih * l.sp[1];
    for (dim_t ph = 0; ph < q.s; ++ph) {
        if (!reads.phase[size_t(ph)]) continue;
        // Pixels iw = ph + s * j go to columns L + j.
        const dim_t nj = ph < p.i[2] ? imin(div_up(p.i[2] - ph, q.s), q.cols - q.L) : 0;
        for (dim_t g = 0; g < G; ++g) {
            bf16_t *blk = o + (g * q.s + ph) * icg * q.cols;
            for (dim_t c = 0; c < icg; ++c) {
                bf16_t *line = blk + c * q.cols;
                // (Margins of a few columns: a call to memset for each cost more.)
                for (dim_t x = 0; x < q.L; ++x) line[x] = 0;
                for (dim_t x = q.L + nj; x < q.cols; ++x) line[x] = 0;
            }
            if (nj == 0) continue;
            if (p.dt == data_type::bf16 && l.c == 1) {  // a block at a time
                transpose_u16(static_cast<const bf16_t *>(src) + base + ph * l.sp[2] + g * icg,
                              q.s * l.sp[2], nj, icg, blk + q.L, q.cols);
                continue;
            }
            for (dim_t j = 0; j < nj; ++j)
                for (dim_t c = 0; c < icg; ++c)
                    blk[c * q.cols + q.L + j] =
                        bf16_at(p.dt, src, base + (ph + j * q.s) * l.sp[2] + (g * icg + c) * l.c);
        }
    }
}

// Few input channels (a first layer's 1-3): a tile of icg rows has 1-3 broadcasts per load of
// B, and its few accumulators leave the dot-product pipes waiting (wav2vec2's first layer, 1
// channel, kernel 10: 0.28x of convgrad's own f32). The taps along w of one (kd, kh) then
// share a tile, rows (kw, channel), up to the tile's height (as the f32 schedule's
// direct_bwd_w_taps_along_w). srcT's margins are zero, so every tap reduces the whole dst row
// and the taps of a tile share all their pixels. One tap per tile when the weights are split
// (each tap has its own units) or its channels fill a tile.
static dim_t pairs_taps_per_tile(const direct_plan &pl) {
    return imin(direct_bwd_w_taps_along_w(pl), dim_t(max_rows));
}

// Output pixels per chunk of a row (direct_plan::pixels_per_chunk), even so that no pixel pair
// straddles two chunks; whole rows (rounded up to a pair) when the plan keeps them whole.
static dim_t pairs_pixels_per_chunk(const direct_plan &pl) {
    const dim_t ow = imax(pl.p.o[2], 1), whole = ow + ow % 2;
    if (pl.pixels_per_chunk <= 0 || pl.pixels_per_chunk >= ow) return whole;
    return pl.pixels_per_chunk + pl.pixels_per_chunk % 2;
}

static void run_pairs_bwd_weights(const direct_plan &pl, const conv_args &args) {
    const conv_problem &p = pl.p;
    const int nthr = pl.nthr;
    const pixel_pairs_geometry q = pixel_pairs_of(p);
    const dim_t G = p.g, icg = p.icg, ocg = p.ocg, ksp = p.ksp();
    const dim_t rows = p.mb * p.o[0] * p.o[1];
    // A row's output pixels go in chunks of wc (even): a row beyond the L2 budget (wav2vec2's
    // first layer: 16000 pixels of 512 channels, 16 MB packed) was packed whole and then read
    // back from memory once per tile of taps and block of output channels.
    const dim_t wc = pairs_pixels_per_chunk(pl);
    const dim_t srow_elems = G * q.s * icg * q.cols, drow_elems = G * wc * ocg;
    const src_reads reads(p, q.s);
    const dim_t J = pairs_taps_per_tile(pl);
    // The element of diff_dst row r (flattened n, od, oh) at pixel 0, channel 0.
    const auto dst_row_at = [&](dim_t r) {
        const data_layout &m = p.dst;
        const dim_t oh = r % p.o[1], od = (r / p.o[1]) % p.o[0], n = r / (p.o[1] * p.o[0]);
        return n * m.n + od * m.sp[0] + oh * m.sp[1];
    };
    // Pixels [w0, w1) of the diff_dst rows [r0, r1) into out: per group, the pixels (K) by the
    // group's channels (N) as VNNI pairs, an odd count's last pixel paired with zero (the
    // packer's odd K); groups kc = w1 - w0 rounded up to a pair apart. Packed by each thread per
    // chunk of its rows, just before the chunk's products, so the packed rows are read back
    // from L2: packed whole beforehand (ResNet-50's res2 1x1: 26 MB written, then read back
    // from memory), the packing took half as long as the products.
    const auto pack_dst_rows = [&](dim_t r0, dim_t r1, dim_t w0, dim_t w1, bf16_t *out) {
        const data_layout &m = p.dst;
        const dim_t kc = w1 - w0 + (w1 - w0) % 2;
        for (dim_t r = r0; r < r1; ++r) {
            const dim_t base = dst_row_at(r) + w0 * m.sp[2];
            bf16_t *o = out + (r - r0) * drow_elems;
            for (dim_t g = 0; g < G; ++g)
                pack_bf16_pairs(
                    {const_cast<void *>(args.dst), p.dt, base + g * ocg * m.c, m.sp[2], m.c},
                    w1 - w0, ocg, ocg, o + g * kc * ocg);
        }
    };

    const dim_t ldn = div_up(ocg, W) * W, part = G * ksp * icg * ldn;
    // Rows split (direct_plan::weights_split, as in the f32 schedule): each thread sums its
    // rows into partial weights of its own, summed in thread order after. Weights split: each
    // thread sums every row into its units (group, tap, block of output channels): f32 weights
    // in place; bf16 weights in f32 sums of its own units, rounded into the user's weights by
    // the unit's last microkernel call (rounds_in_kernel). Each thread packs every row, but
    // neither zeroes nor sums a copy of all the weights, and no pass after stores them. (Through
    // one f32 copy of all the weights and such a pass, DCGAN 512 -> 256's and HiFi-GAN's
    // weights of 2M, summed over 256 pixels each, spent an eighth of their time in the pass.)
    // (The plan splits the weights only where their output channels are contiguous, which
    // writing them in place needs; split otherwise, they go through one copy and the pass.)
    const bool in_place = pl.weights_split && p.wei.oc == 1;
    const int copies = pl.weights_split ? 1 : nthr;
    scratch partials(in_place ? 0 : copies * part);
    const bool rounds = in_place && rounds_in_kernel(pl);
    const dim_t blk = pl.max_nv, nblocks = div_up(ocg, blk * W), chunk = pl.rows_per_chunk;
    parallel(nthr, [&](int ithr, int nt) {
        const std::vector<dim_t> units = weight_units_of(pl, nblocks, ithr);
        const unit_sums own(p, units, blk * W, rounds);
        const scratch own_sums(own.floats);
        weight_rows sums{partials.p + (pl.weights_split ? 0 : ithr * part), ldn, nullptr};
        if (in_place) sums = {nullptr, 0, args.out};
        if (rounds) sums = {own_sums.p, 0, args.out, own.run_at.data(), own.run_ld.data()};
        // A (g, tap)'s sums start at zero in the first chunk that reaches it (the microkernel
        // stores them without loading); those no row of the thread reaches are zeroed at the
        // end. (Zeroing all of them first, DCGAN 512 -> 256's 8 MB per thread, and loading
        // them back took a fifth of its weight gradient's time.) The taps of a shared tile
        // start together: they read the same rows, and each reaches a src pixel of them.
        std::vector<char> started(static_cast<size_t>(G * ksp), 0);
        dim_t r0 = 0, r1 = rows;
        if (!pl.weights_split) split(rows, nt, ithr, r0, r1);
        const dim_t nptr = imax(1, imin(chunk, r1 - r0));
        // The src rows [a, b) a chunk's taps read, transposed just before its products (as its
        // diff_dst rows are packed), so they too are read back from L2. (Transposed whole
        // beforehand, ResNet-50's res2 1x1 wrote 6 MB that it read back from memory.) Row r is
        // in slot r mod `span`, the most rows a chunk spans: the rows a chunk shares with the
        // previous one (a 3x3 kernel's two, the stem's 7x7 stride 2 five) stay in place and are
        // not transposed again; held[slot] says which row a slot holds.
        dim_t span = 1;
        for (dim_t c = r0; c < r1; c += chunk) {
            dim_t sa, sb;
            src_rows_of(p, c, imin(c + chunk, r1), sa, sb);
            span = imax(span, sb - sa);
        }
        scratch src_rows(div_up(span * srow_elems, 2));
        bf16_t *const srcT = reinterpret_cast<bf16_t *>(src_rows.p);
        std::vector<dim_t> held(static_cast<size_t>(span), -1);
        // Pointer tables (2 floats per pointer): per batch element and tap of the tile its srcT
        // row (A), its diff_dst pairs (B) and last pair (Bl), the microkernel's row tables
        // (Arows, Alast) and C rows; then the last pairs [batch][tap][ic][2]. The chunk's packed
        // diff_dst rows.
        scratch ptrs(2 * (nptr * J + 2 * nptr + 2 * nptr * max_rows + 2 * max_rows) +
                     div_up(nptr * J * icg * 2, 2));
        scratch dp(div_up(nptr * drow_elems, 2));
        bf16_t *const dstP = reinterpret_cast<bf16_t *>(dp.p);
        const bf16_t **A = reinterpret_cast<const bf16_t **>(ptrs.p);
        const bf16_t **B = A + nptr * J;
        const bf16_t **Bl = B + nptr;
        const bf16_t **Arows = Bl + nptr;
        const bf16_t **Alast = Arows + nptr * max_rows;
        float **C = reinterpret_cast<float **>(const_cast<bf16_t **>(Alast + nptr * max_rows));
        uint16_t **C16 = reinterpret_cast<uint16_t **>(C + max_rows);
        bf16_t *last = reinterpret_cast<bf16_t *>(C16 + max_rows);
        brgemm_bf16_args a{}, al{};
        a.A = Arows;
        a.B = B;
        a.C = C;
        a.C16 = C16;
        a.aks = 2;  // consecutive pixels of a row of srcT
        a.ldb = 2 * ocg;
        a.init = ukernel_init::accumulate;
        al = a;
        al.A = Alast;
        al.B = Bl;
        al.K = 2;
        l2_ahead ahead;
        for (dim_t c = r0; c < r1; c += chunk) {
            const dim_t ce = imin(c + chunk, r1);
            dim_t sa, sb;
            src_rows_of(p, c, ce, sa, sb);
            for (dim_t r = sa; r < sb; ++r) {
                dim_t &h = held[size_t(r % span)];
                if (h == r || !reads.row(p, r)) continue;
                transpose_src_row(p, q, reads, args.src, r, srcT + (r % span) * srow_elems);
                h = r;
            }
            for (dim_t w0 = 0; w0 < p.o[2]; w0 += wc) {
                // Pixels [w0, w1): Km of them in pairs; an odd count (the row's last chunk of an
                // odd width) ends with a pixel paired with the zero pixel of diff_dst. Its src
                // partner column may hold a real pixel (an infinity would give 0 * inf = NaN),
                // so that last pair reads src from a copy paired with zeros instead of srcT.
                const dim_t w1 = imin(w0 + wc, p.o[2]), np = w1 - w0;
                const dim_t Km = np - np % 2, kc = np + np % 2;
                const bool odd = np % 2 != 0;
                pack_dst_rows(c, ce, w0, w1, dstP);
                // The next chunk's diff_dst pixels, fetched into L2 while this chunk's calls
                // run (l2_ahead, bwd_weights.hpp), so the next packing reads them from L2.
                if (w1 < p.o[2] && p.dst.c == 1) {
                    const data_layout &m = p.dst;
                    const size_t es = p.dt == data_type::f32 ? 4 : 2;
                    const dim_t w2 = imin(w1 + wc, p.o[2]);
                    const char *d = static_cast<const char *>(args.dst);
                    for (dim_t r = c; r < ce; ++r) {
                        const dim_t at = dst_row_at(r);
                        ahead.add(d + size_t(at + w1 * m.sp[2]) * es,
                                  d + size_t(at + (w2 - 1) * m.sp[2] + G * ocg) * es);
                    }
                    ahead.start(G * p.k[0] * p.k[1] * div_up(p.k[2], J) * nblocks);
                }
                a.K = Km;
                for (dim_t g = 0; g < G; ++g)
                    for (dim_t hd = 0; hd < p.k[0] * p.k[1]; ++hd)
                        for (dim_t kw = 0; kw < p.k[2];) {
                            const dim_t kd = hd / p.k[1], kh = hd % p.k[1];
                            // The taps of the tile (kw along w; one that reaches no src pixel of
                            // a row contributes nothing), their phases and first columns.
                            dim_t tk[max_rows], ph[max_rows], col[max_rows];
                            dim_t nj = 0;
                            for (; kw < p.k[2] && nj < J; ++kw) {
                                dim_t lo, hi;
                                const dim_t off = tap_w_range(p, kw, lo, hi);
                                if (lo >= hi) continue;
                                tk[nj] = hd * p.k[2] + kw;
                                ph[nj] = off - floor_div(off, q.s) * q.s;
                                col[nj] = q.L + floor_div(off, q.s) + w0;
                                ++nj;
                            }
                            if (nj == 0) continue;
                            const dim_t b0 = units[size_t(2 * (g * ksp + tk[0]))],
                                        b1 = units[size_t(2 * (g * ksp + tk[0]) + 1)];
                            if (b0 >= b1) continue;
                            int nbat = 0;
                            for (dim_t row = c; row < ce; ++row) {
                                const tap_row tr = tap_row_of(p, row, kd, kh);
                                if (!tr.valid) continue;
                                const bf16_t *srow = srcT + (tr.src_row(p) % span) * srow_elems;
                                for (dim_t j = 0; j < nj; ++j) {
                                    const bf16_t *x =
                                        srow + (g * q.s + ph[j]) * icg * q.cols + col[j];
                                    A[nbat * J + j] = x;
                                    if (odd)
                                        for (dim_t r = 0; r < icg; ++r) {
                                            bf16_t *l = last + ((nbat * J + j) * icg + r) * 2;
                                            l[0] = x[r * q.cols + Km];
                                            l[1] = 0;
                                        }
                                }
                                B[nbat] = dstP + (row - c) * drow_elems + g * kc * ocg;
                                Bl[nbat] = B[nbat] + Km * ocg;  // pair Km / 2
                                ++nbat;
                            }
                            if (nbat == 0) continue;
                            a.nbatch = al.nbatch = nbat;
                            const bool begun = started[size_t(g * ksp + tk[0])];
                            // (Km = 0: a chunk of one pixel, whose only pair is the last.)
                            a.init = begun ? ukernel_init::accumulate : ukernel_init::zero;
                            al.init =
                                begun || Km > 0 ? ukernel_init::accumulate : ukernel_init::zero;
                            for (dim_t j = 0; j < nj; ++j) started[size_t(g * ksp + tk[j])] = 1;
                            // The tap's last call rounds its sums into the user's weights:
                            // in the chunk of the last row that reaches it, in its last pixels,
                            // the odd pair's call where there is one. (Weights split: one tap
                            // per tile.)
                            const bool final =
                                rounds && own.last_row[size_t(tk[0])] < ce && w1 == p.o[2];
                            a.narrow = final && !odd ? p.dt : data_type::f32;
                            al.narrow = final ? p.dt : data_type::f32;
                            // Rows (tap j, channel r) of the tiles, q = j * icg + r.
                            const dim_t nrows = nj * icg;
                            int table_m = 0;
                            dim_t table_q0 = -1;
                            for (dim_t b = b0; b < b1; ++b) {
                                const nblock nb = block_of(ocg, blk, b);
                                const int mmax = pl.max_m[nb.nv];
                                a.b_off = al.b_off = nb.c0 * 2;
                                a.tail = al.tail = nb.tail;
                                for (dim_t q0 = 0; q0 < nrows; q0 += mmax) {
                                    const int m = int(imin(mmax, nrows - q0));
                                    if (nj == 1) {  // one tap: the table serves every tile of m
                                        if (m != table_m) {
                                            for (int x = 0; x < nbat; ++x)
                                                for (int r = 0; r < m; ++r) {
                                                    Arows[x * m + r] = A[x * J] + r * q.cols;
                                                    Alast[x * m + r] = last + (x * J * icg + r) * 2;
                                                }
                                            table_m = m;
                                        }
                                        a.a_off = q0 * q.cols;
                                        al.a_off = q0 * 2;
                                    } else {
                                        if (m != table_m || q0 != table_q0) {
                                            for (int x = 0; x < nbat; ++x) {
                                                dim_t j = q0 / icg, r = q0 % icg;
                                                for (int i = 0; i < m; ++i) {
                                                    Arows[x * m + i] = A[x * J + j] + r * q.cols;
                                                    Alast[x * m + i] =
                                                        last + ((x * J + j) * icg + r) * 2;
                                                    if (++r == icg) r = 0, ++j;
                                                }
                                            }
                                            table_m = m, table_q0 = q0;
                                        }
                                        a.a_off = al.a_off = 0;
                                    }
                                    for (int i = 0; i < m; ++i) {
                                        const dim_t qq = q0 + i, j = qq / icg, r = qq % icg;
                                        C[i] = sums.at(p, g, tk[j], r, nb.c0);
                                        if (final) C16[i] = sums.at16(p, g, tk[j], r, nb.c0);
                                    }
                                    ahead.hand(Km > 0 ? a : al);  // (Km = 0: odd)
                                    if (Km > 0) call_bf16_ukernel(m, nb.nv, a);
                                    if (odd) call_bf16_ukernel(m, nb.nv, al);
                                }
                            }
                        }
                ahead.finish();
            }
        }
        // (Into the user's weights when they are split: +0 in bf16 too.)
        for (dim_t u = 0; u < G * ksp; ++u) {
            const dim_t c0 = units[size_t(2 * u)] * blk * W,
                        c1 = imin(in_place ? ocg : ldn, units[size_t(2 * u + 1)] * blk * W);
            if (!started[size_t(u)] && c0 < c1)
                for (dim_t r = 0; r < icg; ++r) {
                    if (rounds)
                        std::fill_n(sums.at16(p, u / ksp, u % ksp, r, c0), c1 - c0, uint16_t(0));
                    else
                        std::fill_n(sums.at(p, u / ksp, u % ksp, r, c0), c1 - c0, 0.f);
                }
        }
    });
    if (!in_place) reduce_weight_partials(pl, partials.p, part, ldn, args.out, copies);
}

void run_bf16dot(const direct_plan &pl, const conv_args &args) {
    switch (pl.p.dir) {
        case conv_direction::fwd:
            if (pl.out_rounded_in_kernel)
                run_pairs_fwd<uint16_t>(pl, args);
            else
                run_pairs_fwd<float>(pl, args);
            break;
        case conv_direction::bwd_data:
            if (pl.out_rounded_in_kernel)
                run_pairs_bwd_data<uint16_t>(pl, args);
            else
                run_pairs_bwd_data<float>(pl, args);
            break;
        case conv_direction::bwd_weights:
            run_pairs_bwd_weights(pl, args);
            break;
    }
}
