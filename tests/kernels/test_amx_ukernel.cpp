// The AMX microkernel (src/kernels/amx/amx_ukernel.hpp) over every M, N and K tail, batch and
// init mode, for bf16 and f16:
//   - bit for bit against a scalar model of the SDM's rounding (each f32 step done by this
//     CPU's FMA under DAZ + FTZ, in the kernel's documented order);
//   - within the f32 error bound of a double-precision reference, and exact on small integers;
//   - natively (real tiles) when the CPU has AMX and the OS grants it, also bit for bit against
//     the emulation; else skipped, with the reason.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "amx_test_util.hpp"
#include "convgrad/types.hpp"
#include "core/float_convert.hpp"
#include "kernels/amx/amx_pack.hpp"
#include "kernels/amx/amx_ukernel.hpp"
#include "threading/parallel.hpp"

namespace convgrad::detail::amx {
namespace {

using namespace amx::test;

enum class data_kind { uniform, integers, edgy };

// One problem: packed operands for `batch` items, C's initial values, and the shapes.
struct problem {
    int M, N, K, batch;
    amx_dot dot;
    bool accumulate;
    int64_t lda, ldb, ldc;
    std::vector<std::vector<uint16_t>> a, b;
    std::vector<const uint16_t *> a_ptr, b_ptr;
    std::vector<float> c0;

    problem(int M_, int N_, int K_, int batch_, amx_dot dot_, bool acc, data_kind kind,
            uint32_t seed)
        : M(M_), N(N_), K(K_), batch(batch_), dot(dot_), accumulate(acc) {
        std::mt19937 rng(seed);
        lda = padded_k(K) + 2 * int64_t(seed % 3);  // panels with and without slack
        ldb = 2 * N + 2 * int64_t(seed % 2);
        ldc = N + int64_t(seed % 5);
        auto value = [&]() -> float {
            switch (kind) {
                case data_kind::uniform:
                    return std::uniform_real_distribution<float>(-1, 1)(rng);
                case data_kind::integers:
                    return float(int(rng() % 9) - 4);
                case data_kind::edgy:
                    // bf16: exponents reaching its denormals; f16: its denormals and overflow edge
                    return dot == amx_dot::bf16 ? edgy_float(rng, -5, 70)
                                                : edgy_float(rng, 98, 142);
            }
            return 0;
        };
        for (int i = 0; i < batch; ++i) {
            std::vector<float> af(size_t(M * K)), bf(size_t(K * N));
            for (float &v : af) v = value();
            for (float &v : bf) v = value();
            a.emplace_back(size_t(M * lda),
                           0x7fc1);  // NaN bit patterns in slack the kernel must not read
            b.emplace_back(size_t(padded_k(K) / 2 * ldb), 0x7fc1);
            pack_a_panel({data_type::f32, af.data(), K, 1}, M, K, dot, a.back().data(), lda);
            pack_b_vnni({data_type::f32, bf.data(), N, 1}, K, N, dot, b.back().data(), ldb);
        }
        for (int i = 0; i < batch; ++i) {
            a_ptr.push_back(a[size_t(i)].data());
            b_ptr.push_back(b[size_t(i)].data());
        }
        c0.assign(size_t(M * ldc), 12345.0f);  // beyond N: must stay untouched
        for (int m = 0; m < M; ++m)
            for (int n = 0; n < N; ++n)
                c0[size_t(m * ldc + n)] = kind == data_kind::edgy ? value() : value() * 4;
    }

    float a_at(int i, int m, int64_t k) const { return widen(a[size_t(i)][size_t(m * lda + k)]); }
    float b_at(int i, int64_t k, int n) const {
        return widen(b[size_t(i)][size_t((k / 2) * ldb + 2 * n + (k & 1))]);
    }
    float widen(uint16_t h) const {
        return dot == amx_dot::bf16 ? bf16_to_float(h) : f16_to_float(h);
    }

    std::vector<float> run(amx_backend backend) const {
        std::vector<float> c = c0;
        ukernel_args args;
        args.M = M, args.N = N, args.K = K, args.batch = batch;
        args.A = a_ptr.data(), args.B = b_ptr.data(), args.lda = lda, args.ldb = ldb;
        args.C = c.data(), args.ldc = ldc, args.accumulate = accumulate;
        ukernel(backend, dot, args);
        return c;
    }

    // The kernel's order (amx_ukernel.hpp) with each f32 step on the hardware FMA / add.
    std::vector<float> rounding_model() const {
        std::vector<float> c = c0;
        const int64_t kp = padded_k(K), full = kp / k_step, tail = kp % k_step;
        struct step_t {
            int item;
            int64_t k0, len;
        };
        std::vector<step_t> steps;
        for (int i = 0; i < batch; ++i)
            for (int64_t s = 0; s < full; ++s) steps.push_back({i, s * k_step, k_step});
        if (tail)
            for (int i = 0; i < batch; ++i) steps.push_back({i, full * k_step, tail});
        daz_ftz_scope scope;
        for (int m = 0; m < M; ++m)
            for (int n = 0; n < N; ++n) {
                float acc = accumulate ? c0[size_t(m * ldc + n)] : 0.0f;
                for (const step_t &s : steps) {
                    float even = 0, odd = 0;
                    for (int64_t k = s.k0; k < s.k0 + s.len; k += 2) {
                        even = hw_fma(even, a_at(s.item, m, k), b_at(s.item, k, n));
                        odd = hw_fma(odd, a_at(s.item, m, k + 1), b_at(s.item, k + 1, n));
                    }
                    acc = hw_add(acc, hw_add(even, odd));
                }
                c[size_t(m * ldc + n)] = acc;
            }
        return c;
    }

    // Exact sum in double, and the sum of magnitudes for the error bound.
    void reference(std::vector<double> &exact, std::vector<double> &magnitude) const {
        exact.assign(c0.size(), 0), magnitude.assign(c0.size(), 0);
        for (int m = 0; m < M; ++m)
            for (int n = 0; n < N; ++n) {
                const size_t o = size_t(m * ldc + n);
                double s = accumulate ? c0[o] : 0, mag = std::fabs(s);
                for (int i = 0; i < batch; ++i)
                    for (int64_t k = 0; k < K; ++k) {
                        const double p = double(a_at(i, m, k)) * double(b_at(i, k, n));
                        s += p, mag += std::fabs(p);
                    }
                exact[o] = s, magnitude[o] = mag;
            }
    }

    std::string name() const {
        return std::string(to_string(dot)) + " M" + std::to_string(M) + " N" + std::to_string(N) +
               " K" + std::to_string(K) + " batch" + std::to_string(batch) +
               (accumulate ? " accumulate" : " zero");
    }
};

void expect_untouched_beyond_n(const problem &p, const std::vector<float> &c) {
    for (int m = 0; m < p.M; ++m)
        for (int64_t n = p.N; n < p.ldc; ++n)
            ASSERT_EQ(c[size_t(m * p.ldc + n)], 12345.0f) << p.name();
}

const int tail_ms[] = {1, 7, 16, 17, 32};
const int tail_ns[] = {1, 5, 16, 17, 32};
const int tail_ks[] = {1, 2, 31, 32, 33, 64, 95};

void sweep(amx_dot dot, data_kind kind, const std::function<void(const problem &)> &check) {
    uint32_t seed = 1;
    for (int M : tail_ms)
        for (int N : tail_ns)
            for (int K : tail_ks)
                for (int batch : {1, 3})
                    for (bool acc : {false, true}) {
                        if (batch == 3 && (M == 7 || N == 5))
                            continue;  // batch x tails: a subset suffices
                        check(problem(M, N, K, batch, dot, acc, kind, seed++));
                        if (::testing::Test::HasFatalFailure()) return;
                    }
}

class AmxUkernel : public ::testing::TestWithParam<amx_dot> {};

TEST_P(AmxUkernel, EmulatedMatchesTheRoundingModelBitForBit) {
    if (!have_fma()) GTEST_SKIP() << "the rounding model needs this CPU's FMA";
    int compared = 0;
    for (data_kind kind : {data_kind::uniform, data_kind::edgy}) {
        sweep(GetParam(), kind, [&](const problem &p) {
            const std::vector<float> got = p.run(amx_backend::emulated), want = p.rounding_model();
            for (int m = 0; m < p.M; ++m)
                for (int n = 0; n < p.N; ++n) {
                    const size_t o = size_t(m * p.ldc + n);
                    ASSERT_TRUE(same_result(got[o], want[o]))
                        << p.name() << " at " << m << "," << n << std::hexfloat << ": kernel "
                        << got[o] << ", model " << want[o];
                    compared++;
                }
            expect_untouched_beyond_n(p, got);
        });
    }
    std::printf("%s: %d outputs equal to the rounding model\n", to_string(GetParam()), compared);
}

TEST_P(AmxUkernel, EmulatedWithinTheF32BoundOfTheDoubleReference) {
    sweep(GetParam(), data_kind::uniform, [&](const problem &p) {
        const std::vector<float> got = p.run(amx_backend::emulated);
        std::vector<double> exact, mag;
        p.reference(exact, mag);
        // Each output is a sum of batch * K products plus C, added in f32 along chains no longer
        // than K / 2 + 2 per step and steps + 1 overall: |error| <= (K + 2 * batch + 4) u
        // sum|terms|.
        const double u = 0x1p-24, bound = double(p.K + 2 * p.batch + 4) * u;
        for (int m = 0; m < p.M; ++m)
            for (int n = 0; n < p.N; ++n) {
                const size_t o = size_t(m * p.ldc + n);
                ASSERT_LE(std::fabs(double(got[o]) - exact[o]), bound * mag[o] + 1e-30)
                    << p.name() << " at " << m << "," << n;
            }
    });
}

TEST_P(AmxUkernel, EmulatedExactOnSmallIntegers) {
    sweep(GetParam(), data_kind::integers, [&](const problem &p) {
        const std::vector<float> got = p.run(amx_backend::emulated);
        std::vector<double> exact, mag;
        p.reference(exact, mag);
        for (int m = 0; m < p.M; ++m)
            for (int n = 0; n < p.N; ++n)
                ASSERT_EQ(double(got[size_t(m * p.ldc + n)]), exact[size_t(m * p.ldc + n)])
                    << p.name();
    });
}

TEST_P(AmxUkernel, NativeMatchesTheEmulationBitForBit) {
    if (!native_usable(GetParam()))
        GTEST_SKIP() << "native " << to_string(GetParam()) << ": "
                     << native_unusable_reason(GetParam());
    for (data_kind kind : {data_kind::uniform, data_kind::edgy, data_kind::integers}) {
        sweep(GetParam(), kind, [&](const problem &p) {
            const std::vector<float> native = p.run(amx_backend::native),
                                     emulated = p.run(amx_backend::emulated);
            for (size_t o = 0; o < native.size(); ++o)
                ASSERT_TRUE(same_result(native[o], emulated[o]))
                    << p.name() << " at " << o << std::hexfloat << ": native " << native[o]
                    << ", emulated " << emulated[o];
        });
    }
}

INSTANTIATE_TEST_SUITE_P(Amx, AmxUkernel, ::testing::Values(amx_dot::bf16, amx_dot::f16),
                         [](const auto &info) { return std::string(to_string(info.param)); });

TEST(AmxUkernelArgs, OutsideTheContractIsAnError) {
    problem p(4, 4, 4, 1, amx_dot::bf16, false, data_kind::integers, 1);
    std::vector<float> c(64);
    ukernel_args good;
    good.M = 4, good.N = 4, good.K = 4, good.A = p.a_ptr.data(), good.B = p.b_ptr.data();
    good.lda = p.lda, good.ldb = p.ldb, good.C = c.data(), good.ldc = 4;
    EXPECT_NO_THROW(ukernel(amx_backend::emulated, amx_dot::bf16, good));
    auto expect_invalid = [](ukernel_args a, const char *what) {
        try {
            ukernel(amx_backend::emulated, amx_dot::bf16, a);
            ADD_FAILURE() << "accepted " << what;
        } catch (const error &e) {
            EXPECT_EQ(e.code(), status::invalid_arguments) << what << ": " << e.what();
        }
    };
    ukernel_args a = good;
    a.M = 33;
    expect_invalid(a, "M = 33");
    a = good, a.N = 0;
    expect_invalid(a, "N = 0");
    a = good, a.K = 0;
    expect_invalid(a, "K = 0");
    a = good, a.lda = 3;
    expect_invalid(a, "lda < K");
    a.a_rows_overlap = true;  // overlapping rows of A are allowed, but not lda = 0
    a.lda = 0;
    expect_invalid(a, "lda = 0 with overlapping rows");
    a = good, a.ldb = 7;
    expect_invalid(a, "ldb < 2N");
    a = good, a.ldc = 3;
    expect_invalid(a, "ldc < N");
    a = good, a.C = nullptr;
    expect_invalid(a, "null C");
    if (!native_usable(amx_dot::bf16)) {
        try {
            ukernel(amx_backend::native, amx_dot::bf16, good);
            ADD_FAILURE() << "native ran without AMX";
        } catch (const error &e) {
            EXPECT_EQ(e.code(), status::unimplemented) << e.what();
        }
        EXPECT_THROW(thread_tile_hooks(amx_backend::native), error);
    }
}

// The per-thread hooks in use: each thread of a region configures its tiles on entry and
// releases them on exit; kernel calls inside see their configuration.
TEST(AmxUkernelHooks, RegionWithTileHooksRunsKernelsOnEveryThread) {
    std::vector<amx_backend> backends = {amx_backend::emulated};
    if (native_usable(amx_dot::bf16)) backends.push_back(amx_backend::native);
    for (amx_backend backend : backends) {
        std::vector<problem> problems;
        for (int i = 0; i < 4; ++i)
            problems.emplace_back(32, 32, 64, 2, amx_dot::bf16, true, data_kind::integers, 100 + i);
        std::vector<std::vector<float>> got(4);
        parallel(
            4, [&](int ithr, int) { got[size_t(ithr)] = problems[size_t(ithr)].run(backend); },
            thread_tile_hooks(backend));
        for (int i = 0; i < 4; ++i) {
            std::vector<double> exact, mag;
            problems[size_t(i)].reference(exact, mag);
            for (size_t o = 0; o < exact.size(); ++o) {
                if (o % size_t(problems[size_t(i)].ldc) < 32) {
                    ASSERT_EQ(double(got[size_t(i)][o]), exact[o]) << to_string(backend);
                }
            }
        }
    }
}

// Which paths this machine ran: printed for the CI log.
TEST(AmxUkernelPaths, Summary) {
    std::string line = "AMX microkernel paths:";
    for (amx_dot dot : {amx_dot::bf16, amx_dot::f16}) {
        line += std::string(" ") + to_string(dot) + " emulated: ran" +
                (have_fma() ? "" : " (rounding model skipped: no FMA)");
        line +=
            std::string("; ") + to_string(dot) + " native: " +
            (native_usable(dot) ? std::string("ran")
                                : std::string("skipped (") + native_unusable_reason(dot) + ")") +
            ";";
    }
    std::printf("%s\n", line.c_str());
    RecordProperty("amx_paths", line);
}

// The other layouts of A give the same products in the same order, so the same bits: rows
// in two runs (m0 rows, then the rest from a1_offset on, with C rows from 16 on), and A in
// tile-step blocks (a_block). K with and without a tail step, a batch of 2, both types, every
// backend that runs here.
TEST(AmxUkernelLayouts, SplitRowsAndBlockedAGiveThePlainResult) {
    std::mt19937 rng(9);
    int ran = 0;
    for (amx_dot dot : {amx_dot::bf16, amx_dot::f16})
        for (amx_backend backend : {amx_backend::emulated, amx_backend::native}) {
            if (backend == amx_backend::native && !native_usable(dot)) continue;
            for (int M : {3, 14, 20, 28, 32})
                for (int64_t K : {int64_t(48), int64_t(64), int64_t(6)}) {
                    const int N = 20, batch = 2, m0 = std::min(16, (M + 1) / 2);
                    const int64_t kp = padded_k(K), lda = kp, ldb = 2 * N;
                    std::vector<std::vector<uint16_t>> a, b, split, blocked;
                    std::vector<const uint16_t *> ap, bp, sp, bl;
                    const int64_t gap = 5 * lda, nblk = (kp + k_step - 1) / k_step;
                    const int64_t a_block = M * int64_t(k_step) + 16;
                    for (int i = 0; i < batch; ++i) {
                        std::vector<float> af(size_t(M * K)), bf(size_t(K * N));
                        for (float &v : af) v = float(int(rng() % 7) - 3);
                        for (float &v : bf) v = float(int(rng() % 5) - 2);
                        a.emplace_back(size_t(M * lda), 0);
                        b.emplace_back(size_t(kp / 2 * ldb), 0);
                        pack_a_panel({data_type::f32, af.data(), K, 1}, M, K, dot, a.back().data(),
                                     lda);
                        pack_b_vnni({data_type::f32, bf.data(), N, 1}, K, N, dot, b.back().data(),
                                    ldb);
                        // rows [m0, M) moved `gap` elements further on
                        split.emplace_back(size_t((M + 5) * lda), 0x7fc1);
                        for (int m = 0; m < M; ++m)
                            std::copy(a.back().begin() + m * lda, a.back().begin() + (m + 1) * lda,
                                      split.back().begin() + m * lda + (m >= m0 ? gap : 0));
                        // [K block][row][32]
                        blocked.emplace_back(size_t(nblk * a_block), 0x7fc1);
                        for (int64_t kb = 0; kb < nblk; ++kb)
                            for (int m = 0; m < M; ++m)
                                for (int64_t k = kb * k_step; k < std::min(kp, (kb + 1) * k_step);
                                     ++k)
                                    blocked.back()[size_t(kb * a_block + m * k_step + k % k_step)] =
                                        a.back()[size_t(m * lda + k)];
                    }
                    for (int i = 0; i < batch; ++i) {
                        ap.push_back(a[size_t(i)].data()), bp.push_back(b[size_t(i)].data());
                        sp.push_back(split[size_t(i)].data());
                        bl.push_back(blocked[size_t(i)].data());
                    }
                    auto run = [&](const std::vector<const uint16_t *> &A, int64_t ld, int m0v,
                                   int64_t a1, int64_t blk) {
                        std::vector<float> c(size_t(32 * N), -7.f);
                        ukernel_args args;
                        args.M = M, args.N = N, args.K = int(K), args.batch = batch;
                        args.A = A.data(), args.B = bp.data(), args.lda = ld, args.ldb = ldb;
                        args.m0 = m0v, args.a1_offset = a1, args.a_block = blk;
                        args.C = c.data(), args.ldc = N;
                        ukernel(backend, dot, args);
                        return c;
                    };
                    const std::vector<float> plain = run(ap, lda, 0, 0, 0);
                    const std::vector<float> two = run(sp, lda, m0, m0 * lda + gap, 0);
                    for (int m = 0; m < M; ++m)
                        for (int n = 0; n < N; ++n) {
                            const int cm = m < m0 ? m : 16 + m - m0;
                            ASSERT_EQ(two[size_t(cm * N + n)], plain[size_t(m * N + n)])
                                << "split rows, M " << M << " m0 " << m0 << " K " << K;
                        }
                    const std::vector<float> blk = run(bl, k_step, 0, 0, a_block);
                    for (int m = 0; m < M; ++m)
                        for (int n = 0; n < N; ++n)
                            ASSERT_EQ(blk[size_t(m * N + n)], plain[size_t(m * N + n)])
                                << "blocked A, M " << M << " K " << K;
                    ++ran;
                }
        }
    std::printf("[ amx ukernel ] split rows and blocked A: %d shapes equal to the plain layout\n",
                ran);
}

}  // namespace
}  // namespace convgrad::detail::amx
