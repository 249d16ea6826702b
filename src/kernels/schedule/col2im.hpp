// The col2im schedule (plan and rationale in kernels/col2im_kernels.hpp): G = dst * Wt by the
// microkernel, then G scattered (added) into the src pixels. Included by each ISA's translation
// unit inside its own namespace after the microkernel and kernel_helpers.hpp.

// Taps [lo, hi) of one axis that land inside src for dst coordinate o (empty when hi <= lo).
static inline void col2im_tap_range(dim_t o, dim_t s, dim_t pb, dim_t dl, dim_t k, dim_t i,
                                    dim_t &lo, dim_t &hi) {
    const dim_t first = o * s - pb;  // src coordinate of tap 0
    lo = imax(0, ceil_div(-first, dl));
    hi = imin(k, ceil_div(i - first, dl));
}

// acc[0..n) += g[0..n), one rounding per element like the scalar sum. Runs shorter than a
// vector add element by element: the scatter's next run often overlaps the line this one just
// wrote, and a load that overlaps an earlier masked store in flight waits for that store to
// retire instead of being forwarded. (The ConvTranspose of 33 channels to 1 with taps 3 pixels
// apart along w, 1 channel per run: 85% of its time in those masked loads, 3.6 ms on 1 thread.)
static inline void col2im_add(float *acc, const float *g, dim_t n) {
    if (n < W) {
        for (dim_t j = 0; j < n; ++j) acc[j] += g[j];
        return;
    }
    const float one = 1.f;
    const V ones = vt::bcast(&one);
    dim_t j = 0;
    for (; j + W <= n; j += W)
        vt::store(acc + j, vt::fma(ones, vt::load(g + j), vt::load(acc + j)));
    if (j < n) {
        const mask_t m = vt::mask(int(n - j));
        vt::store_mask(acc + j, vt::fma(ones, vt::load_mask(g + j, m), vt::load_mask(acc + j, m)),
                       m);
    }
}

// E is the element type the microkernel multiplies: float (the f32 col2im), or, in the units
// with the bf16 microkernel, uint16_t: bf16 dst rows as pairs of consecutive dst channels and Wt
// as VNNI pairs [ocg rounded up to a pair / 2][ldb][2], multiplied by vdpbf16ps (its rate twice
// the FMA's on AMD Zen 4 and 5; the f32 col2im widened bf16 dst per tile and multiplied at the
// f32 rate, slower than its own f32 run on ResNet-50's stem). G, the scatter and the
// accumulator stay f32 either way.
template <typename E>
static void col2im_schedule(const col2im_plan &pl, const conv_args &args) {
    constexpr dim_t P = sizeof(E) == sizeof(float) ? 1 : 2;  // the K packing
    const conv_problem &p = pl.p;
    const dim_t icg = p.icg, ocg = p.ocg, ldb = pl.ldb, isp = p.isp(), osp = p.osp();
    const dim_t units = p.mb * p.g;
    if (units == 0 || isp == 0) return;
    // Wt[g][oc][tap * icg + ic], rows zero-padded to ldb (whole vectors for the microkernel);
    // in pairs, packed from it by the unit's pair packer as VNNI pairs [g][ocg / 2][ldb][2], an
    // odd ocg's last row paired with zeros (bf16 weights round back to their own bits).
    scratch wt(p.g * ocg * ldb);
    const weights_layout &wl = p.wei;
    for (dim_t r = 0; r < p.g * ocg; ++r) {
        float *row = wt.p + r * ldb;
        for (dim_t t = 0; t < p.ksp(); ++t) {
            const dim_t kw = t % p.k[2], kh = (t / p.k[2]) % p.k[1], kd = t / (p.k[2] * p.k[1]);
            const dim_t toff = kd * wl.sp[0] + kh * wl.sp[1] + kw * wl.sp[2];
            for (dim_t c = 0; c < icg; ++c)
                row[t * icg + c] = load_elem(p.dt, args.wei, r * wl.oc + c * wl.ic + toff);
        }
        for (dim_t n = pl.N; n < ldb; ++n) row[n] = 0.f;
    }
    const dim_t kpad = div_up(ocg, P) * P;
    const E *wte = reinterpret_cast<const E *>(wt.p);
    scratch wt_pairs(P == 2 ? div_up(p.g * kpad * ldb, dim_t(2)) : 0);
    if constexpr (P == 2) {
        uint16_t *out = reinterpret_cast<uint16_t *>(wt_pairs.p);
        for (dim_t g = 0; g < p.g; ++g)
            pack_bf16_pairs({wt.p, data_type::f32, g * ocg * ldb, ldb, 1}, ocg, ldb, ldb,
                            out + g * kpad * ldb);
        wte = out;
    }
    scratch bias(p.with_bias ? p.ic() : 0);
    for (dim_t c = 0; p.with_bias && c < p.ic(); ++c)
        bias.p[c] = load_elem(p.dt, args.bias, c * p.bias_stride);

    // Per thread: the unit's accumulator, the G tile and the dst tile copied where the
    // microkernel cannot read dst in place (f32: widened bf16/f16; pairs: channels not
    // contiguous, or an odd count, whose last pair would read past the pixel), in floats.
    const dim_t mr = pl.mr;
    const dim_t a_floats = pl.dst_direct ? 0 : div_up(mr * kpad * dim_t(sizeof(E)), dim_t(4));
    const dim_t per_thr = isp * icg + mr * ldb + a_floats;
    scratch work(per_thr * pl.nthr);
    parallel(pl.nthr, [&](int ithr, int nthr) {
        float *acc = work.p + ithr * per_thr, *G = acc + isp * icg;
        E *const Ab = reinterpret_cast<E *>(G + mr * ldb);
        const E *rows[max_rows];
        float *crows[max_rows];
        const E *panel = nullptr;
        dim_t us, ue;
        split(units, nthr, ithr, us, ue);
        for (dim_t u = us; u < ue; ++u) {
            const dim_t n = u / p.g, g = u % p.g;
            // (Without a bias one fill: per pixel, the compiler called memset for each pixel's
            // icg floats, 28120 calls of 4 bytes per image for a 1-channel output.)
            if (p.with_bias) {
                for (dim_t x = 0; x < isp; ++x)
                    for (dim_t c = 0; c < icg; ++c) acc[x * icg + c] = bias.p[g * icg + c];
            } else {
                for (dim_t e = 0; e < isp * icg; ++e) acc[e] = 0.f;
            }
            const dim_t dbase = n * p.dst.n + g * ocg * p.dst.c;
            brgemm_args<E> a{};
            a.K = kpad;
            a.nbatch = 1;
            a.A = rows;
            a.aks = pl.dst_direct && P == 1 ? p.dst.c : P;
            a.B = &panel;
            a.ldb = ldb * P;
            a.C = crows;
            a.tail = W;
            a.init = ukernel_init::zero;
            for (dim_t m0 = 0; m0 < osp; m0 += mr) {
                const dim_t nrows = imin(mr, osp - m0);
                for (dim_t r = 0; r < nrows; ++r) {
                    const dim_t q = m0 + r, ow = q % p.o[2], oh = (q / p.o[2]) % p.o[1],
                                od = q / (p.o[2] * p.o[1]);
                    const dim_t off =
                        dbase + od * p.dst.sp[0] + oh * p.dst.sp[1] + ow * p.dst.sp[2];
                    if (pl.dst_direct) {
                        rows[r] = static_cast<const E *>(args.dst) + off;
                    } else if constexpr (P == 2) {
                        const uint16_t *d = static_cast<const uint16_t *>(args.dst) + off;
                        E *o = Ab + r * kpad;
                        for (dim_t k = 0; k < ocg; ++k) o[k] = d[k * p.dst.c];
                        if (ocg < kpad) o[ocg] = 0;
                        rows[r] = o;
                    } else {
                        if (p.dst.c == 1)
                            load_run(p.dt, args.dst, off, Ab + r * ocg, ocg);
                        else
                            for (dim_t k = 0; k < ocg; ++k)
                                Ab[r * ocg + k] = load_elem(p.dt, args.dst, off + k * p.dst.c);
                        rows[r] = Ab + r * ocg;
                    }
                    crows[r] = G + r * ldb;
                }
                for (dim_t np = 0; np < ldb; np += dim_t(pl.nv) * W) {
                    panel = wte + g * kpad * ldb + np * P;
                    for (dim_t r = 0; r < nrows; ++r) crows[r] = G + r * ldb + np;
                    const int nv = int(imin(pl.nv, (ldb - np) / W));
                    if constexpr (P == 2)
                        call_bf16_ukernel(int(nrows), nv, a);
                    else
                        call_f32_ukernel(int(nrows), nv, a);
                }
                // Scatter: per (pixel, kd, kh) the valid kw taps; at dilation 1 along w their
                // src pixels, like their G columns, are one contiguous run.
                for (dim_t r = 0; r < nrows; ++r) {
                    const dim_t q = m0 + r, ow = q % p.o[2], oh = (q / p.o[2]) % p.o[1],
                                od = q / (p.o[2] * p.o[1]);
                    dim_t d0, d1, h0, h1, w0, w1;
                    col2im_tap_range(od, p.s[0], p.pb[0], p.dl[0], p.k[0], p.i[0], d0, d1);
                    col2im_tap_range(oh, p.s[1], p.pb[1], p.dl[1], p.k[1], p.i[1], h0, h1);
                    col2im_tap_range(ow, p.s[2], p.pb[2], p.dl[2], p.k[2], p.i[2], w0, w1);
                    if (w1 <= w0) continue;
                    const float *grow = G + r * ldb;
                    for (dim_t kd = d0; kd < d1; ++kd)
                        for (dim_t kh = h0; kh < h1; ++kh) {
                            const dim_t id = od * p.s[0] - p.pb[0] + kd * p.dl[0];
                            const dim_t ih = oh * p.s[1] - p.pb[1] + kh * p.dl[1];
                            const dim_t iw0 = ow * p.s[2] - p.pb[2] + w0 * p.dl[2];
                            float *dst_px = acc + ((id * p.i[1] + ih) * p.i[2] + iw0) * icg;
                            const float *g_px = grow + ((kd * p.k[1] + kh) * p.k[2] + w0) * icg;
                            if (p.dl[2] == 1) {
                                col2im_add(dst_px, g_px, (w1 - w0) * icg);
                                continue;
                            }
                            for (dim_t kw = w0; kw < w1; ++kw)
                                col2im_add(dst_px + (kw - w0) * p.dl[2] * icg,
                                           g_px + (kw - w0) * icg, icg);
                        }
                }
            }
            // One rounding to the user's type, in the user's layout: contiguous channels by
            // vector runs (a whole row of w when its pixels are contiguous too; few channels, as
            // an RGB output, make short runs), else element by element.
            const dim_t sbase = n * p.src.n + g * icg * p.src.c;
            const bool rows_contiguous = p.src.c == 1 && (p.src.sp[2] == icg || p.i[2] == 1);
            const dim_t run = rows_contiguous ? p.i[2] : 1;
            for (dim_t x = 0; x < isp; x += run) {
                const dim_t iw = x % p.i[2], ih = (x / p.i[2]) % p.i[1], id = x / (p.i[2] * p.i[1]);
                const dim_t off = sbase + id * p.src.sp[0] + ih * p.src.sp[1] + iw * p.src.sp[2];
                if (p.src.c == 1) {
                    store_run(p.dt, args.out, off, acc + x * icg, run * icg);
                    continue;
                }
                for (dim_t c = 0; c < icg; ++c)
                    store_elem(p.dt, args.out, off + c * p.src.c, acc[x * icg + c]);
            }
        }
    });
}

#ifndef CONVGRAD_GEMM_PAIRS_ONLY  // (the AVX512_BF16 unit: its f32 col2im is the AVX-512 one's)
void run_col2im(const col2im_plan &pl, const conv_args &args) {
    col2im_schedule<float>(pl, args);
}
#endif

#ifdef CONVGRAD_UKERNEL_BF16
/// bf16 problems on the bf16-pairs microkernel (vdpbf16ps, or the unit's emulation of it).
void run_col2im_pairs(const col2im_plan &pl, const conv_args &args) {
    col2im_schedule<uint16_t>(pl, args);
}
#endif
