// The microkernel contract (src/kernels/ukernel/brgemm_args.hpp) against a scalar double
// reference, for every instruction-set unit this machine (or CONVGRAD_MAX_ISA) allows: every
// (rows M, vectors NV) entry of the kernel tables, every lane tail, the three init modes,
// several batch elements, strided A rows (aks), offsets into A and B, B rows wider than N,
// A rows shared by the batch elements at displacements of their own (a_boff), and A rows
// given per batch element as row 0 and a spacing (lda).
// f32 (K packing 1) and bf16 pairs (K packing 2, vdpbf16ps native or emulated). Then the
// streamed and rounded (bf16/f16) stores against the plain one, on every entry too.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdio>
#include <random>
#include <type_traits>
#include <vector>

#include "core/float_convert.hpp"
#include "kernels/ukernel/ukernel_set.hpp"

namespace convgrad::detail {
namespace {

// The K packing of element type E: 1 for f32, pairs for bf16.
template <typename E>
constexpr int pack_of = std::is_same_v<E, float> ? 1 : 2;

// One problem of the contract, with its operands in plain vectors (E = float or bf16 bits).
template <typename E, int P>
struct uk_problem {
    int M, NV, W, tail, nbatch;
    dim_t K, a_off, aks, b_off, ldb, N;
    ukernel_init init;
    std::vector<std::vector<E>> A;  // [b*M + m] rows
    std::vector<std::vector<E>> B;  // [b]
    std::vector<float> bias;
    std::vector<std::vector<float>> C;  // [m], N + W guard floats
};

float to_f(float x) {
    return x;
}
float to_f(uint16_t x) {
    return bf16_to_float(x);
}

// Small integers (exact in bf16 and in every f32 partial sum) or arbitrary floats.
template <typename E>
E draw(std::mt19937_64 &rng, bool integers) {
    const float v = integers ? float(int(rng() % 9) - 4)
                             : std::uniform_real_distribution<float>(-1.f, 1.f)(rng);
    if constexpr (sizeof(E) == 2)
        return float_to_bf16(v);
    else
        return v;
}

template <typename E, int P>
uk_problem<E, P> make_problem(std::mt19937_64 &rng, int M, int NV, int W, int tail, bool integers,
                              bool contiguous) {
    uk_problem<E, P> q{};
    q.M = M, q.NV = NV, q.W = W, q.tail = tail;
    q.N = dim_t(NV - 1) * W + tail;
    q.nbatch = int(rng() % 3) + 1;
    // K = 0 included; up to 10 groups: the unrolled k loops (4 at a time) with every remainder.
    q.K = dim_t(rng() % 10) * P + P * (rng() % 4 == 0 ? 0 : 1);
    q.a_off = dim_t(rng() % 3) * P;
    // Contiguous k (aks = P) has a loop of its own, and in it full last vectors (tail = W) one
    // more: both are swept on every tile, not left to the draw.
    q.aks = contiguous ? P : P * dim_t(2 + rng() % 2);
    q.b_off = dim_t(rng() % 2) * P;
    q.ldb = (q.N + dim_t(rng() % 3)) * P;
    q.init = ukernel_init(int(rng() % 3));
    const dim_t arow = q.a_off + (q.K / P) * q.aks + P,
                brow = q.b_off + (q.K / P + 1) * q.ldb + W * P;
    q.A.assign(size_t(q.nbatch * M), std::vector<E>(size_t(arow)));
    for (auto &r : q.A)
        for (auto &x : r) x = draw<E>(rng, integers);
    q.B.assign(size_t(q.nbatch), std::vector<E>(size_t(brow)));
    for (auto &r : q.B)
        for (auto &x : r) x = draw<E>(rng, integers);
    q.bias.resize(size_t(q.N + W));
    for (auto &x : q.bias) x = to_f(draw<E>(rng, true));
    q.C.assign(size_t(M), std::vector<float>(size_t(q.N + W)));
    for (auto &r : q.C)
        for (auto &x : r) x = to_f(draw<E>(rng, true));
    return q;
}

// C in double, and the sum of |products| (the scale of the f32 rounding error) per element.
template <typename E, int P>
void reference(const uk_problem<E, P> &q, std::vector<double> &c, std::vector<double> &mag) {
    c.assign(size_t(q.M * q.N), 0.0);
    mag.assign(size_t(q.M * q.N), 0.0);
    for (int m = 0; m < q.M; ++m)
        for (dim_t n = 0; n < q.N; ++n) {
            double s = q.init == ukernel_init::zero   ? 0.0
                       : q.init == ukernel_init::bias ? q.bias[size_t(n)]
                                                      : q.C[size_t(m)][size_t(n)];
            double a_abs = std::fabs(s);
            for (int b = 0; b < q.nbatch; ++b)
                for (dim_t k = 0; k < q.K; ++k) {
                    const double x =
                        to_f(q.A[size_t(b * q.M + m)][size_t(q.a_off + (k / P) * q.aks + k % P)]);
                    const double y =
                        to_f(q.B[size_t(b)][size_t(q.b_off + (k / P) * q.ldb + n * P + k % P)]);
                    s += x * y;
                    a_abs += std::fabs(x * y);
                }
            c[size_t(m * q.N + n)] = s;
            mag[size_t(m * q.N + n)] = a_abs;
        }
}

// How the kernel stores C: plainly, streamed past the caches, or rounded into 16-bit rows
// (streamed or not).
struct store_mode {
    bool stream = false;
    data_type narrow = data_type::f32;
    const std::vector<uint16_t *> *C16 = nullptr;  // [m]
    // A as one set of M row pointers displaced per batch element (brgemm_args::a_boff): row
    // m's nbatch rows copied into one buffer in reverse order with gaps, the pointers at the
    // middle one's, so displacements are negative and positive.
    bool shared_rows = false;
    // A as one pointer per batch element, its row 0, the rows `lda` apart
    // (brgemm_args::lda): each batch element's rows copied into one buffer with gaps.
    bool spaced_rows = false;
    // Lines handed to the call to fetch into L2 (brgemm_args::pf, pf_n).
    const char *pf = nullptr;
    dim_t pf_n = 0;
};

// Rows of 16-bit C: each starts `misalign` elements past a 64-byte boundary (0: the streamed
// stores' alignment, others: their plain fallback), filled with a guard pattern, N + W long.
struct half_rows {
    static constexpr uint16_t guard = 0x5555;
    std::vector<std::vector<uint16_t>> mem;
    std::vector<uint16_t *> rows;
    dim_t len;
    half_rows(int M, dim_t len_, int misalign) : mem(size_t(M)), len(len_) {
        for (auto &r : mem) {
            r.assign(size_t(len + 32 + misalign), guard);
            const auto at = reinterpret_cast<uintptr_t>(r.data());
            rows.push_back(r.data() + ((64 - at % 64) % 64) / 2 + misalign);
        }
    }
    uint16_t at(int m, dim_t n) const { return rows[size_t(m)][n]; }
};

template <typename E, int P>
std::vector<std::vector<float>> run(const uk_problem<E, P> &q,
                                    void (*fn)(int, int, const brgemm_args<E> &),
                                    const store_mode &mode = {}) {
    std::vector<std::vector<float>> C = q.C;
    std::vector<const E *> A, B;
    std::vector<float *> Cr;
    for (auto &r : q.A) A.push_back(r.data());
    std::vector<std::vector<E>> joined;
    std::vector<dim_t> boff;
    if (mode.shared_rows) {
        const dim_t len = dim_t(q.A[0].size()) + 3;  // (a gap of 3 between rows)
        auto at = [&](int b) { return dim_t(q.nbatch - 1 - b) * len; };
        const int mid = q.nbatch / 2;
        for (int b = 0; b < q.nbatch; ++b) boff.push_back(at(b) - at(mid));
        A.assign(size_t(q.M), nullptr);
        for (int m = 0; m < q.M; ++m) {
            joined.emplace_back(size_t(q.nbatch * len), E(0x7fc0));  // (NaN guards in the gaps)
            for (int b = 0; b < q.nbatch; ++b)
                std::copy(q.A[size_t(b * q.M + m)].begin(), q.A[size_t(b * q.M + m)].end(),
                          joined.back().begin() + at(b));
            A[size_t(m)] = joined.back().data() + at(mid);
        }
    }
    dim_t lda = 0;
    if (mode.spaced_rows) {
        lda = dim_t(q.A[0].size()) + 5;  // (a gap of 5 between rows)
        A.clear();
        for (int b = 0; b < q.nbatch; ++b) {
            joined.emplace_back(size_t(q.M * lda), E(0x7fc0));  // (NaN guards in the gaps)
            for (int m = 0; m < q.M; ++m)
                std::copy(q.A[size_t(b * q.M + m)].begin(), q.A[size_t(b * q.M + m)].end(),
                          joined.back().begin() + m * lda);
            A.push_back(joined.back().data());
        }
    }
    for (auto &r : q.B) B.push_back(r.data());
    for (auto &r : C) Cr.push_back(r.data());
    brgemm_args<E> a{};
    a.K = q.K;
    a.nbatch = q.nbatch;
    a.A = A.data();
    a.a_boff = mode.shared_rows ? boff.data() : nullptr;
    a.lda = lda;
    a.a_off = q.a_off;
    a.aks = q.aks;
    a.B = B.data();
    a.b_off = q.b_off;
    a.ldb = q.ldb;
    a.C = Cr.data();
    a.tail = q.tail;
    a.init = q.init;
    a.bias = q.bias.data();
    a.stream = mode.stream;
    a.narrow = mode.narrow;
    a.C16 = mode.C16 ? mode.C16->data() : nullptr;
    a.pf = mode.pf, a.pf_n = mode.pf_n;
    fn(q.M, q.NV, a);
    return C;
}

template <typename E, int P>
void sweep(const ukernel_set &s, void (*fn)(int, int, const brgemm_args<E> &), bool integers) {
    std::mt19937_64 rng(P * 1000 + s.vlen + integers);
    const int W = s.vlen;
    for (int nv = 1; nv <= ukernel_max_nv; ++nv)
        for (int m = 1; m <= ukernel_max_rows; ++m)
            for (int tail : {1, W / 2 + 1, W})
                for (int form = 0; form < 6; ++form) {
                    // Contiguous or strided k, on rows of its own per batch element, on
                    // shared rows displaced per batch element, or on rows equally spaced.
                    const bool contiguous = (form & 1) == 0;
                    if (tail > W) continue;
                    const auto q = make_problem<E, P>(rng, m, nv, W, tail, integers, contiguous);
                    std::vector<double> c, mag;
                    reference(q, c, mag);
                    store_mode mode;
                    mode.shared_rows = form / 2 == 1;
                    mode.spaced_rows = form / 2 == 2;
                    const auto got = run(q, fn, mode);
                    for (int r = 0; r < m; ++r) {
                        for (dim_t n = 0; n < q.N; ++n) {
                            const double want = c[size_t(r * q.N + n)];
                            // Exact on integer data; else within the f32 rounding of each step.
                            const double tol = integers ? 0.0
                                                        : 2.0 * (double(q.K) * q.nbatch + 2) *
                                                              0x1p-24 * mag[size_t(r * q.N + n)];
                            ASSERT_LE(std::fabs(got[size_t(r)][size_t(n)] - want), tol)
                                << s.name << " M=" << m << " NV=" << nv << " tail=" << tail
                                << " K=" << q.K << " aks=" << q.aks << " nbatch=" << q.nbatch
                                << " shared rows=" << mode.shared_rows
                                << " spaced rows=" << mode.spaced_rows << " init=" << int(q.init)
                                << " at (" << r << ", " << n << ")";
                        }
                        // Lanes past N are not written.
                        for (dim_t n = q.N; n < q.N + W; ++n)
                            ASSERT_EQ(got[size_t(r)][size_t(n)], q.C[size_t(r)][size_t(n)])
                                << s.name << " wrote lane " << n << " past N=" << q.N;
                    }
                }
}

TEST(Ukernel, F32MatchesDoubleReferenceOnEveryTableEntry) {
    int ran = 0;
    for (const ukernel_set *s : all_ukernel_sets()) {
        if (!isa_available(s->isa)) continue;
        sweep<float, 1>(*s, s->f32, true);
        sweep<float, 1>(*s, s->f32, false);
        ++ran;
    }
    EXPECT_GE(ran, 1);  // sse2 is always there
}

TEST(Ukernel, Bf16PairsMatchDoubleReferenceOnEveryTableEntry) {
    int ran = 0;
    for (const ukernel_set *s : all_ukernel_sets()) {
        if (!s->bf16) continue;
        if (!isa_available(s->isa)) {
            std::printf(
                "[ skipped ] bf16 microkernel of %s: this machine (or CONVGRAD_MAX_ISA) lacks %s\n",
                s->name, to_string(s->isa));
            continue;
        }
        std::printf("[ ran     ] bf16 microkernel of %s, vdpbf16ps %s\n", s->name,
                    s->bf16_native ? "native" : "emulated");
        sweep<uint16_t, 2>(*s, s->bf16, true);
        sweep<uint16_t, 2>(*s, s->bf16, false);
        ++ran;
    }
    if (ran == 0) GTEST_SKIP() << "no unit with a bf16 microkernel is allowed on this machine";
}

// The stores on every table entry (the unrolled tiles and the taller ones run row by row): a
// streamed C holds the plain store's bits, and a bf16/f16 C16 the plain f32 results rounded
// once, lanes past N untouched (checked against the first unit's plain f32 run of the same
// problem).
template <typename E, int P>
void stores_agree(const ukernel_set &s, void (*fn)(int, int, const brgemm_args<E> &)) {
    std::mt19937_64 rng(P * 7 + s.vlen);
    const int W = s.vlen;
    for (int nv = 1; nv <= ukernel_max_nv; ++nv)
        for (int m = 1; m <= ukernel_max_rows; ++m)
            for (int tail : {1, W}) {
                const auto q = make_problem<E, P>(rng, m, nv, W, tail, false, true);
                const auto plain = run(q, fn);
                store_mode streamed;
                streamed.stream = true;
                ASSERT_EQ(run(q, fn, streamed), plain)
                    << s.name << " streamed M=" << m << " NV=" << nv << " tail=" << tail;
                for (data_type dt : {data_type::bf16, data_type::f16})
                    for (bool stream : {false, true})
                        for (int misalign : {0, 8}) {
                            half_rows c16(m, q.N + W, misalign);
                            store_mode narrow;
                            narrow.narrow = dt;
                            narrow.stream = stream;
                            narrow.C16 = &c16.rows;
                            ASSERT_EQ(run(q, fn, narrow), q.C) << "C's f32 rows are not written";
                            for (int r = 0; r < m; ++r)
                                for (dim_t n = 0; n < q.N + W; ++n) {
                                    const float f = plain[size_t(r)][size_t(n)];
                                    const uint16_t want = n >= q.N                ? half_rows::guard
                                                          : dt == data_type::bf16 ? float_to_bf16(f)
                                                                                  : float_to_f16(f);
                                    ASSERT_EQ(c16.at(r, n), want)
                                        << s.name << " " << to_string(dt) << " M=" << m
                                        << " NV=" << nv << " tail=" << tail << " stream=" << stream
                                        << " misalign=" << misalign << " at (" << r << ", " << n
                                        << ")";
                                }
                        }
            }
}

// The rounded stores on the values where roundings differ: denormal f32 (which vcvtneps2bf16
// would read as zero), bf16 and f16 ties, NaN payloads, infinities, signed zeros, f16 overflow
// and f16 subnormals. With K = 0 and init = accumulate, C16 gets C's own values rounded, so
// each lane holds a chosen value. Against the scalar conversions, bit for bit, on every table
// entry, streamed or not. Without the denormals (`denormals` false), every tile takes the
// AVX512_BF16 unit's whole-tile vcvtne2ps2bf16 path (ukernel_store_bf16_cvtne), which a single
// denormal lane sends to the vector-by-vector one: its NaNs, ties and overflows are checked too.
template <typename E>
void rounds_special_values(const ukernel_set &s, void (*fn)(int, int, const brgemm_args<E> &),
                           bool denormals = true) {
    // clang-format off
    std::vector<float> specials = {
        0x1p-149f, -0x1p-140f, 0x1.fffffcp-127f, -0x1.000002p-130f,  // f32 denormals
        0x1p-126f, -0x1.ffp-127f,                                     // smallest normal; denormal
        1.0f + 0x1p-8f, 1.0f + 0x3p-8f, -(1.0f + 0x1p-8f),            // bf16 ties (even, up)
        1.0f + 0x1p-11f, 1.0f + 0x3p-11f,                             // f16 ties
        std::bit_cast<float>(0x7fc00001u), std::bit_cast<float>(0xff800001u),  // NaNs
        std::bit_cast<float>(0x7f80ffffu),                                    // NaN, low payload
        INFINITY, -INFINITY, 0.0f, -0.0f, 65520.0f, -70000.0f,  // f16 overflow
        3.0e38f, 0x1.fffffep127f,                               // bf16 round to inf
        0x1p-20f, -0x1.8p-24f, 0x1p-25f, 0x1.000002p-25f,      // f16 subnormals, ties to 0
        1.0f / 3.0f, -2.5f};
    // clang-format on
    if (!denormals)
        std::erase_if(specials, [](float f) { return std::fpclassify(f) == FP_SUBNORMAL; });
    const int W = s.vlen;
    size_t next = 0;
    for (int nv = 1; nv <= ukernel_max_nv; ++nv)
        for (int m = 1; m <= ukernel_max_rows; ++m)
            for (int tail : {1, W}) {
                std::mt19937_64 rng(uint64_t(m * 10 + nv));
                auto q = make_problem<E, pack_of<E>>(rng, m, nv, W, tail, true, true);
                q.K = 0;
                q.init = ukernel_init::accumulate;
                for (auto &row : q.C)
                    for (auto &x : row) x = specials[next++ % specials.size()];
                for (data_type dt : {data_type::bf16, data_type::f16})
                    for (bool stream : {false, true}) {
                        half_rows c16(m, q.N + W, 0);
                        store_mode narrow;
                        narrow.narrow = dt;
                        narrow.stream = stream;
                        narrow.C16 = &c16.rows;
                        run(q, fn, narrow);
                        for (int r = 0; r < m; ++r)
                            for (dim_t n = 0; n < q.N; ++n) {
                                const float f = q.C[size_t(r)][size_t(n)];
                                const uint16_t want =
                                    dt == data_type::bf16 ? float_to_bf16(f) : float_to_f16(f);
                                ASSERT_EQ(c16.at(r, n), want)
                                    << s.name << " " << to_string(dt) << " of " << f << " (0x"
                                    << std::hex << std::bit_cast<uint32_t>(f) << std::dec
                                    << ") M=" << m << " NV=" << nv << " tail=" << tail
                                    << " stream=" << stream;
                            }
                    }
            }
}

TEST(Ukernel, RoundedStoresOfDenormalsNaNsTiesAndOverflowMatchTheScalarConversions) {
    int ran = 0;
    for (const ukernel_set *s : all_ukernel_sets()) {
        if (!isa_available(s->isa)) continue;
        for (bool denormals : {true, false}) {
            rounds_special_values<float>(*s, s->f32, denormals);
            if (s->bf16) rounds_special_values<uint16_t>(*s, s->bf16, denormals);
        }
        ++ran;
    }
    EXPECT_GE(ran, 1);
}

TEST(Ukernel, StreamedAndRoundedStoresAgreeWithThePlainStoreOnEveryTableEntry) {
    int ran = 0;
    for (const ukernel_set *s : all_ukernel_sets()) {
        if (!isa_available(s->isa)) continue;
        stores_agree<float, 1>(*s, s->f32);
        if (s->bf16) stores_agree<uint16_t, 2>(*s, s->bf16);
        ++ran;
    }
    EXPECT_GE(ran, 1);  // sse2 is always there
}

// Several blocks of C's columns in one call (brgemm_args::nblk) give the bits of one call per
// block, and touch nothing else: every table entry (unrolled and row by row), every start, the
// f32 C and a bf16 C16, blocks equally spaced in B and in C, whole or lane-masked.
template <typename E>
void blocks_match_their_calls(const ukernel_set &s, void (*fn)(int, int, const brgemm_args<E> &)) {
    constexpr int P = pack_of<E>;
    std::mt19937_64 rng(P * 31 + s.vlen);
    const int W = s.vlen, nblk = 3;
    for (int nv = 1; nv <= ukernel_max_nv; ++nv)
        for (int m = 1; m <= ukernel_max_rows; ++m)
            for (int tail : {1, W})
                for (int init = 0; init < 3; ++init)
                    for (data_type narrow : {data_type::f32, data_type::bf16}) {
                        const dim_t K = dim_t(1 + rng() % 5) * P, N = dim_t(nv) * W;
                        const dim_t ldb = N * P, b_blk = K / P * ldb + 7 * P;
                        const dim_t c_blk = N + dim_t(rng() % 2) * 3, len = nblk * c_blk + W;
                        const int nbatch = 1 + int(rng() % 2);
                        std::vector<std::vector<E>> A(size_t(nbatch * m),
                                                      std::vector<E>(size_t(K)));
                        for (auto &r : A)
                            for (auto &x : r) x = draw<E>(rng, false);
                        std::vector<std::vector<E>> B(size_t(nbatch),
                                                      std::vector<E>(size_t(nblk * b_blk + W * P)));
                        for (auto &r : B)
                            for (auto &x : r) x = draw<E>(rng, false);
                        std::vector<float> bias(static_cast<size_t>(len));
                        for (auto &x : bias) x = to_f(draw<E>(rng, false));
                        std::vector<std::vector<float>> C0(
                            static_cast<size_t>(m), std::vector<float>(static_cast<size_t>(len)));
                        for (auto &r : C0)
                            for (auto &x : r) x = to_f(draw<E>(rng, false));
                        std::vector<const E *> Ap, Bp;
                        for (auto &r : A) Ap.push_back(r.data());
                        for (auto &r : B) Bp.push_back(r.data());
                        // One call of nblk blocks, and nblk calls (C and C16 start the same).
                        auto C1 = C0, C2 = C0;
                        std::vector<std::vector<uint16_t>> H1(
                            static_cast<size_t>(m),
                            std::vector<uint16_t>(static_cast<size_t>(len), 0x5555)),
                            H2 = H1;
                        std::vector<float *> R1, R2;
                        std::vector<uint16_t *> S1, S2;
                        for (int r = 0; r < m; ++r) {
                            R1.push_back(C1[size_t(r)].data()), R2.push_back(C2[size_t(r)].data());
                            S1.push_back(H1[size_t(r)].data()), S2.push_back(H2[size_t(r)].data());
                        }
                        brgemm_args<E> a{};
                        a.K = K, a.nbatch = nbatch, a.A = Ap.data(), a.a_off = 0, a.aks = P;
                        a.B = Bp.data(), a.b_off = 0, a.ldb = ldb, a.tail = tail;
                        a.init = ukernel_init(init), a.bias = bias.data(), a.narrow = narrow;
                        a.C = R1.data(), a.C16 = S1.data();
                        a.nblk = nblk, a.b_blk = b_blk, a.c_blk = c_blk;
                        fn(m, nv, a);
                        for (int i = 0; i < nblk; ++i) {
                            std::vector<float *> Ri;
                            std::vector<uint16_t *> Si;
                            for (int r = 0; r < m; ++r)
                                Ri.push_back(R2[size_t(r)] + i * c_blk),
                                    Si.push_back(S2[size_t(r)] + i * c_blk);
                            brgemm_args<E> one = a;
                            one.nblk = 1, one.b_off = i * b_blk, one.bias = bias.data() + i * c_blk;
                            one.C = Ri.data(), one.C16 = Si.data();
                            fn(m, nv, one);
                        }
                        const std::string what =
                            std::string(s.name) + " M=" + std::to_string(m) +
                            " NV=" + std::to_string(nv) + " tail=" + std::to_string(tail) +
                            " init=" + std::to_string(init) + " narrow=" + to_string(narrow);
                        ASSERT_EQ(C1, C2) << what;
                        ASSERT_EQ(H1, H2) << what;
                        if (narrow == data_type::f32) {
                            ASSERT_NE(C1, C0) << what << ": nothing stored";
                        }
                    }
}

// f(set, table) on the f32 table of every set this CPU runs, and on its bf16 one where it has
// one.
template <typename F>
void on_every_table(F &&f) {
    for (const ukernel_set *s : all_ukernel_sets()) {
        if (!isa_available(s->isa)) continue;
        f(*s, s->f32);
        if (s->bf16) f(*s, s->bf16);
    }
}

TEST(Ukernel, BlocksOfOneCallGiveTheBitsOfTheirOwnCalls) {
    on_every_table([](const ukernel_set &s, auto fn) { blocks_match_their_calls(s, fn); });
}

// A call handed lines to fetch into L2 (brgemm_args::pf: its own copy of the general k loop,
// two fetches per k step) gives the bits of the same call without them: every table entry,
// every start, A's k contiguous (the loop that fetches at once) or strided (the general loop),
// A's rows in tables, shared or spaced (the spaced tiles' loop), fewer lines than k steps and
// more.
template <typename E>
void fetching_changes_no_bits(const ukernel_set &s, void (*fn)(int, int, const brgemm_args<E> &)) {
    constexpr int P = pack_of<E>;
    std::mt19937_64 rng(P * 57 + s.vlen);
    const int W = s.vlen;
    for (int nv = 1; nv <= ukernel_max_nv; ++nv)
        for (int m = 1; m <= ukernel_max_rows; ++m)
            for (int form = 0; form < 6; ++form) {
                const int tail = rng() % 2 ? W : 1 + W / 2;
                const auto q = make_problem<E, P>(rng, m, nv, W, tail, false, (form & 1) == 0);
                store_mode mode;
                mode.shared_rows = form / 2 == 1;
                mode.spaced_rows = form / 2 == 2;
                const auto plain = run(q, fn, mode);
                mode.pf_n = dim_t(rng() % size_t(3 * (q.K / P) * q.nbatch + 1)) + 1;
                const std::vector<char> fetched(size_t(mode.pf_n * 64));
                mode.pf = fetched.data();
                const std::string what =
                    std::string(s.name) + " M=" + std::to_string(m) + " NV=" + std::to_string(nv) +
                    " form=" + std::to_string(form) + " K=" + std::to_string(q.K) +
                    " lines=" + std::to_string(mode.pf_n);
                ASSERT_EQ(run(q, fn, mode), plain) << what;
                if (q.K > 0 || q.init != ukernel_init::accumulate) {
                    ASSERT_NE(plain, q.C) << what << ": nothing stored";
                }
            }
}

TEST(Ukernel, CallsThatFetchGiveTheBitsOfCallsThatDoNot) {
    on_every_table([](const ukernel_set &s, auto fn) { fetching_changes_no_bits(s, fn); });
}

}  // namespace
}  // namespace convgrad::detail
