// The AMX microkernel body, written once over a tile-operations policy. Included by
// amx_ukernel_native.cpp (policy: the intrinsics, compiled with the AMX flags) and
// amx_ukernel.cpp (policy: the emulation). See amx_ukernel.hpp for the contract.
//
// A policy provides, with tile numbers as template arguments (the instructions encode them):
//   static void configure(int M, int N, int pairs, int m0);  ukernel_config_impl(...), loaded
//                                                            unless it is the thread's current one
//   template <int T> static void zero();
//   template <int T> static void load(const void *base, int64_t stride_bytes);
//   template <int T> static void store(void *base, int64_t stride_bytes);
//   template <int C, int A, int B> static void dot();   TDPBF16PS or TDPFP16PS
//   static void finish_row(const c_rows &r, const float *c, int64_t at);
//       the row of r.cols values at c, plus r.bias, rounded to r.dt and stored at offset `at`
//       of r.out (columns r.col_stride apart)
//   static constexpr bool dense_finish;  and when true:
//   template <finish_kind K> static void finish_dense(const float *c, char *o, const float *bias);
//       32 values at c (plus bias) rounded to K's type and stored at o, contiguous
#pragma once

#include <cstdint>

#include "kernels/amx/amx_tile_config.hpp"
#include "kernels/amx/amx_ukernel.hpp"

namespace convgrad::detail::amx {

// Tile numbers: C(i, j) = tmm(2i + j), A(i) = tmm(4 + i), B(j) = tmm(6 + j).
inline constexpr int tile_c00 = 0, tile_c01 = 1, tile_c10 = 2, tile_c11 = 3;
inline constexpr int tile_a0 = 4, tile_a1 = 5, tile_b0 = 6, tile_b1 = 7;

// m0: rows in the first tile row (0: min(M, 16)).
inline tile_config ukernel_config_impl(int M, int N, int pairs, int m0 = 0) {
    tile_config cfg;
    cfg.palette_id = 1;
    if (m0 <= 0) m0 = M < 16 ? M : 16;
    const int m1 = M - m0, n0 = N < 16 ? N : 16, n1 = N - n0;
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

// How a call finishes the previous call's rows: not at all, through the policy's general
// finish_row, or (native policies) a dense row of 32 columns of one output type.
enum class finish_kind { none, general, dense_f32, dense_bf16, dense_f16 };

// The side work of a call (amx_ukernel.hpp), spread over its `steps` tile steps: after each
// step the next share of rows is finished (the quota rounded up, so the last steps may have
// none left).
//
// Why per step, and why so lean (measured on ResNet-50's res2 3x3 forward, 1 thread, Xeon with
// AMX): the tile unit runs the products of the steps the front end has delivered, and work
// between steps delays the next step's delivery. A batch item's share of rows finished after
// its steps instead of a step's share after each step: 1.36x slower. The integer bf16
// rounding, a dozen vector instructions per row more than VCVTNE2PS2BF16: 1.28x slower. State
// that GCC kept in memory (spilled, or this object once its address escaped into a call): a
// store and a load per step, 1.15x slower. Hence one specialization per kind of row, locals
// for everything that changes from step to step, and no call that takes this object's address.
template <class Tiles, finish_kind Kind>
struct side_state {
    c_rows finish;             // the rows (read-only here)
    const float *c = nullptr;  // the next row of C to finish
    char *o = nullptr;         // its output (dense kinds)
    int64_t at = 0;            // its output offset (general kind)
    int64_t size = 0;          // bytes of an output element (dense kinds)
    int64_t o_stride = 0;      // bytes between output rows (dense kinds)
    int rows_left = 0, row_quota = 0;
    int seg_left = 0;  // rows left in the current segment (c_rows::rows0)

    side_state(const side_work *w, int64_t steps) {
        if constexpr (Kind != finish_kind::none) {
            finish = w->finish;
            c = finish.C;
            at = finish.base;
            size = finish.dt == data_type::f32 ? 4 : 2;
            o = static_cast<char *>(finish.out) + finish.base * size;
            o_stride = finish.row_stride * size;
            rows_left = finish.rows;
            seg_left = finish.rows0 > 0 ? finish.rows0 : finish.rows;
            row_quota = int((finish.rows + steps - 1) / steps);
        } else {
            (void)w, (void)steps;
        }
    }
    // The second segment's first row (rare: once per call at most).
    void next_segment() {
        c = finish.C + 16 * finish.ldc;
        at = finish.base1;
        o = static_cast<char *>(finish.out) + finish.base1 * size;
        seg_left = rows_left;
    }
    [[gnu::always_inline]] inline void after_step() {
        if constexpr (Kind == finish_kind::general) {
            for (int q = row_quota; q > 0 && rows_left > 0; --q, --rows_left) {
                if (seg_left-- == 0) next_segment(), --seg_left;
                Tiles::finish_row(finish, c, at);
                c += finish.ldc;
                at += finish.row_stride;
            }
        } else if constexpr (Kind != finish_kind::none) {
            for (int q = row_quota; q > 0 && rows_left > 0; --q, --rows_left) {
                if (seg_left-- == 0) next_segment(), --seg_left;
                Tiles::template finish_dense<Kind>(c, o, finish.bias);
                c += ukernel_max_n;
                o += o_stride;
            }
        }
    }
};

// The body for the blocking of C: TwoM (M > 16: a second row of tiles), TwoN (N > 16). The
// step loop keeps its pointers and strides in locals: the side work stores through pointers
// that may alias anything, and values read through `p` would be read again after every store.
template <class Tiles, bool TwoM, bool TwoN, finish_kind Kind>
struct ukernel_blocking {
    static void load_c(float *c, int64_t ldc) {
        const int64_t ldc_bytes = ldc * 4;
        Tiles::template load<tile_c00>(c, ldc_bytes);
        if constexpr (TwoN) Tiles::template load<tile_c01>(c + 16, ldc_bytes);
        if constexpr (TwoM) Tiles::template load<tile_c10>(c + 16 * ldc, ldc_bytes);
        if constexpr (TwoM && TwoN) Tiles::template load<tile_c11>(c + 16 * ldc + 16, ldc_bytes);
    }
    static void zero_c() {
        Tiles::template zero<tile_c00>();
        if constexpr (TwoN) Tiles::template zero<tile_c01>();
        if constexpr (TwoM) Tiles::template zero<tile_c10>();
        if constexpr (TwoM && TwoN) Tiles::template zero<tile_c11>();
    }
    static void store_c(float *c, int64_t ldc) {
        const int64_t ldc_bytes = ldc * 4;
        Tiles::template store<tile_c00>(c, ldc_bytes);
        if constexpr (TwoN) Tiles::template store<tile_c01>(c + 16, ldc_bytes);
        if constexpr (TwoM) Tiles::template store<tile_c10>(c + 16 * ldc, ldc_bytes);
        if constexpr (TwoM && TwoN) Tiles::template store<tile_c11>(c + 16 * ldc + 16, ldc_bytes);
    }
    // Tile steps [s0, s1) of batch item b, as configured (k_step elements of K each, or the
    // configured tail in the single step past the full ones).
    [[gnu::always_inline]] static inline void steps(const ukernel_args &p, int b, int64_t s0,
                                                    int64_t s1, side_state<Tiles, Kind> &side) {
        const int64_t lda = p.lda, ldb = p.ldb, lda_bytes = lda * 2, ldb_bytes = ldb * 2;
        const int64_t a_step = p.a_block > 0 ? p.a_block : k_step, b_step = (k_step / 2) * ldb;
        const int64_t a1 = p.a1_offset > 0 ? p.a1_offset : (p.m0 > 0 ? p.m0 : 16) * lda;
        const uint16_t *a = p.A[b] + s0 * a_step, *bb = p.B[b] + s0 * b_step;
        for (int64_t s = s0; s < s1; ++s, a += a_step, bb += b_step) {
            // Each product issued as soon as its two tiles are loaded, the next load after it
            // (the four products keep their order: the sums are the same). Loading all four
            // tiles first ran 2% slower over 27 AMX suite rows (1.01-1.04x per op, 4 alternating
            // runs; within the noise of single rows).
            Tiles::template load<tile_a0>(a, lda_bytes);
            Tiles::template load<tile_b0>(bb, ldb_bytes);
            Tiles::template dot<tile_c00, tile_a0, tile_b0>();
            if constexpr (TwoN) Tiles::template load<tile_b1>(bb + 32, ldb_bytes);
            if constexpr (TwoN) Tiles::template dot<tile_c01, tile_a0, tile_b1>();
            if constexpr (TwoM) Tiles::template load<tile_a1>(a + a1, lda_bytes);
            if constexpr (TwoM) Tiles::template dot<tile_c10, tile_a1, tile_b0>();
            if constexpr (TwoM && TwoN) Tiles::template dot<tile_c11, tile_a1, tile_b1>();
            side.after_step();
        }
    }
    static void run(const ukernel_args &p) {
        const int64_t kp = padded_k(p.K), full_steps = kp / k_step;
        const int tail_pairs = int(kp % k_step) / 2;
        side_state<Tiles, Kind> side(p.side, p.batch * (full_steps + (tail_pairs ? 1 : 0)));
        float *const c = p.C;
        const int64_t ldc = p.ldc;
        if (full_steps > 0) {
            Tiles::configure(p.M, p.N, k_step / 2, p.m0);
            p.accumulate ? load_c(c, ldc) : zero_c();
            for (int b = 0; b < p.batch; ++b) steps(p, b, 0, full_steps, side);
            store_c(c, ldc);
            if (tail_pairs == 0) return;  // else the tail configuration zeroes the tiles
        }
        Tiles::configure(p.M, p.N, tail_pairs, p.m0);
        (full_steps > 0 || p.accumulate) ? load_c(c, ldc) : zero_c();
        for (int b = 0; b < p.batch; ++b) steps(p, b, full_steps, full_steps + 1, side);
        store_c(c, ldc);
    }
};

template <class Tiles, finish_kind Kind>
void ukernel_run_kind(const ukernel_args &p) {
    if (p.M > (p.m0 > 0 ? p.m0 : 16))
        return p.N > 16 ? ukernel_blocking<Tiles, true, true, Kind>::run(p)
                        : ukernel_blocking<Tiles, true, false, Kind>::run(p);
    return p.N > 16 ? ukernel_blocking<Tiles, false, true, Kind>::run(p)
                    : ukernel_blocking<Tiles, false, false, Kind>::run(p);
}

// The call, specialized for its blocking and the kind of rows its side work finishes.
template <class Tiles>
void ukernel_run(const ukernel_args &p) {
    const c_rows *r = p.side ? &p.side->finish : nullptr;
    if (!r || r->rows == 0) return ukernel_run_kind<Tiles, finish_kind::none>(p);
    if constexpr (Tiles::dense_finish) {
        if (r->cols == ukernel_max_n && r->col_stride == 1 && r->ldc == ukernel_max_n) {
            if (r->dt == data_type::bf16)
                return ukernel_run_kind<Tiles, finish_kind::dense_bf16>(p);
            if (r->dt == data_type::f16) return ukernel_run_kind<Tiles, finish_kind::dense_f16>(p);
            return ukernel_run_kind<Tiles, finish_kind::dense_f32>(p);
        }
    }
    return ukernel_run_kind<Tiles, finish_kind::general>(p);
}

}  // namespace convgrad::detail::amx
