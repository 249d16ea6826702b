// The AVX-512 vector traits in plain C++: a "register" of 16 floats and a 16-bit mask, every
// operation lane by lane with the AVX-512 instruction's exact result (fused multiply-adds,
// masked lanes neither read nor written, the same bf16/f16 rounding and NaNs, vdpbf16ps per
// the SDM). Included inside the namespace of the emulation unit, which compiles the AVX-512
// kernels' own source (vector_traits.hpp's interface, 16 lanes, 32 registers) with it, so that
// they run, and are tested, on machines without AVX-512. Slow by design: never dispatched.

// Every operation out of line: inlined, the kernels' unrolled register tiles of these loops took
// GCC 12 minutes and 8 MB of code; as calls, the unit compiles like the native one.
#define CONVGRAD_EMULATED_OP [[gnu::noinline]] static

struct vt {
    static constexpr int W = 16;
    struct V {
        float f[16];
    };
    static constexpr bool in_register = false;  // a V lives in memory
    using mask_t = uint32_t;                    // bit l: lane l
    CONVGRAD_EMULATED_OP mask_t mask(int n) { return (1u << n) - 1u; }
    CONVGRAD_EMULATED_OP V zero() { return V{}; }
    CONVGRAD_EMULATED_OP V load(const float *p) {
        V r;
        std::memcpy(r.f, p, sizeof r.f);
        return r;
    }
    CONVGRAD_EMULATED_OP V load_mask(const float *p, mask_t m) {
        V r{};
        for (int l = 0; l < 16; ++l)
            if (m >> l & 1u) r.f[l] = p[l];
        return r;
    }
    CONVGRAD_EMULATED_OP V bcast(const float *p) {
        V r;
        for (float &x : r.f) x = *p;
        return r;
    }
    CONVGRAD_EMULATED_OP V fma(V a, V b, V c) {
        for (int l = 0; l < 16; ++l) c.f[l] = std::fma(a.f[l], b.f[l], c.f[l]);
        return c;
    }
    // base[idx[l]] for each lane l.
    CONVGRAD_EMULATED_OP V gather(const float *base, const int32_t *idx) {
        V r;
        for (int l = 0; l < 16; ++l) r.f[l] = base[idx[l]];
        return r;
    }
    CONVGRAD_EMULATED_OP void store(float *p, V v) { std::memcpy(p, v.f, sizeof v.f); }
    // (Non-temporal stores are a hint: plain ones here.)
    CONVGRAD_EMULATED_OP void stream(float *p, V v) { store(p, v); }
    CONVGRAD_EMULATED_OP void stream_fence() {}
    CONVGRAD_EMULATED_OP void store_mask(float *p, V v, mask_t m) {
        for (int l = 0; l < 16; ++l)
            if (m >> l & 1u) p[l] = v.f[l];
    }
    CONVGRAD_EMULATED_OP V add(V a, V b) {
        for (int l = 0; l < 16; ++l) a.f[l] += b.f[l];
        return a;
    }
    CONVGRAD_EMULATED_OP mask_t mask_bits(unsigned bits) { return bits & 0xffffu; }
    // c + a * b on the lanes of m, c on the others (a padded tap must not make c NaN).
    CONVGRAD_EMULATED_OP V fma_mask(V a, V b, V c, mask_t m) {
        for (int l = 0; l < 16; ++l)
            if (m >> l & 1u) c.f[l] = std::fma(a.f[l], b.f[l], c.f[l]);
        return c;
    }
    // The even and the odd elements of the 32 elements a, b (a first).
    CONVGRAD_EMULATED_OP V even(V a, V b) { return every_other(a, b, 0); }
    CONVGRAD_EMULATED_OP V odd(V a, V b) { return every_other(a, b, 1); }
    // a0 b0 a1 b1 ...: its first 16 elements (lo) and its last 16 (hi).
    CONVGRAD_EMULATED_OP V interleave_lo(V a, V b) { return interleave(a, b, 0); }
    CONVGRAD_EMULATED_OP V interleave_hi(V a, V b) { return interleave(a, b, 8); }
    // r[i] lane j <-> r[j] lane i.
    CONVGRAD_EMULATED_OP void transpose(V r[16]) {
        for (int i = 0; i < 16; ++i)
            for (int j = i + 1; j < 16; ++j) std::swap(r[i].f[j], r[j].f[i]);
    }
    struct perm_t {
        int32_t i[16];
    };
    CONVGRAD_EMULATED_OP perm_t perm_index(int cg, int i) {
        perm_t p;
        for (int l = 0; l < 16; ++l) p.i[l] = l - l % cg + i;
        return p;
    }
    // vpermps: each lane's index taken modulo 16.
    CONVGRAD_EMULATED_OP V permute(V v, perm_t idx) {
        V r;
        for (int l = 0; l < 16; ++l) r.f[l] = v.f[idx.i[l] & 15];
        return r;
    }
    CONVGRAD_EMULATED_OP perm_t perm_from(const int32_t *idx) {
        perm_t p;
        std::memcpy(p.i, idx, sizeof p.i);
        return p;
    }
    // vpermt2ps: each lane's index taken modulo 32, bit 4 choosing b.
    CONVGRAD_EMULATED_OP V permute2(V a, V b, perm_t idx) {
        V r;
        for (int l = 0; l < 16; ++l) r.f[l] = (idx.i[l] & 16 ? b : a).f[idx.i[l] & 15];
        return r;
    }
    // Lanes l with bit D of l set from b, the others from a; and lane l <- lane l ^ D.
    template <int D>
    CONVGRAD_EMULATED_OP V blend_bit(V a, V b) {
        for (int l = 0; l < 16; ++l)
            if (l & D) a.f[l] = b.f[l];
        return a;
    }
    template <int D>
    CONVGRAD_EMULATED_OP V swap_bit(V v) {
        V r;
        for (int l = 0; l < 16; ++l) r.f[l] = v.f[l ^ D];
        return r;
    }
    // bf16/f16 <-> f32 for n contiguous elements (exact widening, nearest-even narrowing).
    CONVGRAD_EMULATED_OP void widen(data_type dt, const uint16_t *x, float *y, dim_t n) {
        widen_scalar(dt, x, y, n);
    }
    CONVGRAD_EMULATED_OP void narrow(data_type dt, const float *x, uint16_t *y, dim_t n) {
        narrow_scalar(dt, x, y, n);
    }
    CONVGRAD_EMULATED_OP V load_half_tail(data_type dt, const uint16_t *p, int n) {
        V r{};
        widen_scalar(dt, p, r.f, n);
        return r;
    }
    CONVGRAD_EMULATED_OP V load_bf16(const uint16_t *p) {
        V r;
        widen_scalar(data_type::bf16, p, r.f, 16);
        return r;
    }
    CONVGRAD_EMULATED_OP V load_f16(const uint16_t *p) {
        V r;
        widen_scalar(data_type::f16, p, r.f, 16);
        return r;
    }
    CONVGRAD_EMULATED_OP void store_bf16(uint16_t *p, V v) {
        narrow_scalar(data_type::bf16, v.f, p, 16);
    }
    CONVGRAD_EMULATED_OP void store_f16(uint16_t *p, V v) {
        narrow_scalar(data_type::f16, v.f, p, 16);
    }
    // 32 bf16 split by parity and merged back (as the native traits').
    CONVGRAD_EMULATED_OP void load_bf16_split(const uint16_t *p, V &even, V &odd) {
        uint16_t e[16], o[16];
        for (int l = 0; l < 16; ++l) {
            e[l] = p[2 * l];
            o[l] = p[2 * l + 1];
        }
        widen_scalar(data_type::bf16, e, even.f, 16);
        widen_scalar(data_type::bf16, o, odd.f, 16);
    }
    CONVGRAD_EMULATED_OP void store_bf16_merge(uint16_t *p, V even, V odd, bool) {
        uint16_t e[16], o[16];
        narrow_scalar(data_type::bf16, even.f, e, 16);
        narrow_scalar(data_type::bf16, odd.f, o, 16);
        for (int l = 0; l < 16; ++l) {
            p[2 * l] = e[l];
            p[2 * l + 1] = o[l];
        }
    }
    // The microkernel's rounded stores from the registers (as the native traits').
    template <data_type DT>
    CONVGRAD_EMULATED_OP void store_half(uint16_t *p, V v) {
        if constexpr (DT == data_type::bf16)
            store_bf16(p, v);
        else
            store_f16(p, v);
    }
    template <data_type DT>
    CONVGRAD_EMULATED_OP void store_half_mask(uint16_t *p, V v, mask_t m) {
        uint16_t h[16];
        narrow_scalar(DT, v.f, h, 16);
        for (int l = 0; l < 16; ++l)
            if (m >> l & 1u) p[l] = h[l];
    }
    template <data_type DT>
    CONVGRAD_EMULATED_OP void stream_half2(uint16_t *p, V lo, V hi) {
        store_half<DT>(p, lo);
        store_half<DT>(p + 16, hi);
    }
    // bf16 pairs (the K packing 2 of the microkernel): 16 dwords of two bf16 each.
    struct VI {
        uint32_t u[16];
    };
    CONVGRAD_EMULATED_OP VI load_pairs(const uint16_t *p) {
        VI r;
        std::memcpy(r.u, p, sizeof r.u);
        return r;
    }
    CONVGRAD_EMULATED_OP VI load_pairs_mask(const uint16_t *p, mask_t m) {
        VI r{};
        for (int l = 0; l < 16; ++l)
            if (m >> l & 1u) std::memcpy(&r.u[l], p + 2 * l, 4);
        return r;
    }
    CONVGRAD_EMULATED_OP VI bcast_pair(const uint16_t *p) {
        VI r;
        uint32_t pair;
        std::memcpy(&pair, p, sizeof pair);
        for (uint32_t &x : r.u) x = pair;
        return r;
    }
    // vdpbf16ps, lane by lane: the odd (high) bf16 of each pair first, then the even one, each
    // step one fused multiply-add rounded to nearest even, with denormal inputs and results
    // flushed to zero and a NaN result the quieted first NaN of (a, b, acc).
    CONVGRAD_EMULATED_OP V dot_bf16(V acc, VI a, VI b) {
        for (int l = 0; l < 16; ++l) {
            float c = dpbf16_daz(acc.f[l]);
            c = dpbf16_step(dpbf16_daz(bits_to_float(a.u[l] & 0xffff0000u)),
                            dpbf16_daz(bits_to_float(b.u[l] & 0xffff0000u)), c);
            acc.f[l] = dpbf16_step(dpbf16_daz(bits_to_float(a.u[l] << 16)),
                                   dpbf16_daz(bits_to_float(b.u[l] << 16)), c);
        }
        return acc;
    }

  private:
    CONVGRAD_EMULATED_OP V every_other(V a, V b, int first) {
        V r;
        for (int l = 0; l < 8; ++l) {
            r.f[l] = a.f[2 * l + first];
            r.f[8 + l] = b.f[2 * l + first];
        }
        return r;
    }
    CONVGRAD_EMULATED_OP V interleave(V a, V b, int from) {
        V r;
        for (int j = 0; j < 8; ++j) {
            r.f[2 * j] = a.f[from + j];
            r.f[2 * j + 1] = b.f[from + j];
        }
        return r;
    }
    CONVGRAD_EMULATED_OP float dpbf16_daz(float x) {
        const uint32_t u = float_to_bits(x);
        return (u & 0x7f800000u) == 0 ? bits_to_float(u & 0x80000000u) : x;
    }
    CONVGRAD_EMULATED_OP float dpbf16_step(float x, float y, float c) {
        for (float v : {x, y, c})
            if (std::isnan(v)) return bits_to_float(float_to_bits(v) | 0x00400000u);
        // (Round to nearest even: the default mode, which nothing in the library changes.)
        return dpbf16_daz(std::fma(x, y, c));
    }
};
