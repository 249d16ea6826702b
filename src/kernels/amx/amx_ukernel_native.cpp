// The microkernel on the real AMX instructions. This unit alone is compiled with -mamx-tile
// -mamx-bf16 (and -mamx-fp16 when the compiler has it: GCC 12 does not, see tdpfp16ps below);
// without those two flags nothing native is built, and native_built() says so. Nothing here
// runs unless the caller checked native_usable() (CPUID, XCR0 tile state and the OS
// permission, cpu_features.cpp).
#include "kernels/amx/amx_ukernel_native.hpp"

#include <algorithm>
#include <cstring>

#include "convgrad/types.hpp"

#if defined(__AMX_TILE__) && defined(__AMX_BF16__)
#include <immintrin.h>

#include "kernels/amx/amx_ukernel_impl.hpp"
#define CONVGRAD_AMX_NATIVE_BF16 1
// tdpfp16ps: GCC 12 has no -mamx-fp16 (so no _tile_dpfp16ps) and clang 14's assembler does
// not know the mnemonic, so without the flag the instruction is emitted as its encoding. It is
// tdpbf16ps's encoding with the VEX prefix field F2 instead of F3 (c4 e2 <~B:4 0 11> 5c
// <11 C A>, Intel operand order C, A, B); the bytes below were checked against GNU as 2.40's
// assembly of `tdpfp16ps %tmmB, %tmmA, %tmmC`. Only the native f16 tests on an AMX-FP16
// machine can run them; everywhere else they are not executed (native_usable() refuses).
#define CONVGRAD_AMX_NATIVE_FP16 1
#if defined(__AMX_FP16__)
#define CONVGRAD_TDPFP16PS(c, a, b) _tile_dpfp16ps(c, a, b)
#else
#define CONVGRAD_TDPFP16PS_0_4_6 ".byte 0xc4, 0xe2, 0x4b, 0x5c, 0xc4"
#define CONVGRAD_TDPFP16PS_1_4_7 ".byte 0xc4, 0xe2, 0x43, 0x5c, 0xcc"
#define CONVGRAD_TDPFP16PS_2_5_6 ".byte 0xc4, 0xe2, 0x4b, 0x5c, 0xd5"
#define CONVGRAD_TDPFP16PS_3_5_7 ".byte 0xc4, 0xe2, 0x43, 0x5c, 0xdd"
#define CONVGRAD_TDPFP16PS(c, a, b) \
    __asm__ volatile(CONVGRAD_TDPFP16PS_##c##_##a##_##b ::: "memory")
#endif
#endif

namespace convgrad::detail::amx::native {

#if defined(CONVGRAD_AMX_NATIVE_BF16)
// The AVX-512 vector traits (every AMX CPU has AVX-512F/BW/VL/DQ; this unit is compiled for
// them), for the rounding of C rows between the tile steps: bit for bit the scalar rounding.
namespace vec {
#include "kernels/avx512/vector_traits.hpp"
}  // namespace vec

namespace {

// GCC's tile intrinsics are macros that paste the tile number into the assembly text, so each
// tile number must appear as a literal: these expand a compile-time T into one of 8 calls.
#define CONVGRAD_EACH_TILE(T, CALL) \
    if constexpr (T == 0)           \
        CALL(0);                    \
    else if constexpr (T == 1)      \
        CALL(1);                    \
    else if constexpr (T == 2)      \
        CALL(2);                    \
    else if constexpr (T == 3)      \
        CALL(3);                    \
    else if constexpr (T == 4)      \
        CALL(4);                    \
    else if constexpr (T == 5)      \
        CALL(5);                    \
    else if constexpr (T == 6)      \
        CALL(6);                    \
    else                            \
        CALL(7)

// Inside a parallel region with the tile hooks (load_full_config ... release) nothing but our
// kernels runs on the thread, so the configuration it last loaded is the one the hardware
// holds: `loaded_key` is trusted there. Outside (a microkernel called directly), other code on the
// thread may have changed it, and the hardware is asked (STTILECFG, which stalls the next load
// of its result: a third of a 1x1 layer's time when it ran on every call).
thread_local uint32_t loaded_key = 0;
thread_local bool loaded_trusted = false;
// Configurations by shape, each written once per shape seen (keys 0: none yet).
thread_local tile_config slots[8];
thread_local uint32_t slot_keys[8] = {};

template <amx_dot Dot>
struct native_tiles {
    static void configure(int M, int N, int pairs, int m0) {
        // Reloading zeroes the tiles, so only when the configuration differs. Inside the
        // hooks the last configuration is known by its shape alone, and loaded from a slot
        // written only when the shape changes: a configuration built in memory just before
        // LDTILECFG reads it waits behind the previous call's tile stores, which wait for its
        // last products.
        const uint32_t key =
            uint32_t(M) | uint32_t(N) << 8 | uint32_t(pairs) << 16 | uint32_t(m0) << 24;
        if (loaded_trusted) {
            if (key != loaded_key) {
                const unsigned i =
                    (unsigned(M) + 31u * unsigned(N) + 17u * unsigned(pairs) + 5u * unsigned(m0)) %
                    8;
                if (slot_keys[i] != key) {
                    slots[i] = ukernel_config_impl(M, N, pairs, m0);
                    slot_keys[i] = key;
                }
                _tile_loadconfig(&slots[i]);
                loaded_key = key;
            }
            return;
        }
        const tile_config cfg = ukernel_config_impl(M, N, pairs, m0);
        tile_config current;
        _tile_storeconfig(&current);
        if (!(current == cfg)) _tile_loadconfig(&cfg);
    }
    template <int T>
    static void zero() {
#define CONVGRAD_ZERO(t) _tile_zero(t)
        CONVGRAD_EACH_TILE(T, CONVGRAD_ZERO);
#undef CONVGRAD_ZERO
    }
    template <int T>
    static void load(const void *base, int64_t stride_bytes) {
#define CONVGRAD_LOAD(t) _tile_loadd(t, base, stride_bytes)
        CONVGRAD_EACH_TILE(T, CONVGRAD_LOAD);
#undef CONVGRAD_LOAD
    }
    template <int T>
    static void store(void *base, int64_t stride_bytes) {
#define CONVGRAD_STORE(t) _tile_stored(t, base, stride_bytes)
        CONVGRAD_EACH_TILE(T, CONVGRAD_STORE);
#undef CONVGRAD_STORE
    }
    // The four products of the 2 x 2 blocking (amx_ukernel_impl.hpp's tile numbers).
    template <int C, int A, int B>
    static void dot() {
        static_assert((C == 0 && A == 4 && B == 6) || (C == 1 && A == 4 && B == 7) ||
                      (C == 2 && A == 5 && B == 6) || (C == 3 && A == 5 && B == 7));
#define CONVGRAD_FOUR_PRODUCTS(insn) \
    if constexpr (C == 0)            \
        insn(0, 4, 6);               \
    else if constexpr (C == 1)       \
        insn(1, 4, 7);               \
    else if constexpr (C == 2)       \
        insn(2, 5, 6);               \
    else                             \
        insn(3, 5, 7)
        if constexpr (Dot == amx_dot::bf16) {
            CONVGRAD_FOUR_PRODUCTS(_tile_dpbf16ps);
        } else {
            CONVGRAD_FOUR_PRODUCTS(CONVGRAD_TDPFP16PS);
        }
#undef CONVGRAD_FOUR_PRODUCTS
    }
    static constexpr bool dense_finish = true;
    template <finish_kind K>
    [[gnu::always_inline]] static inline void finish_dense(const float *c, char *o,
                                                           const float *bias) {
        __m512 v0 = _mm512_loadu_ps(c), v1 = _mm512_loadu_ps(c + 16);
        if (bias) {
            v0 = _mm512_add_ps(v0, _mm512_loadu_ps(bias));
            v1 = _mm512_add_ps(v1, _mm512_loadu_ps(bias + 16));
        }
        if constexpr (K == finish_kind::dense_f32) {
            _mm512_storeu_ps(reinterpret_cast<float *>(o), v0);
            _mm512_storeu_ps(reinterpret_cast<float *>(o) + 16, v1);
        } else if constexpr (K == finish_kind::dense_bf16) {
            // VCVTNE2PS2BF16 rounds to nearest even and quiets NaNs as float_to_bf16 does, but
            // reads denormals as zero: rows with one (rare: tile results are flushed, so only
            // a bias can make one) take the integer rounding. (A dozen vector instructions per
            // row fewer than always taking it: ResNet-50's 3x3 forward 1.25x.)
            const __mmask16 denormal =
                _mm512_fpclass_ps_mask(v0, 0x20) | _mm512_fpclass_ps_mask(v1, 0x20);
            if (__builtin_expect(denormal == 0, 1)) {
                _mm512_storeu_si512(o, (__m512i)_mm512_cvtne2ps_pbh(v1, v0));
            } else {
                _mm256_storeu_si256(reinterpret_cast<__m256i *>(o), vec::vt::to_bf16(v0));
                _mm256_storeu_si256(reinterpret_cast<__m256i *>(o) + 1, vec::vt::to_bf16(v1));
            }
        } else {
            _mm256_storeu_si256(reinterpret_cast<__m256i *>(o), vec::vt::to_f16(v0));
            _mm256_storeu_si256(reinterpret_cast<__m256i *>(o) + 1, vec::vt::to_f16(v1));
        }
    }
    // The row at c: two masked vectors of 16 columns, plus the bias, rounded once and stored.
    [[gnu::always_inline]] static inline void finish_row(const c_rows &r, const float *c,
                                                         int64_t at) {
        // (A copy: the address of r must not escape, or its fields would be read again after
        // every store below, which may alias anything.)
        if (r.col_stride != 1) return finish_row_portable(c_rows(r), c, at);
        for (int n0 = 0; n0 < r.cols; n0 += 16) {
            const __mmask16 k = vec::vt::mask(std::min(16, r.cols - n0));
            __m512 v = _mm512_maskz_loadu_ps(k, c + n0);
            if (r.bias) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(k, r.bias + n0));
            if (r.dt == data_type::f32) {
                _mm512_mask_storeu_ps(static_cast<float *>(r.out) + at + n0, k, v);
            } else {
                uint16_t *o = static_cast<uint16_t *>(r.out) + at + n0;
                _mm256_mask_storeu_epi16(
                    o, k, r.dt == data_type::bf16 ? vec::vt::to_bf16(v) : vec::vt::to_f16(v));
            }
        }
    }
};

}  // namespace
#endif

bool built(amx_dot dot) {
#if defined(CONVGRAD_AMX_NATIVE_FP16)
    (void)dot;
    return true;
#elif defined(CONVGRAD_AMX_NATIVE_BF16)
    return dot == amx_dot::bf16;
#else
    (void)dot;
    return false;
#endif
}

void run(amx_dot dot, const ukernel_args &args) {
#if defined(CONVGRAD_AMX_NATIVE_BF16)
    if (dot == amx_dot::bf16) return ukernel_run<native_tiles<amx_dot::bf16>>(args);
#if defined(CONVGRAD_AMX_NATIVE_FP16)
    return ukernel_run<native_tiles<amx_dot::f16>>(args);
#endif
#endif
    (void)args;
    throw error(status::unimplemented, std::string("AMX microkernel: the native ") +
                                           to_string(dot) + " kernel was not compiled");
}

void load_full_config() {
#if defined(CONVGRAD_AMX_NATIVE_BF16)
    const tile_config full = ukernel_config(ukernel_max_m, ukernel_max_n, k_step / 2);
    _tile_loadconfig(&full);
    loaded_key =
        uint32_t(ukernel_max_m) | uint32_t(ukernel_max_n) << 8 | uint32_t(k_step / 2) << 16;
    loaded_trusted = true;
#endif
}

void finish_rows(const c_rows &r) {
#if defined(CONVGRAD_AMX_NATIVE_BF16)
    for (int m = 0; m < r.rows; ++m)
        native_tiles<amx_dot::bf16>::finish_row(r, r.c_of(m), r.at_of(m));
#else
    for (int m = 0; m < r.rows; ++m) finish_row_portable(r, m);
#endif
}

void release() {
#if defined(CONVGRAD_AMX_NATIVE_BF16)
    loaded_trusted = false;
    _tile_release();
#endif
}

}  // namespace convgrad::detail::amx::native
