// The packers of the formats in packed_formats.hpp, for one instruction-set unit: included
// inside the ISA namespace after kernel_helpers.hpp (vector conversions come from vt).

// ---------------------------------------------------------------------------- channels-last --

// Copies a user data tensor (any strides, any float type) into dense channels-last f32.
static void pack_channels_last(data_type dt, dim_t mb, int nthr, const void *user,
                               const data_layout &l, dim_t C, const dim_t *sp, float *out) {
    const dim_t rows = mb * sp[0] * sp[1];
    parallel(nthr, [&](int ithr, int nt) {
        dim_t s, e;
        split(rows, nt, ithr, s, e);
        for (dim_t r = s; r < e; ++r) {
            const dim_t h = r % sp[1], d = (r / sp[1]) % sp[0], n = r / (sp[1] * sp[0]);
            float *o = out + r * sp[2] * C;
            const dim_t base = n * l.n + d * l.sp[0] + h * l.sp[1];
            if (dt == data_type::f32 && l.c == 1) {
                for (dim_t w = 0; w < sp[2]; ++w)
                    std::memcpy(o + w * C, static_cast<const float *>(user) + base + w * l.sp[2],
                                size_t(C) * sizeof(float));
            } else if (l.c == 1) {  // bf16/f16 with contiguous channels: vector conversion
                for (dim_t w = 0; w < sp[2]; ++w)
                    vt::widen(dt, static_cast<const uint16_t *>(user) + base + w * l.sp[2],
                              o + w * C, C);
            } else {
                for (dim_t w = 0; w < sp[2]; ++w)
                    for (dim_t c = 0; c < C; ++c)
                        o[w * C + c] = load_elem(dt, user, base + w * l.sp[2] + c * l.c);
            }
        }
    });
}

// Writes dense channels-last f32 into the user's tensor (rounding once to bf16/f16).
static void unpack_channels_last(data_type dt, dim_t mb, int nthr, const float *in, void *user,
                                 const data_layout &l, dim_t C, const dim_t *sp) {
    const dim_t rows = mb * sp[0] * sp[1];
    parallel(nthr, [&](int ithr, int nt) {
        dim_t s, e;
        split(rows, nt, ithr, s, e);
        for (dim_t r = s; r < e; ++r) {
            const dim_t h = r % sp[1], d = (r / sp[1]) % sp[0], n = r / (sp[1] * sp[0]);
            const float *x = in + r * sp[2] * C;
            const dim_t base = n * l.n + d * l.sp[0] + h * l.sp[1];
            if (l.c == 1 && dt != data_type::f32) {  // vector rounding to nearest-even
                for (dim_t w = 0; w < sp[2]; ++w)
                    vt::narrow(dt, x + w * C, static_cast<uint16_t *>(user) + base + w * l.sp[2],
                               C);
                continue;
            }
            for (dim_t w = 0; w < sp[2]; ++w)
                for (dim_t c = 0; c < C; ++c)
                    store_elem(dt, user, base + w * l.sp[2] + c * l.c, x[w * C + c]);
        }
    });
}

// -------------------------------------------------------------------------------- f32 panel --

static void pack_f32_panel(const matrix_view &v, dim_t K, dim_t N, dim_t ldn, float *out) {
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
[[maybe_unused]] static void unpack_f32_panel(const float *in, dim_t K, dim_t N, dim_t ldn, const matrix_view &v) {
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

static void pack_bf16_pairs(const matrix_view &v, dim_t K, dim_t N, dim_t ldn, uint16_t *out) {
    for (dim_t kp = 0; kp < K / 2 + K % 2; ++kp) {
        uint16_t *o = out + kp * ldn * 2;
        const dim_t k0 = 2 * kp;
        const bool pair = k0 + 1 < K;  // else the odd K's last row, paired with zeros
        for (dim_t n = 0; n < N; ++n) {
            const dim_t off = v.off + k0 * v.ks + n * v.ns;
            o[2 * n] = bf16_elem(v, off);
            o[2 * n + 1] = pair ? bf16_elem(v, off + v.ks) : uint16_t(0);
        }
        for (dim_t n = 2 * N; n < 2 * ldn; ++n) o[n] = 0;
    }
}

[[maybe_unused]] static void unpack_bf16_pairs(const uint16_t *in, dim_t K, dim_t N, dim_t ldn,
                              const matrix_view &v) {
    for (dim_t k = 0; k < K; ++k)
        for (dim_t n = 0; n < N; ++n)
            store_elem(v.dt, v.base, v.off + k * v.ks + n * v.ns,
                       bf16_to_float(in[((k / 2) * ldn + n) * 2 + k % 2]));
}
