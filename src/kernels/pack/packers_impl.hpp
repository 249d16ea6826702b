// The packers of the formats in packed_formats.hpp, for one instruction-set unit: included
// inside the ISA namespace after kernel_helpers.hpp (vector conversions come from vt).

// ---------------------------------------------------------------------------- channels-last --

// NCX tensors (pixels contiguous, channels far apart) are transposed in W x W register blocks:
// W channel runs of W pixels are loaded (widened exactly), transposed, and stored as W pixels
// of W channels. A "run" is the longest stretch of pixels that are contiguous in memory: a whole
// image when d, h, w are dense (so a 7x7 layer fills 49 lanes, not 7), else one row of w.
struct ncx_runs {
    bool ok;           // pixels contiguous along w: the block transpose applies
    dim_t len, count;  // pixels per run, runs per image
    dim_t user_off(const data_layout &l, const dim_t *sp, dim_t run) const {
        const dim_t img = run / count, r = run % count;
        if (len == sp[0] * sp[1] * sp[2]) return img * l.n;
        return img * l.n + (r / sp[1]) * l.sp[0] + (r % sp[1]) * l.sp[1];
    }
};
static ncx_runs ncx_runs_of(const data_layout &l, const dim_t *sp) {
    ncx_runs r{false, 0, 0};
    if (l.c == 1 || (l.sp[2] != 1 && sp[2] > 1)) return r;
    r.ok = true;
    const bool dense = (sp[2] == 1 || l.sp[2] == 1) && (sp[1] == 1 || l.sp[1] == sp[2]) &&
                       (sp[0] == 1 || l.sp[0] == sp[1] * sp[2]);
    r.len = dense ? sp[0] * sp[1] * sp[2] : sp[2];
    r.count = dense ? 1 : sp[0] * sp[1];
    return r;
}

// cn channel runs (cs apart, wn pixels each) from user memory at `off` into r[0..W), as f32;
// the other vectors and lanes are zero.
static inline void load_channel_runs(data_type dt, const void *user, dim_t off, dim_t cs, int cn,
                                     int wn, V *r) {
    alignas(64) float buf[W];
    const mask_t mw = vt::mask(wn);
    for (int i = 0; i < W; ++i) {
        if (i >= cn) {
            r[i] = vt::zero();
        } else if (dt == data_type::f32) {
            const float *x = static_cast<const float *>(user) + off + i * cs;
            r[i] = wn == W ? vt::load(x) : vt::load_mask(x, mw);
        } else {
            vt::widen(dt, static_cast<const uint16_t *>(user) + off + i * cs, buf, wn);
            r[i] = vt::load_mask(buf, mw);
        }
    }
}

// r[0..cn) (wn pixels each) into the channel runs of user memory, rounded once to dt. `stream`
// (f32): whole vectors stored past the caches (vt::stream, where aligned).
static inline void store_channel_runs(data_type dt, void *user, dim_t off, dim_t cs, int cn, int wn,
                                      const V *r, bool stream) {
    alignas(64) float buf[W];
    const mask_t mw = vt::mask(wn);
    for (int i = 0; i < cn; ++i) {
        if (dt == data_type::f32) {
            float *x = static_cast<float *>(user) + off + i * cs;
            if (wn == W && stream)
                vt::stream(x, r[i]);
            else if (wn == W)
                vt::store(x, r[i]);
            else
                vt::store_mask(x, r[i], mw);
        } else {
            vt::store(buf, r[i]);
            vt::narrow(dt, buf, static_cast<uint16_t *>(user) + off + i * cs, wn);
        }
    }
}

// The dense side of a transposed block: wn pixels (rows C apart) of cn channels, stored from or
// loaded into r[0..W) (the pixels past wn loaded as zeros).
static inline void store_dense_pixels(float *d, dim_t C, const V *r, int wn, int cn, mask_t mc) {
    for (int j = 0; j < wn; ++j) {
        if (cn == W)
            vt::store(d + j * C, r[j]);
        else
            vt::store_mask(d + j * C, r[j], mc);
    }
}
static inline void load_dense_pixels(const float *d, dim_t C, V *r, int wn, int cn, mask_t mc) {
    for (int j = 0; j < W; ++j)
        r[j] = j >= wn ? vt::zero() : cn == W ? vt::load(d + j * C) : vt::load_mask(d + j * C, mc);
}

// transpose_run_block straight from and to the runs: W pixels of each of the block's W runs in
// turn.
static void transpose_runs_in_place(data_type dt, bool to_dense, void *user, dim_t uoff, dim_t cs,
                                    float *dense, dim_t C, dim_t c0, dim_t len, bool stream) {
    const int cn = int(imin(W, C - c0));
    const mask_t mc = vt::mask(cn);
    V r[W];
    for (dim_t w0 = 0; w0 < len; w0 += W) {
        const int wn = int(imin(W, len - w0));
        float *d = dense + w0 * C + c0;
        if (to_dense) {
            load_channel_runs(dt, user, uoff + c0 * cs + w0, cs, cn, wn, r);
            vt::transpose(r);
            store_dense_pixels(d, C, r, wn, cn, mc);
        } else {
            load_dense_pixels(d, C, r, wn, cn, mc);
            vt::transpose(r);
            store_channel_runs(dt, user, uoff + c0 * cs + w0, cs, cn, wn, r, stream);
        }
    }
}

// Pixels per strip of transpose_run_block: W channel runs of this many pixels go through an L1
// buffer, so that each run is read or written a strip at a time, line after line.
constexpr dim_t ncx_strip = 8 * W;

// cn channel runs (cs apart) of pixels [0, sn) from user memory at `off` into the rows of buf
// (ncx_strip floats apart), as f32.
static inline void load_channel_strip(data_type dt, const void *user, dim_t off, dim_t cs, int cn,
                                      dim_t sn, float *buf) {
    for (int i = 0; i < cn; ++i) {
        float *b = buf + i * ncx_strip;
        if (dt == data_type::f32)
            std::memcpy(b, static_cast<const float *>(user) + off + i * cs,
                        size_t(sn) * sizeof(float));
        else
            vt::widen(dt, static_cast<const uint16_t *>(user) + off + i * cs, b, sn);
    }
}

// The rows of buf (cn of them, sn pixels each) into the channel runs of user memory, rounded once
// to dt. `stream` (f32): whole vectors stored past the caches (vt::stream, where aligned).
static inline void store_channel_strip(data_type dt, void *user, dim_t off, dim_t cs, int cn,
                                       dim_t sn, const float *buf, bool stream) {
    for (int i = 0; i < cn; ++i) {
        const float *b = buf + i * ncx_strip;
        if (dt == data_type::f32 && stream) {
            float *u = static_cast<float *>(user) + off + i * cs;
            dim_t x = 0;
            for (; x + W <= sn; x += W) vt::stream(u + x, vt::load(b + x));
            const mask_t m = vt::mask(int(sn - x));
            if (x < sn) vt::store_mask(u + x, vt::load_mask(b + x, m), m);
        } else if (dt == data_type::f32) {
            std::memcpy(static_cast<float *>(user) + off + i * cs, b, size_t(sn) * sizeof(float));
        } else
            vt::narrow(dt, b, static_cast<uint16_t *>(user) + off + i * cs, sn);
    }
}

// One channel block (c0, cn channels) of one run of len pixels: user (NCX) -> dense (pixel-major
// rows of C floats) when `to_dense`, else back, transposed W x W in registers. Where the runs
// are a multiple of 4 KB apart, they are copied a strip of ncx_strip pixels at a time through
// an L1 buffer, each run read or written sequentially: straight from the runs, a line of each
// of the W runs in turn, they fell into one set of L1. Elsewhere the buffer's extra pass cost
// 3-5% (ResNet-50's stride-2 data gradients in NCX). `stream`: an f32 output is stored past
// the caches, its lines written whole without being read first (direct_plan::
// stream_copied_output). Zen 5, 3 alternated rounds, data gradients in NCX, 1 and 2 threads:
// HiFi-GAN's conv_post (8192 pixels, 32 KB planes; 5.2x its NXC time before) 2.1 -> 1.55 ms and
// 4.4-4.6 -> 2.8 ms; ESRGAN's last layer (64 KB planes) 11.8-12.0 -> 9.8-10.3 and 13.9-15.2 ->
// 12.2-12.4; ResNet-50's stride-2 3x3 (streamed, not in strips) 1.02x and 0.98x.
static void transpose_run_block(data_type dt, bool to_dense, void *user, dim_t uoff, dim_t cs,
                                float *dense, dim_t C, dim_t c0, dim_t len, bool stream = false) {
    const dim_t plane_bytes = cs * dim_t(dt == data_type::f32 ? 4 : 2);
    if (plane_bytes % 4096 != 0 || len <= W) {
        transpose_runs_in_place(dt, to_dense, user, uoff, cs, dense, C, c0, len, stream);
        if (stream) vt::stream_fence();  // (before the threads join)
        return;
    }
    const int cn = int(imin(W, C - c0));
    const mask_t mc = vt::mask(cn);
    alignas(64) float buf[W * ncx_strip];
    V r[W];
    for (dim_t s0 = 0; s0 < len; s0 += ncx_strip) {
        const dim_t sn = imin(ncx_strip, len - s0);
        const dim_t user_at = uoff + c0 * cs + s0;
        if (to_dense) load_channel_strip(dt, user, user_at, cs, cn, sn, buf);
        for (dim_t w0 = 0; w0 < sn; w0 += W) {
            const int wn = int(imin(W, sn - w0));
            const mask_t mw = vt::mask(wn);
            float *d = dense + (s0 + w0) * C + c0;
            if (to_dense) {
                for (int i = 0; i < W; ++i)
                    r[i] = i >= cn   ? vt::zero()
                           : wn == W ? vt::load(buf + i * ncx_strip + w0)
                                     : vt::load_mask(buf + i * ncx_strip + w0, mw);
                vt::transpose(r);
                store_dense_pixels(d, C, r, wn, cn, mc);
            } else {
                load_dense_pixels(d, C, r, wn, cn, mc);
                vt::transpose(r);
                for (int i = 0; i < cn; ++i) {
                    if (wn == W)
                        vt::store(buf + i * ncx_strip + w0, r[i]);
                    else
                        vt::store_mask(buf + i * ncx_strip + w0, r[i], mw);
                }
            }
        }
        if (!to_dense) store_channel_strip(dt, user, user_at, cs, cn, sn, buf, stream);
    }
    if (stream) vt::stream_fence();  // (before the threads join)
}

// The NCX path of both directions: work units are (run, channel block), split over threads.
static void transpose_ncx(data_type dt, bool to_dense, dim_t mb, int nthr, void *user,
                          const data_layout &l, dim_t C, const dim_t *sp, float *dense,
                          const ncx_runs &runs, bool stream = false) {
    const dim_t nruns = mb * runs.count, cblocks = div_up(C, W);
    parallel(nthr, [&](int ithr, int nt) {
        dim_t s, e;
        split(nruns * cblocks, nt, ithr, s, e);
        for (dim_t u = s; u < e; ++u) {
            const dim_t run = u / cblocks, cb = u % cblocks;
            transpose_run_block(dt, to_dense, user, runs.user_off(l, sp, run), l.c,
                                dense + run * runs.len * C, C, cb * W, runs.len, stream);
        }
    });
}

// One row of w pixels at user offset `base` into dense channels-last f32 (channels contiguous,
// or neither channels nor pixels: the NCX rows go through transpose_run_block).
static void pack_row_channels_last(data_type dt, const void *user, const data_layout &l, dim_t C,
                                   dim_t w_count, dim_t base, float *o) {
    if (dt == data_type::f32 && l.c == 1 && l.sp[2] == C) {  // a dense row: one copy
        // (Per pixel, the 3 channels of a first layer's input cost a library call each.)
        std::memcpy(o, static_cast<const float *>(user) + base,
                    size_t(w_count * C) * sizeof(float));
    } else if (dt == data_type::f32 && l.c == 1) {
        for (dim_t w = 0; w < w_count; ++w)
            std::memcpy(o + w * C, static_cast<const float *>(user) + base + w * l.sp[2],
                        size_t(C) * sizeof(float));
    } else if (l.c == 1 && l.sp[2] == C) {  // a dense row: one vector conversion (few channels)
        vt::widen(dt, static_cast<const uint16_t *>(user) + base, o, w_count * C);
    } else if (l.c == 1) {  // bf16/f16 with contiguous channels: vector conversion
        for (dim_t w = 0; w < w_count; ++w)
            vt::widen(dt, static_cast<const uint16_t *>(user) + base + w * l.sp[2], o + w * C, C);
    } else {  // neither channels nor pixels contiguous: element by element
        for (dim_t w = 0; w < w_count; ++w)
            for (dim_t c = 0; c < C; ++c)
                o[w * C + c] = load_elem(dt, user, base + w * l.sp[2] + c * l.c);
    }
}

// Rows [a, b) (flattened n, d, h) of a user data tensor into dense channels-last f32, on the
// calling thread: the per-chunk conversion of the bwd_weights schedule. In dense NCX images the
// rows of one image are one run of pixels (7x7 rows fill vectors too).
static void pack_rows_channels_last(data_type dt, const void *user, const data_layout &l, dim_t C,
                                    const dim_t *sp, dim_t a, dim_t b, float *out) {
    const ncx_runs runs = ncx_runs_of(l, sp);
    const dim_t per_image = sp[0] * sp[1];
    for (dim_t r = a; r < b;) {
        const dim_t n = r / per_image, rin = r % per_image;
        const dim_t base = n * l.n + (rin / sp[1]) * l.sp[0] + (rin % sp[1]) * l.sp[1];
        float *o = out + (r - a) * sp[2] * C;
        const dim_t nrows = runs.ok && runs.count == 1 ? imin(b, (n + 1) * per_image) - r : 1;
        if (runs.ok) {
            for (dim_t c0 = 0; c0 < C; c0 += W)
                transpose_run_block(dt, true, const_cast<void *>(user), base, l.c, o, C, c0,
                                    nrows * sp[2]);
        } else {
            pack_row_channels_last(dt, user, l, C, sp[2], base, o);
        }
        r += nrows;
    }
}

// Pixels [w_lo, w_lo + w_n) of rows [a, b) (flattened n, d, h) into dense channels-last f32 rows
// of w_n pixels: a window of rows too long to convert whole (bwd_weights' pixel chunks).
static void pack_row_window_channels_last(data_type dt, const void *user, const data_layout &l,
                                          dim_t C, const dim_t *sp, dim_t a, dim_t b, dim_t w_lo,
                                          dim_t w_n, float *out) {
    const ncx_runs runs = ncx_runs_of(l, sp);
    for (dim_t r = a; r < b; ++r) {
        const dim_t n = r / (sp[0] * sp[1]), rin = r % (sp[0] * sp[1]);
        const dim_t base = n * l.n + (rin / sp[1]) * l.sp[0] + (rin % sp[1]) * l.sp[1] +
                           w_lo * l.sp[2];
        float *o = out + (r - a) * w_n * C;
        if (runs.ok) {
            for (dim_t c0 = 0; c0 < C; c0 += W)
                transpose_run_block(dt, true, const_cast<void *>(user), base, l.c, o, C, c0, w_n);
        } else {
            pack_row_channels_last(dt, user, l, C, w_n, base, o);
        }
    }
}

// Runs f(row, w0, w1) over pixels [w0, w1) of rows [0, rows) of wn pixels (flattened n, d, h),
// the pixels split evenly over the threads: a chunk of one long row (a 1-D image, or the rows of
// a chunk along w) is converted by every thread, not by one.
template <class F>
static void for_row_pieces(int nthr, dim_t rows, dim_t wn, F &&f) {
    parallel(nthr, [&](int ithr, int nt) {
        dim_t s, e;
        split(rows * wn, nt, ithr, s, e);
        for (dim_t q = s; q < e;) {
            const dim_t r = q / wn, w0 = q % wn, w1 = imin(wn, w0 + (e - q));
            f(r, w0, w1);
            q += w1 - w0;
        }
    });
}

// Copies a user data tensor (any strides, any float type) into dense channels-last f32.
static void pack_channels_last(data_type dt, dim_t mb, int nthr, const void *user,
                               const data_layout &l, dim_t C, const dim_t *sp, float *out) {
    const ncx_runs runs = ncx_runs_of(l, sp);
    if (runs.ok)
        return transpose_ncx(dt, true, mb, nthr, const_cast<void *>(user), l, C, sp, out, runs);
    for_row_pieces(nthr, mb * sp[0] * sp[1], sp[2], [&](dim_t r, dim_t w0, dim_t w1) {
        const dim_t h = r % sp[1], d = (r / sp[1]) % sp[0], n = r / (sp[1] * sp[0]);
        pack_row_channels_last(dt, user, l, C, w1 - w0,
                               n * l.n + d * l.sp[0] + h * l.sp[1] + w0 * l.sp[2],
                               out + (r * sp[2] + w0) * C);
    });
}

// The same into rows padded along w: row r of the copy starts `row` floats after row r - 1, its
// pixels `lead` floats in, and the floats around them are zeroed (the forward kernel that
// flattens the kernel width into K reads every window from such rows), in one pass.
static void pack_channels_last_padded_w(data_type dt, dim_t mb, int nthr, const void *user,
                                        const data_layout &l, dim_t C, const dim_t *sp, dim_t lead,
                                        dim_t row, float *out) {
    const dim_t rows = mb * sp[0] * sp[1], used = sp[2] * C;
    ncx_runs runs = ncx_runs_of(l, sp);
    if (runs.ok) {  // NCX: transposed a row at a time, each run of pixels into its padded row
        runs.len = sp[2];
        runs.count = sp[0] * sp[1];
        const dim_t cblocks = div_up(C, W);
        parallel(nthr, [&](int ithr, int nt) {
            dim_t s, e;
            split(rows, nt, ithr, s, e);
            for (dim_t r = s; r < e; ++r) {
                float *o = out + r * row;
                std::memset(o, 0, size_t(lead) * sizeof(float));
                std::memset(o + lead + used, 0, size_t(row - lead - used) * sizeof(float));
                for (dim_t cb = 0; cb < cblocks; ++cb)
                    transpose_run_block(dt, true, const_cast<void *>(user), runs.user_off(l, sp, r),
                                        l.c, o + lead, C, cb * W, sp[2]);
            }
        });
        return;
    }
    for_row_pieces(nthr, rows, sp[2], [&](dim_t r, dim_t w0, dim_t w1) {
        const dim_t h = r % sp[1], d = (r / sp[1]) % sp[0], n = r / (sp[1] * sp[0]);
        float *o = out + r * row;
        if (w0 == 0) std::memset(o, 0, size_t(lead) * sizeof(float));
        if (w1 == sp[2]) std::memset(o + lead + used, 0, size_t(row - lead - used) * sizeof(float));
        pack_row_channels_last(dt, user, l, C, w1 - w0,
                               n * l.n + d * l.sp[0] + h * l.sp[1] + w0 * l.sp[2],
                               o + lead + w0 * C);
    });
}

// Writes dense channels-last f32 into the user's tensor (rounding once to bf16/f16). `stream`:
// NCX f32 is stored past the caches (transpose_run_block).
static void unpack_channels_last(data_type dt, dim_t mb, int nthr, const float *in, void *user,
                                 const data_layout &l, dim_t C, const dim_t *sp, bool stream) {
    const ncx_runs runs = ncx_runs_of(l, sp);
    if (runs.ok)
        return transpose_ncx(dt, false, mb, nthr, user, l, C, sp, const_cast<float *>(in), runs,
                             stream);
    for_row_pieces(nthr, mb * sp[0] * sp[1], sp[2], [&](dim_t r, dim_t w0, dim_t w1) {
        const dim_t h = r % sp[1], d = (r / sp[1]) % sp[0], n = r / (sp[1] * sp[0]);
        const float *x = in + (r * sp[2] + w0) * C;
        const dim_t base = n * l.n + d * l.sp[0] + h * l.sp[1] + w0 * l.sp[2], wn = w1 - w0;
        if (l.c == 1 && l.sp[2] == C && dt != data_type::f32) {  // dense pixels at once
            vt::narrow(dt, x, static_cast<uint16_t *>(user) + base, wn * C);
            return;
        }
        if (l.c == 1 && dt != data_type::f32) {  // vector rounding to nearest-even
            for (dim_t w = 0; w < wn; ++w)
                vt::narrow(dt, x + w * C, static_cast<uint16_t *>(user) + base + w * l.sp[2], C);
            return;
        }
        for (dim_t w = 0; w < wn; ++w)
            for (dim_t c = 0; c < C; ++c)
                store_elem(dt, user, base + w * l.sp[2] + c * l.c, x[w * C + c]);
    });
}

// ------------------------------------------------------------------ W x W block transposes --
// Between nruns <= W runs of len <= W contiguous user elements (run i at offs[i]) and an f32
// matrix m whose row j holds element j of every run (m[j*ldm + i]): the GEMM operands whose
// contiguous axis is the one the microkernel does not want on its lanes (NCX pixels).

static inline void runs_to_rows(data_type dt, const void *base, const dim_t *offs, int nruns,
                                int len, float *m, dim_t ldm) {
    alignas(64) float buf[W];
    const mask_t ml = vt::mask(len), mr = vt::mask(nruns);
    V r[W];
    for (int i = 0; i < W; ++i) {
        if (i >= nruns) {
            r[i] = vt::zero();
        } else if (dt == data_type::f32) {
            r[i] = vt::load_mask(static_cast<const float *>(base) + offs[i], ml);
        } else {
            vt::widen(dt, static_cast<const uint16_t *>(base) + offs[i], buf, len);
            r[i] = vt::load_mask(buf, ml);
        }
    }
    vt::transpose(r);
    for (int j = 0; j < len; ++j) vt::store_mask(m + j * ldm, r[j], mr);
}

static inline void rows_to_runs(data_type dt, const float *m, dim_t ldm, int nruns, int len,
                                void *base, const dim_t *offs) {
    alignas(64) float buf[W];
    const mask_t ml = vt::mask(len), mr = vt::mask(nruns);
    V r[W];
    for (int j = 0; j < W; ++j) r[j] = j < len ? vt::load_mask(m + j * ldm, mr) : vt::zero();
    vt::transpose(r);
    for (int i = 0; i < nruns; ++i) {
        if (dt == data_type::f32) {
            vt::store_mask(static_cast<float *>(base) + offs[i], r[i], ml);
        } else {
            vt::store(buf, r[i]);
            vt::narrow(dt, buf, static_cast<uint16_t *>(base) + offs[i], len);
        }
    }
}

// -------------------------------------------------------------------------------- f32 panel --

// Columns contiguous along k (the transposed weights of bwd_data, XOI): W x W block transposes
// of W column runs, not a strided copy element by element (a fifth of HiFi-GAN's f16
// ConvTranspose went there, 1 thread).
static void pack_f32_panel_by_columns(const matrix_view &v, dim_t K, dim_t N, dim_t ldn,
                                      float *out) {
    dim_t offs[W];
    for (dim_t n0 = 0; n0 < N; n0 += W) {
        const int nn = int(imin(W, N - n0));
        for (int i = 0; i < nn; ++i) offs[i] = v.off + (n0 + i) * v.ns;
        for (dim_t k0 = 0; k0 < K; k0 += W) {
            const int kn = int(imin(W, K - k0));
            runs_to_rows(v.dt, v.base, offs, nn, kn, out + k0 * ldn + n0, ldn);
            for (int i = 0; i < nn; ++i) offs[i] += W;
        }
    }
    for (dim_t k = 0; k < K; ++k)
        for (dim_t n = N; n < ldn; ++n) out[k * ldn + n] = 0.f;
}

static void pack_f32_panel(const matrix_view &v, dim_t K, dim_t N, dim_t ldn, float *out) {
    if (v.ks == 1 && v.ns != 1 && K > 1) return pack_f32_panel_by_columns(v, K, N, ldn, out);
    for (dim_t k = 0; k < K; ++k) {
        float *o = out + k * ldn;
        const dim_t row = v.off + k * v.ks;
        if (v.ns == 1 && v.dt == data_type::f32)
            std::memcpy(o, static_cast<const float *>(v.base) + row, size_t(N) * sizeof(float));
        else if (v.ns == 1)
            vt::widen(v.dt, static_cast<const uint16_t *>(v.base) + row, o, N);
        else
            for (dim_t n = 0; n < N; ++n) o[n] = load_elem(v.dt, v.base, row + n * v.ns);
        for (dim_t n = N; n < ldn; ++n) o[n] = 0.f;
    }
}

// (The unpackers serve the tests, through pack_set; a unit without one, the AVX512_BF16 unit,
// does not call them.)
[[maybe_unused]] static void unpack_f32_panel(const float *in, dim_t K, dim_t N, dim_t ldn,
                                              const matrix_view &v) {
    for (dim_t k = 0; k < K; ++k) {
        const float *x = in + k * ldn;
        const dim_t row = v.off + k * v.ks;
        if (v.ns == 1 && v.dt == data_type::f32)
            std::memcpy(static_cast<float *>(v.base) + row, x, size_t(N) * sizeof(float));
        else if (v.ns == 1)
            vt::narrow(v.dt, x, static_cast<uint16_t *>(v.base) + row, N);
        else
            for (dim_t n = 0; n < N; ++n) store_elem(v.dt, v.base, row + n * v.ns, x[n]);
    }
}

// ----------------------------------------------------------------------------- bf16 pairs --

// One source element as bf16: bf16 copied, f32 (and f16, through its exact f32) rounded once.
static inline uint16_t bf16_elem(const matrix_view &v, dim_t off) {
    if (v.dt == data_type::bf16) return static_cast<const uint16_t *>(v.base)[off];
    return float_to_bf16(load_elem(v.dt, v.base, off));
}

// Two rows of n bf16 interleaved into pairs: o[2i] = r0[i], o[2i + 1] = r1[i] (zero without
// r1). Written as whole 32-bit pairs, which the compiler vectorizes (zero-extend, shift, or).
static inline void interleave_bf16_rows(const uint16_t *r0, const uint16_t *r1, dim_t n,
                                        uint16_t *o) {
    if (r1 == nullptr) {
        for (dim_t i = 0; i < n; ++i) {
            const uint32_t w = r0[i];
            std::memcpy(o + 2 * i, &w, sizeof w);
        }
        return;
    }
    for (dim_t i = 0; i < n; ++i) {
        const uint32_t w = uint32_t(r0[i]) | uint32_t(r1[i]) << 16;
        std::memcpy(o + 2 * i, &w, sizeof w);
    }
}

// bf16 with K contiguous and N strided (the weights of ConvTranspose and of bwd_data in the
// layouts whose input channels are innermost): a pair along K is one 32-bit word of the source,
// so the packing is a transpose of words, word kp of row n to row kp at column n, W x W words
// at a time through the unit's transpose, which only moves lanes. Element by element, reading
// along the strided axis, it took a fifth of DCGAN's 512 -> 256 ConvTranspose in bf16 (4 MB of
// weights packed per execute, Zen 4).
static void pack_bf16_pairs_by_words(const uint16_t *src, dim_t ns, dim_t K, dim_t N, dim_t ldn,
                                     uint16_t *out) {
    constexpr int B = vt::W;
    const dim_t KP = K / 2;  // whole pairs (an odd K's last row is paired with zeros below)
    // (Words moved as floats by the unit's unaligned loads and stores, which may alias; no
    // arithmetic touches them. Rows of the source outer: B rows read along K, in sequence.)
    alignas(64) uint32_t t[B][B];
    typename vt::V r[B];
    for (dim_t n0 = 0; n0 < N; n0 += B) {
        const int nn = int(imin(B, N - n0));
        for (dim_t kp0 = 0; kp0 < KP; kp0 += B) {
            const int kn = int(imin(B, KP - kp0));
            const uint16_t *from = src + n0 * ns + 2 * kp0;
            if (kn == B && nn == B) {
                for (int j = 0; j < B; ++j)
                    r[j] = vt::load(reinterpret_cast<const float *>(from + j * ns));
            } else {
                for (int j = 0; j < B; ++j) {
                    if (j < nn) std::memcpy(t[j], from + j * ns, size_t(kn) * 4);
                    for (int c = j < nn ? kn : 0; c < B; ++c) t[j][c] = 0;
                    r[j] = vt::load(reinterpret_cast<const float *>(t[j]));
                }
            }
            vt::transpose(r);
            uint16_t *to = out + (kp0 * ldn + n0) * 2;
            if (nn == B) {
                for (int c = 0; c < kn; ++c)
                    vt::store(reinterpret_cast<float *>(to + c * ldn * 2), r[c]);
            } else {
                for (int c = 0; c < kn; ++c) {
                    vt::store(reinterpret_cast<float *>(t[c]), r[c]);
                    std::memcpy(to + c * ldn * 2, t[c], size_t(nn) * 4);
                }
            }
        }
    }
    if (K % 2)
        for (dim_t n = 0; n < N; ++n) {
            const uint32_t w = src[n * ns + K - 1];
            std::memcpy(out + (KP * ldn + n) * 2, &w, sizeof w);
        }
    for (dim_t kp = 0; kp < KP + K % 2; ++kp)
        std::memset(out + (kp * ldn + N) * 2, 0, size_t(ldn - N) * 4);
}

static void pack_bf16_pairs(const matrix_view &v, dim_t K, dim_t N, dim_t ldn, uint16_t *out) {
    if (v.dt == data_type::bf16 && v.ks == 1 && v.ns != 1) {
        pack_bf16_pairs_by_words(static_cast<const uint16_t *>(v.base) + v.off, v.ns, K, N, ldn,
                                 out);
        return;
    }
    for (dim_t kp = 0; kp < K / 2 + K % 2; ++kp) {
        uint16_t *o = out + kp * ldn * 2;
        const dim_t k0 = 2 * kp;
        const bool pair = k0 + 1 < K;  // else the odd K's last row, paired with zeros
        // Contiguous rows: bf16 interleaved as they are; f32 rounded a piece of each row at a
        // time (the unit's narrowing, bit for bit the scalar one), then interleaved. (diff_dst
        // of the vdpbf16ps weight gradient, packed in pixel pairs, goes through here: element
        // by element, the packing took as long as the products on ResNet-50's 1x1 layers.)
        if (v.ns == 1 && v.dt == data_type::bf16) {
            const uint16_t *r0 = static_cast<const uint16_t *>(v.base) + v.off + k0 * v.ks;
            interleave_bf16_rows(r0, pair ? r0 + v.ks : nullptr, N, o);
        } else if (v.ns == 1 && v.dt == data_type::f32) {
            constexpr dim_t piece = 256;
            uint16_t h0[piece], h1[piece];
            const float *r0 = static_cast<const float *>(v.base) + v.off + k0 * v.ks;
            for (dim_t n0 = 0; n0 < N; n0 += piece) {
                const dim_t len = imin(piece, N - n0);
                vt::narrow(data_type::bf16, r0 + n0, h0, len);
                if (pair) vt::narrow(data_type::bf16, r0 + v.ks + n0, h1, len);
                interleave_bf16_rows(h0, pair ? h1 : nullptr, len, o + 2 * n0);
            }
        } else {
            for (dim_t n = 0; n < N; ++n) {
                const dim_t off = v.off + k0 * v.ks + n * v.ns;
                o[2 * n] = bf16_elem(v, off);
                o[2 * n + 1] = pair ? bf16_elem(v, off + v.ks) : uint16_t(0);
            }
        }
        for (dim_t n = 2 * N; n < 2 * ldn; ++n) o[n] = 0;
    }
}

// A block of 16-bit elements transposed: dst[c * ldd + j] = src[j * lds + c] for j < nj,
// c < nc. 16 x 16 at a time through the 32-bit lanes of the unit's transpose, which only moves
// lanes, so every bit pattern is kept. (The vdpbf16ps weight gradient's src rows, channels to
// pixels: element by element, with its index arithmetic, it cost several times this.) Fewer
// than transpose_u16_by_elements channels go element by element, a channel at a time: a 16 x 16
// block filled from 3 channels (the ResNet-50 stem's weight gradient) moved 256 words through
// the buffer for each 48 it transposed, a sixth of that gradient's time (Zen 5, bf16, 2 threads).
// (Only the units with the bf16 microkernel, whose traits widen bf16, have callers.)
#ifdef CONVGRAD_UKERNEL_BF16
constexpr dim_t transpose_u16_by_elements = 6;
[[maybe_unused]] static void transpose_u16(const uint16_t *src, dim_t lds, dim_t nj, dim_t nc,
                                           uint16_t *dst, dim_t ldd) {
    if (nc < transpose_u16_by_elements) {
        for (dim_t c = 0; c < nc; ++c)
            for (dim_t j = 0; j < nj; ++j) dst[c * ldd + j] = src[j * lds + c];
        return;
    }
    // (The 32-bit words are read and written as floats by vt::load/store, whose accesses may
    // alias: the intrinsics' unaligned vector types, or memcpy in the emulation.)
    alignas(64) uint32_t t[16][16];
    for (dim_t j0 = 0; j0 < nj; j0 += 16) {
        const int jn = int(imin(16, nj - j0));
        for (dim_t c0 = 0; c0 < nc; c0 += 16) {
            const int cn = int(imin(16, nc - c0));
            // Each row's words into the high halves of the lanes by the exact bf16 widening (a
            // shift: no arithmetic), straight into the registers. (Copied word by word into the
            // buffer first, the copy took a third of the transposes of ResNet-50's res2 1x1
            // weight gradient.)
            typename vt::V v[16];
            for (int j = 0; j < 16; ++j) {
                const uint16_t *from = src + (j0 + j) * lds + c0;
                v[j] = j >= jn    ? vt::zero()
                       : cn == 16 ? vt::load_bf16(from)
                                  : vt::load_half_tail(data_type::bf16, from, cn);
            }
            vt::transpose(v);
            for (int c = 0; c < cn; ++c) {
                vt::store(reinterpret_cast<float *>(t[c]), v[c]);
                uint16_t *to = dst + (c0 + c) * ldd + j0;
                for (int j = 0; j < jn; ++j) to[j] = uint16_t(t[c][j] >> 16);
            }
        }
    }
}
#endif  // CONVGRAD_UKERNEL_BF16

[[maybe_unused]] static void unpack_bf16_pairs(const uint16_t *in, dim_t K, dim_t N, dim_t ldn,
                                               const matrix_view &v) {
    for (dim_t k = 0; k < K; ++k)
        for (dim_t n = 0; n < N; ++n)
            store_elem(v.dt, v.base, v.off + k * v.ks + n * v.ns,
                       bf16_to_float(in[((k / 2) * ldn + n) * 2 + k % 2]));
}
