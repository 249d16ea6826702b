// The AMX microkernel body, written once over a tile-operations policy. Included by
// amx_ukernel_native.cpp (policy: the intrinsics, compiled with the AMX flags) and
// amx_ukernel.cpp (policy: the emulation). See amx_ukernel.hpp for the contract.
//
// A policy provides, with tile numbers as template arguments (the instructions encode them):
//   static void configure(const tile_config &);  load it unless it is the thread's current one
//   template <int T> static void zero();
//   template <int T> static void load(const void *base, int64_t stride_bytes);
//   template <int T> static void store(void *base, int64_t stride_bytes);
//   template <int C, int A, int B> static void dot();   TDPBF16PS or TDPFP16PS
#pragma once

#include <cstdint>

#include "kernels/amx/amx_tile_config.hpp"
#include "kernels/amx/amx_ukernel.hpp"

namespace convgrad::detail::amx {

// Tile numbers: C(i, j) = tmm(2i + j), A(i) = tmm(4 + i), B(j) = tmm(6 + j).
inline constexpr int tile_c00 = 0, tile_c01 = 1, tile_c10 = 2, tile_c11 = 3;
inline constexpr int tile_a0 = 4, tile_a1 = 5, tile_b0 = 6, tile_b1 = 7;

inline tile_config ukernel_config_impl(int M, int N, int pairs) {
    tile_config cfg;
    cfg.palette_id = 1;
    const int m0 = M < 16 ? M : 16, m1 = M - m0, n0 = N < 16 ? N : 16, n1 = N - n0;
    cfg.set(tile_c00, m0, 4 * n0);
    if (n1) cfg.set(tile_c01, m0, 4 * n1);
    if (m1) cfg.set(tile_c10, m1, 4 * n0);
    if (m1 && n1) cfg.set(tile_c11, m1, 4 * n1);
    cfg.set(tile_a0, m0, 4 * pairs);
    if (m1) cfg.set(tile_a1, m1, 4 * pairs);
    cfg.set(tile_b0, pairs, 4 * n0);
    if (n1) cfg.set(tile_b1, pairs, 4 * n1);
    return cfg;
}

template <class Tiles>
struct ukernel_body {
    const ukernel_args &p;
    bool two_m, two_n;
    float *c10, *c01, *c11;
    int64_t ldc_bytes;

    explicit ukernel_body(const ukernel_args &a)
        : p(a),
          two_m(a.M > 16),
          two_n(a.N > 16),
          // (the other quarters of C only where they exist: no pointer beyond C's rows)
          c10(two_m ? a.C + 16 * a.ldc : a.C),
          c01(two_n ? a.C + 16 : a.C),
          c11(two_m && two_n ? a.C + 16 * a.ldc + 16 : a.C),
          ldc_bytes(a.ldc * 4) {}

    void load_c() {
        Tiles::template load<tile_c00>(p.C, ldc_bytes);
        if (two_n) Tiles::template load<tile_c01>(c01, ldc_bytes);
        if (two_m) Tiles::template load<tile_c10>(c10, ldc_bytes);
        if (two_m && two_n) Tiles::template load<tile_c11>(c11, ldc_bytes);
    }
    void zero_c() {
        Tiles::template zero<tile_c00>();
        if (two_n) Tiles::template zero<tile_c01>();
        if (two_m) Tiles::template zero<tile_c10>();
        if (two_m && two_n) Tiles::template zero<tile_c11>();
    }
    void store_c() {
        Tiles::template store<tile_c00>(p.C, ldc_bytes);
        if (two_n) Tiles::template store<tile_c01>(c01, ldc_bytes);
        if (two_m) Tiles::template store<tile_c10>(c10, ldc_bytes);
        if (two_m && two_n) Tiles::template store<tile_c11>(c11, ldc_bytes);
    }
    // One tile step: K elements [k0, k0 + 2 * pairs) of batch item b, as configured.
    void step(int b, int64_t k0) {
        const uint16_t *a = p.A[b] + k0, *bb = p.B[b] + (k0 / 2) * p.ldb;
        const int64_t lda_bytes = p.lda * 2, ldb_bytes = p.ldb * 2;
        Tiles::template load<tile_a0>(a, lda_bytes);
        Tiles::template load<tile_b0>(bb, ldb_bytes);
        if (two_n) Tiles::template load<tile_b1>(bb + 32, ldb_bytes);
        if (two_m) Tiles::template load<tile_a1>(a + 16 * p.lda, lda_bytes);
        Tiles::template dot<tile_c00, tile_a0, tile_b0>();
        if (two_n) Tiles::template dot<tile_c01, tile_a0, tile_b1>();
        if (two_m) Tiles::template dot<tile_c10, tile_a1, tile_b0>();
        if (two_m && two_n) Tiles::template dot<tile_c11, tile_a1, tile_b1>();
    }

    void run() {
        const int64_t kp = padded_k(p.K), full_steps = kp / k_step;
        const int tail_pairs = int(kp % k_step) / 2;
        if (full_steps > 0) {
            Tiles::configure(ukernel_config_impl(p.M, p.N, k_step / 2));
            p.accumulate ? load_c() : zero_c();
            for (int b = 0; b < p.batch; ++b)
                for (int64_t s = 0; s < full_steps; ++s) step(b, s * k_step);
            if (tail_pairs == 0) return store_c();
            store_c();  // the tail configuration zeroes the tiles
        }
        Tiles::configure(ukernel_config_impl(p.M, p.N, tail_pairs));
        (full_steps > 0 || p.accumulate) ? load_c() : zero_c();
        for (int b = 0; b < p.batch; ++b) step(b, full_steps * k_step);
        store_c();
    }
};

}  // namespace convgrad::detail::amx
