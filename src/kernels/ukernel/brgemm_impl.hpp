// The one batch-reduce microkernel (contract in brgemm_args.hpp), for every element type and K
// packing. Included by each ISA's translation unit inside its own namespace after it defines
// `struct vt`, the vector traits:
//   W, V, mask_t, mask(n), zero(), load/load_mask/store/store_mask of floats, bcast(float *),
//   fma(a, b, c)                                           for f32 (P = 1);
//   VI, load_pairs/load_pairs_mask(uint16_t *), bcast_pair(uint16_t *),
//   dot_bf16(acc, a, b) with the semantics of vdpbf16ps    for bf16 (P = 2), only where the
//   unit defines CONVGRAD_UKERNEL_BF16.
// Nothing here is shared between ISAs, so no inline code compiled with one ISA's flags can leak
// into another's. Standard headers come from the including file, outside the namespace.

// One vector of B (the last, lane-masked one) and one k step of one row, per element type: the
// tall tiles' k loop is written once for both.
static inline typename vt::V ukernel_load_b(const float *p, typename vt::mask_t m) {
    return vt::load_mask(p, m);
}
// acc + a * b, kept in acc's register where the ISA can say so (vt::fma_acc): left to choose,
// GCC writes some products over the broadcast's register instead, and with 16 registers the
// accumulators then move between registers and spill. AVX2's 4 x 3 tile (GCC 12): 14 stack
// accesses and 16 register moves per 48 FMAs, 4 and 4 with it.
template <typename T>
concept vector_traits_with_fma_acc = requires(typename T::V v) {
    T::fma_acc(v, v, v);
};
template <typename V, typename T = vt>
__attribute__((always_inline)) inline V ukernel_fma(V a, V b, V acc) {
    if constexpr (vector_traits_with_fma_acc<T>)
        return T::fma_acc(a, b, acc);
    else
        return T::fma(a, b, acc);
}
static inline typename vt::V ukernel_madd(typename vt::V acc, const float *a, typename vt::V b) {
    return ukernel_fma(vt::bcast(a), b, acc);
}
static inline typename vt::V ukernel_load_b_full(const float *p) {
    return vt::load(p);
}
#ifdef CONVGRAD_UKERNEL_BF16
static inline typename vt::VI ukernel_load_b(const uint16_t *p, typename vt::mask_t m) {
    return vt::load_pairs_mask(p, m);
}
static inline typename vt::V ukernel_madd(typename vt::V acc, const uint16_t *a,
                                          typename vt::VI b) {
    return vt::dot_bf16(acc, vt::bcast_pair(a), b);
}
static inline typename vt::VI ukernel_load_b_full(const uint16_t *p) {
    return vt::load_pairs(p);
}
#endif

// The accumulators into C16's rows of bf16/f16, each rounded once (the rounding and NaN rule
// of the scalar conversions). (Inlined and unrolled like the f32 stores: indexing the
// accumulators by a run-time row would keep them in memory.)
//
// Where the ISA's traits round from the registers (store_half, store_half_mask, stream_half2:
// the AVX-512 units, native or emulated), each vector is rounded and stored as it is; with
// `stream` and full vectors, two at a time as one 64-byte store past the caches. Else through a
// row of floats on the stack and the ISA's narrowing of a run, whose tail is the row's tail.
// Through the stack, ResNet-50's res2 1x1 forward in bf16 spent about a third of its
// microkernel time in this store (Zen 4, perf).
template <typename T>
concept vector_traits_with_half_stores = requires(typename T::V v, uint16_t *p,
                                                  typename T::mask_t m) {
    T::template store_half<data_type::bf16>(p, v);
    T::template store_half_mask<data_type::bf16>(p, v, m);
    T::template stream_half2<data_type::bf16>(p, v, v);
};
//
// Where the ISA rounds to bf16 by an instruction that reads denormals as zero (the AVX512_BF16
// unit's vcvtne2ps2bf16: vector_traits_with_cvtne), a tile none of whose lanes is denormal (the
// common case) is rounded by it two vectors at a time, with one check for the whole tile and
// the row pointers read once; else vector by vector as below. Checked per pair of vectors,
// with the pointer table read again after each store (a store may alias it): ResNet-50's res2
// 1x1 forward in bf16 (K = 64, 32 steps per tile) had 14% of the microkernel's samples outside
// its k loop, 12% this way, and ran 1.02x as fast (Zen 5, 2 threads, 6 alternated runs).
template <typename T>
concept vector_traits_with_cvtne = requires(typename T::V v, uint16_t *p, typename T::mask_t m) {
    T::cvtne_misreads(v);
    T::store_bf16x2_cvtne(p, v, v, true);
    T::store_bf16_cvtne_mask(p, v, m);
};
template <int M, int NV, typename E, typename T = vt>
__attribute__((always_inline)) inline bool ukernel_store_bf16_cvtne(
    const brgemm_args<E> &a, const typename vt::V (&acc)[M][NV], typename vt::mask_t last) {
    constexpr int W = T::W;
    typename T::mask_t misread = 0;
#pragma GCC unroll 16
    for (int m = 0; m < M; ++m)
#pragma GCC unroll 4
        for (int j = 0; j < NV; ++j) misread |= T::cvtne_misreads(acc[m][j]);
    if (misread != 0) return false;
    uint16_t *rows[M];
#pragma GCC unroll 16
    for (int m = 0; m < M; ++m) rows[m] = a.C16[m];
    // As the stores below: streamed only with whole lines (full last vectors, two or more).
    const bool full = a.tail == W, stream = a.stream && full && NV >= 2;
    // The vectors in pairs; a last odd one, or a lane-masked last one, alone.
#pragma GCC unroll 16
    for (int m = 0; m < M; ++m) {
#pragma GCC unroll 2
        for (int j = 0; j + 2 < NV; j += 2)
            T::store_bf16x2_cvtne(rows[m] + j * W, acc[m][j], acc[m][j + 1], stream);
        if constexpr (NV % 2 == 0) {
            if (full)
                T::store_bf16x2_cvtne(rows[m] + (NV - 2) * W, acc[m][NV - 2], acc[m][NV - 1],
                                      stream);
            else {
                if constexpr (NV >= 2)
                    T::store_bf16_cvtne_mask(rows[m] + (NV - 2) * W, acc[m][NV - 2], T::mask(W));
                T::store_bf16_cvtne_mask(rows[m] + (NV - 1) * W, acc[m][NV - 1], last);
            }
        } else {
            T::store_bf16_cvtne_mask(rows[m] + (NV - 1) * W, acc[m][NV - 1],
                                     full ? T::mask(W) : last);
        }
    }
    return true;
}
template <data_type DT, int M, int NV, typename E, typename T = vt>  // (T: looked up late)
__attribute__((always_inline)) inline void ukernel_store_halves(
    const brgemm_args<E> &a, const typename vt::V (&acc)[M][NV], typename vt::mask_t last) {
    constexpr int W = T::W;
    const bool full = a.tail == W;
    if constexpr (DT == data_type::bf16 && vector_traits_with_cvtne<T>)
        if (ukernel_store_bf16_cvtne<M, NV>(a, acc, last)) return;
    if (a.stream && full && NV >= 2) {
#pragma GCC unroll 16
        for (int m = 0; m < M; ++m) {
#pragma GCC unroll 4
            for (int j = 0; j + 1 < NV; j += 2)
                T::template stream_half2<DT>(a.C16[m] + j * W, acc[m][j], acc[m][j + 1]);
            if constexpr (NV % 2 == 1)
                T::template store_half<DT>(a.C16[m] + (NV - 1) * W, acc[m][NV - 1]);
        }
        return;
    }
#pragma GCC unroll 16
    for (int m = 0; m < M; ++m) {
#pragma GCC unroll 4
        for (int j = 0; j < NV - 1; ++j) T::template store_half<DT>(a.C16[m] + j * W, acc[m][j]);
        if (full)
            T::template store_half<DT>(a.C16[m] + (NV - 1) * W, acc[m][NV - 1]);
        else
            T::template store_half_mask<DT>(a.C16[m] + (NV - 1) * W, acc[m][NV - 1], last);
    }
}
template <int M, int NV, typename E>
__attribute__((always_inline)) inline void ukernel_store_narrow(
    const brgemm_args<E> &a, const typename vt::V (&acc)[M][NV], typename vt::mask_t last) {
    if constexpr (vector_traits_with_half_stores<vt>) {
        if (a.narrow == data_type::bf16)
            ukernel_store_halves<data_type::bf16, M, NV>(a, acc, last);
        else
            ukernel_store_halves<data_type::f16, M, NV>(a, acc, last);
    } else {
        constexpr int W = vt::W;
        alignas(64) float row[NV * W];
        const dim_t n = dim_t(NV - 1) * W + a.tail;
#pragma GCC unroll 16
        for (int m = 0; m < M; ++m) {
#pragma GCC unroll 4
            for (int j = 0; j < NV; ++j) vt::store(row + j * W, acc[m][j]);
            vt::narrow(a.narrow, row, a.C16[m], n);
        }
    }
}

// The accumulators into C's rows (or C16's, rounded).
template <int M, int NV, typename E>
__attribute__((always_inline)) inline void ukernel_store(const brgemm_args<E> &a,
                                                         const typename vt::V (&acc)[M][NV],
                                                         typename vt::mask_t last) {
    if (a.narrow != data_type::f32) return ukernel_store_narrow<M, NV>(a, acc, last);
    if (a.stream) {
        const bool full = a.tail == vt::W;
#pragma GCC unroll 16
        for (int m = 0; m < M; ++m) {
#pragma GCC unroll 4
            for (int j = 0; j < NV - 1; ++j) vt::stream(a.C[m] + j * vt::W, acc[m][j]);
            if (full)
                vt::stream(a.C[m] + (NV - 1) * vt::W, acc[m][NV - 1]);
            else
                vt::store_mask(a.C[m] + (NV - 1) * vt::W, acc[m][NV - 1], last);
        }
        return;
    }
#pragma GCC unroll 16
    for (int m = 0; m < M; ++m) {
#pragma GCC unroll 4
        for (int j = 0; j < NV - 1; ++j) vt::store(a.C[m] + j * vt::W, acc[m][j]);
        vt::store_mask(a.C[m] + (NV - 1) * vt::W, acc[m][NV - 1], last);
    }
}

// Row m of batch element b's A, before a_off (brgemm_args: its own row pointers, the shared
// ones displaced by a_boff[b], or its row 0 and the rows' spacing lda). (Per batch element,
// outside the k loops.)
// The call's fetches into L2 (brgemm_args::pf): two lines at each k step while they last
// (a step past the range fetches one line beyond it, harmless), the rest after the loop.
// Addresses as integers: only prefetched, never dereferenced.
struct ukernel_fetch {
    uintptr_t p, end;
    template <typename E>
    explicit ukernel_fetch(const brgemm_args<E> &a)
        : p(reinterpret_cast<uintptr_t>(a.pf)), end(p + uintptr_t(a.pf_n) * 64) {}
    __attribute__((always_inline)) void step() {
        if (p < end) {
            __builtin_prefetch(reinterpret_cast<const void *>(p), 0, 2);
            __builtin_prefetch(reinterpret_cast<const void *>(p + 64), 0, 2);
            p += 128;
        }
    }
    __attribute__((always_inline)) void rest() {
        for (; p < end; p += 64) __builtin_prefetch(reinterpret_cast<const void *>(p), 0, 2);
    }
};

template <typename E>
__attribute__((always_inline)) inline const E *ukernel_a_row(const brgemm_args<E> &a, int b, int M,
                                                             int m) {
    if (a.lda != 0) return a.A[b] + dim_t(m) * a.lda;
    return a.a_boff ? a.A[m] + a.a_boff[b] : a.A[b * M + m];
}

// A tall one-vector tile (M > 8) whose batch elements give their rows as row 0 and a spacing
// (brgemm_args::lda), with a whole vector of B and C: each row's element is a
// displacement of one pointer per k, so the loop loads no row pointers and holds M
// accumulators, one vector of B and one broadcast (16 registers for AVX2's 14 x 1). From the
// row tables, the same tile reloads its M pointers every 4 k and parks accumulators on the
// stack for want of registers: on Zen 3 (one thread, operands in L1, 9 taps of 8 channels as
// ResNeXt's grouped 3x3; bench ukernel/avx2/f32/14x1/k8x9_*) 70-74 GFLOP/s this way, 53-56
// from the tables.
template <typename E, int P, int M>
void brgemm_ukernel_spaced(const brgemm_args<E> &a) {
    constexpr int W = vt::W;
    typename vt::V acc[M][1];
    // (Whole vectors: the tail mask is made only for the store, after the loop. Made at the
    // start, as brgemm_ukernel does, it took a register the loop needs, and GCC kept five
    // accumulators on the stack.)
    if (a.init == ukernel_init::zero) {
#pragma GCC unroll 16
        for (int m = 0; m < M; ++m) acc[m][0] = vt::zero();
    } else {
#pragma GCC unroll 16
        for (int m = 0; m < M; ++m)
            acc[m][0] = vt::load(a.init == ukernel_init::bias ? a.bias : a.C[m]);
    }
    // Rows in threes from one pointer each: row 3i + r at base i plus r spacings, an address
    // x86 forms from the base and the spacing's register (scale 1 or 2). Each k then steps
    // one pointer per three rows; from one pointer and m spacings GCC chained M dependent
    // additions per k.
    constexpr int NB = (M + 2) / 3;
    const dim_t groups = a.K / P;
    const uintptr_t ldab = uintptr_t(a.lda) * sizeof(E), step = uintptr_t(a.aks) * sizeof(E);
    ukernel_fetch(a).rest();  // (at once: see brgemm_ukernel)
    for (int b = 0; b < a.nbatch; ++b) {
        uintptr_t base[NB];
#pragma GCC unroll 6
        for (int i = 0; i < NB; ++i)
            base[i] = reinterpret_cast<uintptr_t>(a.A[b] + a.a_off) + uintptr_t(3 * i) * ldab;
        const E *const B = a.B[b] + a.b_off;
        uint64_t bo = 0;  // (unsigned, as in brgemm_ukernel: the step past the last k may wrap)
        for (dim_t kg = 0; kg < groups; ++kg, bo += uint64_t(a.ldb)) {
            const auto bv = ukernel_load_b_full(B + dim_t(bo));
#pragma GCC unroll 16
            for (int m = 0; m < M; ++m)
                acc[m][0] = ukernel_madd(
                    acc[m][0], reinterpret_cast<const E *>(base[m / 3] + uintptr_t(m % 3) * ldab),
                    bv);
#pragma GCC unroll 6
            for (int i = 0; i < NB; ++i) base[i] += step;
        }
    }
    ukernel_store<M, 1>(a, acc, vt::mask(W));
}

// One f32 k step of the tile: NV vectors of B's row Bk (the last lane-masked unless Full)
// times element `off` of each of the M rows, into acc. Shared by the contiguous-k loop and the
// general one.
template <int M, int NV, bool Full = false>
__attribute__((always_inline)) inline void f32_k_step(typename vt::V (&acc)[M][NV],
                                                      const float *const *rows, dim_t off,
                                                      const float *Bk, typename vt::mask_t last) {
    constexpr int W = vt::W;
    typename vt::V bv[NV];
#pragma GCC unroll 4
    for (int j = 0; j < NV - 1; ++j) bv[j] = vt::load(Bk + j * W);
    if constexpr (Full)
        bv[NV - 1] = vt::load(Bk + (NV - 1) * W);
    else
        bv[NV - 1] = vt::load_mask(Bk + (NV - 1) * W, last);
#pragma GCC unroll 16
    for (int m = 0; m < M; ++m) {
        const typename vt::V av = vt::bcast(rows[m] + off);
#pragma GCC unroll 4
        for (int j = 0; j < NV; ++j) acc[m][j] = ukernel_fma(av, bv[j], acc[m][j]);
    }
}

// The f32 k loop when A's k are contiguous (aks == 1: channels of the gather's pixels, the
// GEMM's packed rows), unrolled by 4 k. Each k step costs one B-pointer step and 4 + M loads
// next to M x NV FMAs; stepped one k at a time, the loop's own index, pointer and compare
// arithmetic (6 integer ops per k) took issue slots of the two FMA ports, and 6 x 4 ran at
// 85-90% of the FMA peak with operands in L1. The A offsets of the 4 steps are constant
// displacements of one index.
template <int M, int NV, bool Full>
__attribute__((always_inline)) inline void brgemm_f32_contiguous_k(const brgemm_args<float> &a,
                                                                   typename vt::V (&acc)[M][NV],
                                                                   typename vt::mask_t last) {
    constexpr int U = 4;
    const dim_t K = a.K;
    ukernel_fetch(a).rest();  // (at once: see brgemm_ukernel)
    for (int b = 0; b < a.nbatch; ++b) {
        const float *Ar[M];
#pragma GCC unroll 16
        for (int m = 0; m < M; ++m) Ar[m] = ukernel_a_row(a, b, M, m) + a.a_off;
        // (Unsigned offsets, as in brgemm_ukernel: the step past the last k may wrap.)
        const float *const B = a.B[b] + a.b_off;
        uint64_t bo = 0;
        dim_t k = 0;
        auto step = [&](dim_t kk) __attribute__((always_inline)) {
            f32_k_step<M, NV, Full>(acc, Ar, kk, B + dim_t(bo), last);
            bo += uint64_t(a.ldb);
        };
        for (; k + U <= K; k += U) {
            // The index made opaque per step of U: else GCC derives a second set of M row
            // pointers for the odd k and, with 16 general registers, keeps them on the stack
            // (6 x 2: 11 stack accesses per 48 FMAs).
            dim_t kk = k;
            asm("" : "+r"(kk));
#pragma GCC unroll 4
            for (int u = 0; u < U; ++u) step(kk + u);
        }
        for (; k < K; ++k) step(k);
    }
}

template <typename E, int P, int M, int NV>
__attribute__((always_inline)) inline void brgemm_ukernel(const brgemm_args<E> &a) {
    constexpr int W = vt::W;
    if constexpr (M > 8 && NV == 1)
        if (a.lda != 0 && a.tail == W) return brgemm_ukernel_spaced<E, P, M>(a);
    typename vt::V acc[M][NV];
    const typename vt::mask_t last = vt::mask(a.tail);
    // One loop per kind of start: a choice per accumulator was left in the code as two
    // compares and branches each (48 for 6 x 4).
    auto init_from = [&](auto row) __attribute__((always_inline)) {
#pragma GCC unroll 16
        for (int m = 0; m < M; ++m) {
#pragma GCC unroll 4
            for (int j = 0; j < NV - 1; ++j) acc[m][j] = vt::load(row(m) + j * W);
            acc[m][NV - 1] = vt::load_mask(row(m) + (NV - 1) * W, last);
        }
    };
    if (a.init == ukernel_init::zero) {
#pragma GCC unroll 16
        for (int m = 0; m < M; ++m)
#pragma GCC unroll 4
            for (int j = 0; j < NV; ++j) acc[m][j] = vt::zero();
    } else if (a.init == ukernel_init::bias) {
        init_from([&](int) { return a.bias; });
    } else {
        init_from([&](int m) { return static_cast<const float *>(a.C[m]); });
    }
    const dim_t groups = a.K / P;
    // Tall tiles (more rows than the general registers can hold pointers for: 16 x 1, 14 x 2,
    // 9 x 3) reload each row's pointer from the table once per step of U k-groups. Left to
    // itself the compiler keeps all M pointers live across the k loop and parks the excess in
    // vector registers, and the moves back cost a port the FMAs need (16 x 1 ran at 56% of
    // peak with operands in L1). The empty asm makes the table pointer opaque per step, so
    // the loads stay in the loop. One vector wide, a step takes U = 4 k-groups so that the
    // pointer loads are spread over 4 FMAs each. (With 16 registers, AVX2's 14 x 1 has no room
    // for the 4 B vectors: they stay in L1 as the FMAs' memory operands, still faster than
    // U = 1 there: 65-70 against 53-55 GFLOP/s.)
    constexpr bool reload = M > 8;
    constexpr int U = reload && NV == 1 ? 4 : 1;
    if constexpr (P == 1 && !reload) {
        if (a.aks == 1) {
            // Full last vectors (the common case) load B plainly: AVX2's mask is a vector
            // register, and the 12 accumulators of 6 x 2 and 4 x 3 leave none to spare.
            if (a.tail == W)
                brgemm_f32_contiguous_k<M, NV, true>(a, acc, last);
            else
                brgemm_f32_contiguous_k<M, NV, false>(a, acc, last);
            return ukernel_store<M, NV>(a, acc, last);
        }
    }
    // The fetches handed to the call (brgemm_args::pf) go two lines per k step in a copy of
    // the loop of its own: in every call, their pointer and end took two of the general
    // registers, and AVX2's tiles ran 2-9% slower (Zen 4 capped to AVX2, 2 threads, ResNet-50's
    // res2 3x3 and ResNeXt's grouped 3x3). The weight gradient's calls take this loop; the two
    // above issue theirs at once.
    auto general = [&](auto fetching) __attribute__((always_inline)) {
        ukernel_fetch fetch(a);
        for (int b = 0; b < a.nbatch; ++b) {
            // (Shared rows: the table itself, and b's displacement joins a_off. Spaced rows, where
            // the loop above does not take them: a table of b's rows.)
            const E *spaced[M];
            if (a.lda != 0)
                for (int m = 0; m < M; ++m) spaced[m] = a.A[b] + dim_t(m) * a.lda;
            const E *const *Ar = a.lda != 0 ? spaced : a.a_boff ? a.A : a.A + b * M;
            const E *B = a.B[b] + a.b_off;
            // Offsets stepped in unsigned arithmetic: the step past the last k wraps harmlessly
            // where a signed one could overflow (undefined behaviour, found by UBSan, with strides
            // near INT64_MAX), and no pointer is formed for it.
            uint64_t ao = uint64_t(a.a_off) + uint64_t(a.a_boff ? a.a_boff[b] : 0), bo = 0;
            dim_t kg = 0;
            if constexpr (U > 1) {
                for (; kg + U <= groups; kg += U) {
                    if constexpr (decltype(fetching)::value) fetch.step();
                    const E *const *Art = Ar;
                    if constexpr (reload) asm volatile("" : "+r"(Art));
                    decltype(ukernel_load_b(B, last)) bv[U];
#pragma GCC unroll 4
                    for (int u = 0; u < U; ++u)
                        bv[u] = ukernel_load_b(B + dim_t(bo + uint64_t(u) * uint64_t(a.ldb)), last);
#pragma GCC unroll 16
                    for (int m = 0; m < M; ++m) {
                        const E *row = Art[m];
#pragma GCC unroll 4
                        for (int u = 0; u < U; ++u)
                            acc[m][0] = ukernel_madd(
                                acc[m][0], row + dim_t(ao + uint64_t(u) * uint64_t(a.aks)), bv[u]);
                    }
                    ao += uint64_t(U) * uint64_t(a.aks);
                    bo += uint64_t(U) * uint64_t(a.ldb);
                }
            }
            for (; kg < groups; ++kg, ao += uint64_t(a.aks), bo += uint64_t(a.ldb)) {
                if constexpr (decltype(fetching)::value) fetch.step();
                const E *const *Art = Ar;
                if constexpr (reload) asm volatile("" : "+r"(Art));
                const E *Bk = B + dim_t(bo);
                if constexpr (P == 1) {
                    f32_k_step<M, NV>(acc, Art, dim_t(ao), Bk, last);
                } else {
#ifdef CONVGRAD_UKERNEL_BF16
                    static_assert(P == 2, "bf16 is packed in pairs");
                    typename vt::VI bv[NV];
#pragma GCC unroll 4
                    for (int j = 0; j < NV - 1; ++j) bv[j] = vt::load_pairs(Bk + j * W * 2);
                    bv[NV - 1] = vt::load_pairs_mask(Bk + (NV - 1) * W * 2, last);
#pragma GCC unroll 16
                    for (int m = 0; m < M; ++m) {
                        const typename vt::VI av = vt::bcast_pair(Art[m] + dim_t(ao));
#pragma GCC unroll 4
                        for (int j = 0; j < NV; ++j) acc[m][j] = vt::dot_bf16(acc[m][j], av, bv[j]);
                    }
#endif
                }
            }
        }
        fetch.rest();
    };
    if (a.pf_n > 0)
        general(std::true_type{});
    else
        general(std::false_type{});
    ukernel_store<M, NV>(a, acc, last);
}

// The tables size their unrolled tiles by this unit's register file (ukernel_rows_that_fit,
// brgemm_args.hpp: the rows every plan takes, so the only tiles the kernels call).
#ifndef UKERNEL_SET_NREGS
#error "the unit defines UKERNEL_SET_NREGS (its vector registers) before brgemm_impl.hpp"
#endif

// A tile taller than the register file holds, as the contract still defines it (the tables
// are complete, and the microkernel tests sweep every entry): one row at a time, each row's
// products summed in the same order as the unrolled kernel's, so the same bits. Compiled in
// its place: unrolled, those tiles spilled their accumulators, never ran, and took much of
// each unit's compile time (AVX-512: 19 of 64 tiles per element type, the largest; AVX2: 45).
template <typename E, int P, int NV>
void brgemm_ukernel_by_rows(const brgemm_args<E> &a, int M) {
    constexpr int W = vt::W;
    const typename vt::mask_t last = vt::mask(a.tail);
    const dim_t groups = a.K / P;
    ukernel_fetch(a).rest();  // (at once: no plan takes these tiles)
    for (int m = 0; m < M; ++m) {
        typename vt::V acc[1][NV];
        const float *from = a.init == ukernel_init::zero   ? nullptr
                            : a.init == ukernel_init::bias ? a.bias
                                                           : a.C[m];
        for (int j = 0; j < NV; ++j)
            acc[0][j] = !from        ? vt::zero()
                        : j < NV - 1 ? vt::load(from + j * W)
                                     : vt::load_mask(from + j * W, last);
        for (int b = 0; b < a.nbatch; ++b) {
            const E *const row[1] = {ukernel_a_row(a, b, M, m)};
            const E *B = a.B[b] + a.b_off;
            uint64_t ao = uint64_t(a.a_off), bo = 0;  // (unsigned, as in brgemm_ukernel)
            for (dim_t kg = 0; kg < groups; ++kg, ao += uint64_t(a.aks), bo += uint64_t(a.ldb)) {
                const E *Bk = B + dim_t(bo);
                if constexpr (P == 1) {
                    f32_k_step<1, NV>(acc, row, dim_t(ao), Bk, last);
                } else {
#ifdef CONVGRAD_UKERNEL_BF16
                    const typename vt::VI av = vt::bcast_pair(row[0] + dim_t(ao));
                    for (int j = 0; j < NV; ++j)
                        acc[0][j] = vt::dot_bf16(acc[0][j], av,
                                                 j < NV - 1
                                                     ? vt::load_pairs(Bk + j * W * 2)
                                                     : vt::load_pairs_mask(Bk + j * W * 2, last));
#endif
                }
            }
        }
        brgemm_args<E> one = a;  // row m's C (or C16) as row 0
        one.C = a.C + m;
        one.C16 = a.C16 ? a.C16 + m : nullptr;
        ukernel_store<1, NV>(one, acc, last);
    }
}

// Every (rows M, vectors NV) entry of a microkernel, looked up at run time: the unrolled
// kernel where the tile fits the register file, else the row-by-row one.
// Constant-initialized: no start-up code runs in an ISA translation unit, so merely loading the
// library on an older processor never executes an instruction it lacks.
template <typename Args, template <int, int> class Kernel>
struct kernel_table {
    using fn_t = void (*)(const Args &);
    fn_t fn[ukernel_max_nv + 1][ukernel_max_rows + 1] = {};
    constexpr kernel_table() {
        fill<1>(std::make_integer_sequence<int, ukernel_max_rows>{});
        fill<2>(std::make_integer_sequence<int, ukernel_max_rows>{});
        fill<3>(std::make_integer_sequence<int, ukernel_max_rows>{});
        fill<4>(std::make_integer_sequence<int, ukernel_max_rows>{});
    }
    template <int M, int NV>
    static constexpr fn_t entry() {
        if constexpr (M <= ukernel_rows_that_fit(UKERNEL_SET_NREGS, NV))
            return &Kernel<M, NV>::run;
        else
            return &Kernel<M, NV>::by_rows;
    }
    template <int NV, int... Ms>
    constexpr void fill(std::integer_sequence<int, Ms...>) {
        ((fn[NV][Ms + 1] = entry<Ms + 1, NV>()), ...);
    }
};

// The call's blocks of C's columns (brgemm_args::nblk) one after another, each as its own
// call with its B, C, C16 and bias moved along: `one` inlined in the loop, so a block costs
// its products and its C rows' pointers, not a call. (wav2vec2's first layer, K = 10 and 32
// blocks a tile: about 250 cycles a call on Zen 3, against 60 of products.) One block goes
// the same way: one inlined copy of the kernel per tile, not two.
template <typename E, typename One>
__attribute__((always_inline)) inline void ukernel_blocks(const brgemm_args<E> &a, int M, One one) {
    float *rows[ukernel_max_rows];
    uint16_t *rows16[ukernel_max_rows];
    // (Only the row tables the call reads: C's f32 rows are not read where a bf16/f16 C16
    // starts from zero or the bias, nor C16 where C is f32, and callers may leave them unset.)
    const bool narrow = a.narrow != data_type::f32;
    const bool reads_c = !narrow || a.init == ukernel_init::accumulate;
    brgemm_args<E> c = a;
    c.nblk = 1;
    if (reads_c) c.C = rows;
    if (narrow) c.C16 = rows16;
    for (int i = 0; i < (a.nblk > 1 ? a.nblk : 1); ++i) {
        const dim_t at = dim_t(i) * a.c_blk;
        for (int m = 0; m < M; ++m) {
            if (reads_c) rows[m] = a.C[m] + at;
            if (narrow) rows16[m] = a.C16[m] + at;
        }
        c.b_off = a.b_off + dim_t(i) * a.b_blk;
        if (a.bias) c.bias = a.bias + at;
        one(c);
        c.pf_n = 0;  // (the call's fetches go with its first block)
    }
}

template <int M, int NV>
struct f32_ukernel {
    static void run(const brgemm_f32_args &a) {
        ukernel_blocks(a, M, [](const brgemm_f32_args &c) { brgemm_ukernel<float, 1, M, NV>(c); });
    }
    static void by_rows(const brgemm_f32_args &a) {
        ukernel_blocks(
            a, M, [](const brgemm_f32_args &c) { brgemm_ukernel_by_rows<float, 1, NV>(c, M); });
    }
};
// The tables are defined once per unit, with its `ukernels` (ukernel_set_impl.hpp): a unit
// compiled in parts (common/unit_parts.hpp) instantiates the tiles in one part only, and the
// others call them through the table as before.
extern const kernel_table<brgemm_f32_args, f32_ukernel> f32_ukernels;

/// The f32 microkernel of M rows (1..16) by nv vectors (1..4).
static inline void call_f32_ukernel(int m, int nv, const brgemm_f32_args &a) {
    f32_ukernels.fn[nv][m](a);
}

#ifdef CONVGRAD_UKERNEL_BF16
template <int M, int NV>
struct bf16_ukernel {
    static void run(const brgemm_bf16_args &a) {
        ukernel_blocks(a, M,
                       [](const brgemm_bf16_args &c) { brgemm_ukernel<uint16_t, 2, M, NV>(c); });
    }
    static void by_rows(const brgemm_bf16_args &a) {
        ukernel_blocks(
            a, M, [](const brgemm_bf16_args &c) { brgemm_ukernel_by_rows<uint16_t, 2, NV>(c, M); });
    }
};
extern const kernel_table<brgemm_bf16_args, bf16_ukernel> bf16_ukernels;  // (as f32_ukernels)

/// The bf16 (vdpbf16ps) microkernel of M rows (1..16) by nv vectors (1..4).
static inline void call_bf16_ukernel(int m, int nv, const brgemm_bf16_args &a) {
    bf16_ukernels.fn[nv][m](a);
}
#endif
