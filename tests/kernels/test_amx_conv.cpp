// The AMX convolution kernels (src/kernels/amx/amx_conv_kernels.hpp) against the reference,
// over a seeded sweep of small forward, backward-data (both with and without bias) and
// backward-weights problems that hits every tail: odd and > 32 channel counts, odd pixel
// counts and K chunk edges, groups, stride > kernel (src pixels no tap reaches), pads so large
// that whole taps fall in the padding, dilation, 1-D/2-D/3-D, NXC and NCX with padded strides, both
// weights orders, bf16 and f16 (and f32 under fpmath_mode bf16/f16).
//
// Always through the emulated backend; through the native one when this machine grants AMX
// (compared bit for bit with the emulation), else skipped with the reason. Small-integer data
// gives exactly the reference's result; random data stays within the f32 error bound.
#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "core/float_convert.hpp"
#include "kernels/amx/amx_bwd_data.hpp"
#include "kernels/amx/amx_bwd_weights.hpp"
#include "kernels/amx/amx_conv_kernels.hpp"
#include "kernels/amx/amx_fwd.hpp"
#include "ref/ref_conv.hpp"
#include "util/conv_case.hpp"

namespace convgrad::detail::amx {
namespace {

using namespace testcase;

// One unit in the last place of the output type at magnitude v.
double ulp_out(data_type dt, double v) {
    const int mant = dt == data_type::bf16 ? 7 : dt == data_type::f16 ? 10 : 23;
    const double tiny = dt == data_type::f16 ? std::ldexp(1.0, -24) : std::ldexp(1.0, -149);
    if (v == 0) return tiny;
    return std::max(tiny, std::ldexp(1.0, std::ilogb(v) - mant));
}

// Integer data: the kernel's result equals the reference's bit for bit. Random data: within
// the f32 summation bound n * 2^-24 * sum |a * b| (+ |bias|) (n: terms plus slice sums), plus the
// flush allowance n * 2^-126 and one unit of the output type at the result's magnitude.
void check_case(const conv_case &c, amx_backend backend, uint64_t seed, bool integers) {
    const conv_problem p = make_problem(c);
    std::mt19937_64 rng(seed);
    const inputs in = make_inputs(p, rng, integers);
    const auto k = make_conv_kernel(p, backend, c.chunk);
    const buffer got = run(p, in, k.get()), want = run(p, in, nullptr);
    const std::vector<dim_t> offs = output_offsets(p);
    if (integers) {
        for (dim_t o : offs)
            ASSERT_EQ(got.get(o), want.get(o))
                << describe(c) << " at " << o << " (" << k->describe() << ")";
        return;
    }
    // sum |a * b| (+ |bias|) per output: the reference on the absolute values, in f32.
    conv_problem pa = p;
    pa.dt = pa.math_dt = data_type::f32;
    auto abs_of = [](const buffer &b) {
        buffer r(data_type::f32, b.count());
        for (dim_t x = 0; x < b.count(); ++x) r.set(x, std::fabs(b.get(x)));
        return r;
    };
    const inputs abs_in{abs_of(in.src), abs_of(in.dst), abs_of(in.wei), abs_of(in.bias)};
    const buffer mag = run(pa, abs_in, nullptr);
    const double n = double(is_fwd(p)                           ? p.icg * p.ksp()
                            : p.dir == conv_direction::bwd_data ? p.ocg * p.ksp()
                                                                : p.mb * p.osp()) +
                     64;
    for (dim_t o : offs) {
        const double e =
            n * std::ldexp(1.0, -24) * double(mag.get(o)) * 1.01 + n * std::ldexp(1.0, -126);
        const double r = want.get(o), bound = e + ulp_out(p.dt, std::fabs(r) + e);
        ASSERT_LE(std::fabs(double(got.get(o)) - r), bound)
            << describe(c) << " at " << o << ": " << got.get(o) << " vs " << r << " ("
            << k->describe() << ")";
    }
}

dim_t pick(std::mt19937_64 &rng, std::initializer_list<dim_t> v) {
    return *(v.begin() + std::uniform_int_distribution<size_t>(0, v.size() - 1)(rng));
}

// A random small case; sizes keep the emulated kernel to about a million multiply-adds.
conv_case random_case(std::mt19937_64 &rng, conv_direction dir, data_type dt, data_type math) {
    for (;;) {
        conv_case c;
        c.dir = dir;
        c.bias = rng() % 2;
        c.dt = dt;
        c.math = math;
        c.nsp = int(pick(rng, {1, 2, 2, 3}));
        c.mb = pick(rng, {1, 2, 3});
        c.g = pick(rng, {1, 1, 2, 3});
        c.icg = pick(rng, {1, 3, 16, 17, 32, 33, 40});
        c.ocg = pick(rng, {1, 5, 16, 31, 32, 33, 48});
        for (int x = 3 - c.nsp; x < 3; ++x) {
            c.k[x] = pick(rng, {1, 2, 3, 3});
            c.s[x] = pick(rng, {1, 1, 2, 3});
            c.dl[x] = pick(rng, {1, 1, 2});
            c.pb[x] = pick(rng, {0, 0, 1, 2, 4});
            c.pe[x] = pick(rng, {0, 0, 1, 3});
            const dim_t ke = (c.k[x] - 1) * c.dl[x] + 1;
            c.i[x] = std::max<dim_t>(pick(rng, {1, 2, 5, 7, 12, 19}), ke - c.pb[x] - c.pe[x]);
            if (c.i[x] < 1) c.i[x] = 1;
            if (c.i[x] + c.pb[x] + c.pe[x] < ke) c.pe[x] = ke - c.i[x] - c.pb[x];
        }
        c.ncx = rng() % 2;
        c.xio = rng() % 2;
        c.pad = pick(rng, {0, 0, 3});
        c.chunk = pick(rng, {0, 0, 1, 7, 32, 33, 64});
        const conv_problem p = make_problem(c);
        if (p.macs() <= 1.5e6) return c;
    }
}

// The hand-picked edges the sweep might miss.
std::vector<conv_case> edge_cases(conv_direction dir, data_type dt, data_type math) {
    std::vector<conv_case> v;
    auto add = [&](conv_case c) {
        c.dir = dir;
        c.bias = v.size() % 2;
        c.dt = dt;
        c.math = math;
        v.push_back(c);
    };
    conv_case c;
    // oc > 32 and ic > 32 (2 x 2 microkernel blocks with tails), odd pixel count, chunks of 33.
    c.icg = 37, c.ocg = 45, c.mb = 1, c.i[1] = 7, c.i[2] = 9, c.k[1] = c.k[2] = 3;
    c.pb[1] = c.pb[2] = c.pe[1] = c.pe[2] = 1, c.chunk = 33;
    add(c);
    // Stride > kernel: source pixels between the taps are never read.
    c = {};
    c.icg = 5, c.ocg = 3, c.mb = 2, c.i[1] = c.i[2] = 11, c.s[1] = c.s[2] = 4, c.k[1] = c.k[2] = 2;
    add(c);
    // Pads so big that some taps see only padding (their weights are 0).
    c = {};
    c.icg = 4, c.ocg = 6, c.i[1] = 3, c.i[2] = 2, c.k[1] = c.k[2] = 3, c.pb[1] = c.pe[1] = 5;
    c.pb[2] = 4, c.pe[2] = 2;
    add(c);
    // 1-D, groups, NCX with padded rows, dilation, K chunk of one pixel pair.
    c = {};
    c.nsp = 1, c.g = 3, c.icg = 7, c.ocg = 9, c.mb = 3, c.i[2] = 31, c.k[2] = 3, c.dl[2] = 2;
    c.pb[2] = 2, c.ncx = true, c.pad = 5, c.chunk = 2;
    add(c);
    // 3-D, XIO weights, NXC with padded channels.
    c = {};
    c.nsp = 3, c.icg = 16, c.ocg = 17, c.i[0] = 4, c.i[1] = 5, c.i[2] = 6;
    c.k[0] = c.k[1] = c.k[2] = 2, c.s[0] = 2, c.pb[0] = c.pe[2] = 1, c.xio = true, c.pad = 2;
    add(c);
    // Depthwise-like: one channel each side per group.
    c = {};
    c.g = 8, c.icg = 1, c.ocg = 1, c.mb = 2, c.i[1] = c.i[2] = 6, c.k[1] = c.k[2] = 3;
    c.pb[1] = c.pb[2] = c.pe[1] = c.pe[2] = 1;
    add(c);
    return v;
}

struct dt_pair {
    data_type dt, math;
};
const dt_pair dt_pairs[] = {{data_type::bf16, data_type::bf16},
                            {data_type::f16, data_type::f16},
                            {data_type::f32, data_type::bf16},
                            {data_type::f32, data_type::f16}};

amx_dot dot_of(data_type math) {
    return math == data_type::bf16 ? amx_dot::bf16 : amx_dot::f16;
}

// On random data the native kernel writes the emulated one's bytes (when this machine grants
// the native one for the case's type).
void native_matches_emulation(const conv_case &c, const conv_problem &p, uint64_t seed) {
    if (!native_usable(dot_of(c.math))) return;
    std::mt19937_64 data_rng(seed);
    const inputs in = make_inputs(p, data_rng, false);
    const buffer nat = run(p, in, make_conv_kernel(p, amx_backend::native, c.chunk).get());
    const buffer emu = run(p, in, make_conv_kernel(p, amx_backend::emulated, c.chunk).get());
    ASSERT_EQ(nat.bytes, emu.bytes) << describe(c);
}

const conv_direction dirs[] = {conv_direction::fwd, conv_direction::bwd_data,
                               conv_direction::bwd_weights};

void sweep(conv_direction dir, amx_backend backend, bool integers, int &ran) {
    for (const dt_pair &d : dt_pairs) {
        std::mt19937_64 rng(0xa3c0 + int(d.dt) * 16 + int(d.math));
        std::vector<conv_case> cases = edge_cases(dir, d.dt, d.math);
        const int nrandom = d.dt == d.math ? 24 : 6;
        for (int j = 0; j < nrandom; ++j) cases.push_back(random_case(rng, dir, d.dt, d.math));
        for (size_t j = 0; j < cases.size(); ++j) {
            SCOPED_TRACE(describe(cases[j]));
            check_case(cases[j], backend, 1000 + j, integers);
            if (::testing::Test::HasFatalFailure()) return;
            ++ran;
        }
    }
}

TEST(AmxConv, EmulatedIntegerDataIsExact) {
    for (conv_direction dir : dirs) {
        int ran = 0;
        sweep(dir, amx_backend::emulated, true, ran);
        if (HasFatalFailure()) return;
        std::printf("[ amx conv ] %s emulated, integer data: %d cases exact\n", to_string(dir),
                    ran);
    }
}

TEST(AmxConv, EmulatedRandomDataWithinF32Bound) {
    for (conv_direction dir : dirs) {
        int ran = 0;
        sweep(dir, amx_backend::emulated, false, ran);
        if (HasFatalFailure()) return;
        std::printf("[ amx conv ] %s emulated, random data: %d cases within bound\n",
                    to_string(dir), ran);
    }
}

TEST(AmxConv, NativeMatchesEmulation) {
    int ran = 0;
    std::string skipped;
    for (const dt_pair &d : dt_pairs) {
        const amx_dot dot = dot_of(d.math);
        if (!native_usable(dot)) {
            const std::string why =
                std::string(" ") + to_string(dot) + ": " + native_unusable_reason(dot) + ";";
            if (skipped.find(why) == std::string::npos) skipped += why;
            continue;
        }
        std::mt19937_64 rng(77);
        std::vector<conv_case> cases;
        for (conv_direction dir : dirs) {
            for (const conv_case &c : edge_cases(dir, d.dt, d.math)) cases.push_back(c);
            for (int j = 0; j < 8; ++j) cases.push_back(random_case(rng, dir, d.dt, d.math));
        }
        for (const conv_case &c : cases) {
            const conv_problem p = make_problem(c);
            std::mt19937_64 data_rng(5);
            const inputs in = make_inputs(p, data_rng, false);
            const buffer nat = run(p, in, make_conv_kernel(p, amx_backend::native, c.chunk).get());
            const buffer emu =
                run(p, in, make_conv_kernel(p, amx_backend::emulated, c.chunk).get());
            ASSERT_EQ(nat.bytes, emu.bytes) << describe(c);
            ++ran;
        }
        for (conv_direction dir : dirs)
            check_case(edge_cases(dir, d.dt, d.math)[0], amx_backend::native, 9, false);
    }
    std::printf(
        "[ amx conv ] fwd, bwd_data, bwd_weights native: %d cases bit-identical to the "
        "emulation;%s\n",
        ran, skipped.empty() ? "" : (" skipped" + skipped).c_str());
    if (ran == 0) GTEST_SKIP() << "native AMX not usable:" << skipped;
}

// The same bytes on 1 and 2 threads (and on repeats): the partial sums are per pixel slice,
// fixed by the problem, and reduced in slice order.
TEST(AmxConv, BitIdenticalForOneAndTwoThreads) {
    const int saved = omp_get_max_threads();
    for (const dt_pair &d : dt_pairs) {
        if (d.dt != d.math) continue;
        for (int64_t chunk : {int64_t(-1), int64_t(0), int64_t(48)}) {
            conv_case c;
            if (chunk < 0) {  // fwd and bwd_data (no reduction: a check of their split)
                c.dir = d.dt == data_type::bf16 ? conv_direction::fwd : conv_direction::bwd_data;
                c.bias = true;
                chunk = 0;
            }
            c.dt = d.dt;
            c.math = d.math;
            c.mb = 2, c.icg = 24, c.ocg = 40, c.i[1] = 18, c.i[2] = 17, c.k[1] = c.k[2] = 3;
            c.pb[1] = c.pb[2] = c.pe[1] = c.pe[2] = 1, c.chunk = chunk;
            const conv_problem p = make_problem(c);
            ASSERT_GT(p.macs(), 1e6) << "big enough to be split over threads";
            std::mt19937_64 rng(3);
            const inputs in = make_inputs(p, rng, false);
            std::vector<testing::aligned_bytes> results;
            for (int nthr : {1, 2, 2, 1}) {
                omp_set_num_threads(nthr);
                const auto k = make_conv_kernel(p, amx_backend::emulated, c.chunk);
                results.push_back(run(p, in, k.get()).bytes);
            }
            omp_set_num_threads(saved);
            for (size_t j = 1; j < results.size(); ++j)
                ASSERT_EQ(results[j], results[0]) << describe(c) << " run " << j;
        }
    }
}

// A weight gradient of one slice (36 pixels: one chunk) splits its 9 taps over work items: the
// same bytes on 1, 2 and 3 threads, and the reference's on integer data, on both of its paths
// (the rows path over planes, and the pixel path when the rows path is refused: stride 2).
TEST(AmxConv, OneSliceSplitsItsTapsBitIdentically) {
    const int saved = omp_get_max_threads();
    for (dim_t stride : {dim_t(1), dim_t(2)}) {
        conv_case c;
        c.mb = 1, c.icg = 20, c.ocg = 36, c.i[1] = 6 * stride, c.i[2] = 6 * stride;
        c.k[1] = c.k[2] = 3, c.s[1] = c.s[2] = stride;
        c.pb[1] = c.pb[2] = 1, c.pe[1] = c.pe[2] = stride == 1 ? 1 : 0;
        const conv_problem p = make_problem(c);
        const bwd_weights_plan pl = plan_bwd_weights(p, amx_backend::emulated);
        ASSERT_EQ(pl.rows ? pl.rslices : pl.slices, 1) << describe(c);
        check_case(c, amx_backend::emulated, 17, true);
        if (HasFatalFailure()) return;
        std::mt19937_64 rng(4);
        const inputs in = make_inputs(p, rng, false);
        std::vector<testing::aligned_bytes> results;
        for (int nthr : {1, 2, 3}) {
            omp_set_num_threads(nthr);
            results.push_back(run(p, in, make_conv_kernel(p, amx_backend::emulated).get()).bytes);
        }
        omp_set_num_threads(saved);
        for (size_t j = 1; j < results.size(); ++j)
            ASSERT_EQ(results[j], results[0]) << describe(c) << " run " << j;
    }
}

// The folded weight gradient (a stem-like layer: 3 channels, 7 w taps of stride 2, big enough
// to be split) gives the same bytes on 1, 2 and 3 threads: its slices and units depend on the
// problem only, and the slices are summed in order.
TEST(AmxConv, FoldedBitIdenticalOnAnyThreadCount) {
    const int saved = omp_get_max_threads();
    conv_case c;
    c.mb = 2, c.icg = 3, c.ocg = 40, c.i[1] = 18, c.i[2] = 80, c.k[1] = 3, c.k[2] = 7;
    c.s[1] = c.s[2] = 2, c.pb[1] = c.pe[1] = 1, c.pb[2] = 3, c.pe[2] = 2;
    const conv_problem p = make_problem(c);
    ASSERT_GT(p.macs(), 1e6) << "big enough to be split over threads";
    ASSERT_TRUE(plan_bwd_weights(p, amx_backend::emulated).folded) << describe(c);
    check_case(c, amx_backend::emulated, 19, true);
    if (HasFatalFailure()) return;
    std::mt19937_64 rng(5);
    const inputs in = make_inputs(p, rng, false);
    std::vector<testing::aligned_bytes> results;
    for (int nthr : {1, 2, 3, 1}) {
        omp_set_num_threads(nthr);
        results.push_back(run(p, in, make_conv_kernel(p, amx_backend::emulated).get()).bytes);
    }
    omp_set_num_threads(saved);
    for (size_t j = 1; j < results.size(); ++j)
        ASSERT_EQ(results[j], results[0]) << describe(c) << " run " << j;
}

// bwd_weights' rows path (w stride 1, several taps, rows that fill their tile steps): K runs
// along whole output rows, B points into src lines of pixel pairs in both alignments. Rows of
// 24-64 pixels (odd and even, padded to 32 or to even), 2-4 w taps at odd and even offsets
// (dilation, padding), 40 channels (a partial 32-block), groups, row chunks of 1 and 3 rows,
// NCX, every type; exact on integer data, native bit for bit with the emulation.
TEST(AmxConv, BackwardWeightsRowsPathIsExact) {
    int ran = 0;
    for (const dt_pair &d : dt_pairs)
        for (int j = 0; j < 6; ++j) {
            conv_case c;
            c.dt = d.dt, c.math = d.math;
            c.mb = 1 + j % 2, c.g = j == 3 ? 2 : 1;
            c.icg = j % 3 == 0 ? 40 : 16 + j, c.ocg = j % 2 ? 36 : 5;
            c.i[1] = 3 + j % 3, c.k[1] = 1 + j % 3, c.pb[1] = c.pe[1] = j % 2;
            const dim_t widths[] = {24, 31, 32, 48, 56, 64};
            c.k[2] = 2 + j % 3, c.dl[2] = 1 + j % 2, c.pb[2] = j % 3, c.pe[2] = (j + 1) % 2;
            c.i[2] = widths[j] + (c.k[2] - 1) * c.dl[2] - c.pb[2] - c.pe[2];
            c.ncx = j == 4;
            const int64_t rows_per_chunk[] = {0, 1, 3};
            const conv_problem p = make_problem(c);
            for (int64_t rpc : rows_per_chunk) {
                c.chunk = rpc * padded_k(p.o[2]);  // 0: the planner's
                const bwd_weights_plan pl = plan_bwd_weights(p, amx_backend::emulated, c.chunk);
                ASSERT_TRUE(pl.rows) << describe(c) << " (must take the rows path)";
                check_case(c, amx_backend::emulated, 40 + j, true);
                if (HasFatalFailure()) return;
                native_matches_emulation(c, p, 7);
                if (HasFatalFailure()) return;
                ++ran;
            }
        }
    std::printf("[ amx conv ] bwd_weights rows path: %d cases exact\n", ran);
}

// bwd_weights' rows path over whole planes (stride 1 along h and w, short rows): K runs over
// an output plane with its rows wq apart (zero columns past o_w), and every (kh, kw) tap reads
// one run of a plane of zero-padded src rows. Rows of 12-20 pixels, 2-3 taps each way at odd
// and even offsets (dilation along h, pads up to past the kernel), 3-D (kd taps skip planes
// outside), groups, a partial 32-block of channels, NCX, chunks of one plane and of several, every
// type; exact on integer data, native bit for bit with the emulation.
TEST(AmxConv, BackwardWeightsPlanePathIsExact) {
    int ran = 0;
    for (const dt_pair &d : dt_pairs)
        for (int j = 0; j < 6; ++j) {
            conv_case c;
            c.dt = d.dt, c.math = d.math;
            c.mb = 1 + j % 2, c.g = j == 3 ? 2 : 1;
            c.icg = j % 3 == 0 ? 40 : 16 + j, c.ocg = j % 2 ? 36 : 5;
            if (j == 4) c.nsp = 3, c.i[0] = 3, c.k[0] = 2, c.pb[0] = 1, c.pe[0] = 0;
            // (rows that fill a tile step poorly, planes that fill 3/4 or more of theirs)
            const dim_t widths[] = {14, 20, 14, 14, 14, 12};
            c.k[1] = 2 + j % 2, c.dl[1] = 1 + (j == 2), c.pb[1] = j % 3, c.pe[1] = (j + 1) % 2;
            c.k[2] = j == 3 ? 2 : 3, c.pb[2] = j == 5 ? 4 : j % 2, c.pe[2] = j % 3;
            c.i[1] = 6 + j + (c.k[1] - 1) * c.dl[1] - c.pb[1] - c.pe[1];
            c.i[2] = widths[j] + (c.k[2] - 1) * c.dl[2] - c.pb[2] - c.pe[2];
            c.ncx = j == 1;
            const conv_problem p = make_problem(c);
            const bwd_weights_plan whole = plan_bwd_weights(p, amx_backend::emulated);
            for (int64_t chunk : {int64_t(0), whole.owp, 3 * whole.owp}) {
                c.chunk = chunk;  // 0: the planner's; one plane a chunk; three
                const bwd_weights_plan pl = plan_bwd_weights(p, amx_backend::emulated, c.chunk);
                ASSERT_TRUE(pl.rows && pl.plane) << describe(c) << " (must take the plane path)";
                check_case(c, amx_backend::emulated, 60 + j, true);
                if (HasFatalFailure()) return;
                native_matches_emulation(c, p, 8);
                if (HasFatalFailure()) return;
                ++ran;
            }
        }
    std::printf("[ amx conv ] bwd_weights plane path: %d cases exact\n", ran);
}

// bwd_weights' folded path (few input channels, any w stride): kq w taps of icg channels side
// by side in the columns. 1-7 channels, 2-7 w taps in one group of
// columns and in several (5 channels x 7 taps: groups of 4 and 3, the last one's columns past
// k_w dropped), strides 2-3, dilation (a gathered run), pads on both sides and past the kernel,
// stride 1, rows past a tile step (o_w 33-56), 1-D, 2-D and 3-D (kd and kh taps outside skipped),
// groups, NCX and padded strides, more than 32 output channels, chunks of 1 and 3 rows and the
// planner's, every type; exact on integer data, native bit for bit with the emulation.
TEST(AmxConv, BackwardWeightsFoldedPathIsExact) {
    struct shape {
        dim_t icg, ocg, kw, sw, dlw, pbw, pew, ow;
        int nsp;
        dim_t g;
        bool ncx;
    };
    const shape shapes[] = {
        {3, 64, 7, 2, 1, 3, 2, 40, 2, 1, false},  // the stem's, narrower
        {1, 5, 3, 2, 1, 1, 1, 33, 2, 1, false},   // one channel, a row just past a tile step
        {5, 36, 7, 3, 2, 0, 4, 24, 2, 1, true},   // two groups of taps, dilation 2, NCX
        {3, 17, 4, 2, 2, 5, 1, 30, 3, 2, false},  // dilation 2 (gathered), 3-D, groups
        {7, 8, 2, 2, 1, 0, 0, 56, 1, 1, false},   // 1-D
        {4, 12, 3, 1, 1, 1, 1, 40, 2, 1, false},  // stride 1 (taken from the rows path)
    };
    int ran = 0;
    for (const dt_pair &d : dt_pairs)
        for (size_t j = 0; j < std::size(shapes); ++j) {
            const shape &sh = shapes[j];
            conv_case c;
            c.dt = d.dt, c.math = d.math;
            c.nsp = sh.nsp, c.mb = 1 + j % 2, c.g = sh.g, c.icg = sh.icg, c.ocg = sh.ocg;
            if (sh.nsp == 3) c.i[0] = 3, c.k[0] = 2, c.pb[0] = 1;
            if (sh.nsp >= 2) c.i[1] = 4, c.k[1] = 3, c.s[1] = 2, c.pb[1] = 1, c.pe[1] = 1;
            c.k[2] = sh.kw, c.s[2] = sh.sw, c.dl[2] = sh.dlw, c.pb[2] = sh.pbw, c.pe[2] = sh.pew;
            c.i[2] = (sh.ow - 1) * sh.sw + (sh.kw - 1) * sh.dlw + 1 - sh.pbw - sh.pew;
            c.ncx = sh.ncx, c.pad = j == 1 ? 3 : 0;
            const conv_problem p = make_problem(c);
            ASSERT_EQ(p.o[2], sh.ow) << describe(c);
            const bwd_weights_plan whole = plan_bwd_weights(p, amx_backend::emulated);
            ASSERT_TRUE(whole.folded && !whole.rows)
                << describe(c) << " (must take the folded path)";
            for (int64_t chunk : {int64_t(0), whole.owp, 3 * whole.owp}) {
                c.chunk = chunk;  // 0: the planner's; one row a chunk; three
                check_case(c, amx_backend::emulated, 80 + j, true);
                if (HasFatalFailure()) return;
                native_matches_emulation(c, p, 9);
                if (HasFatalFailure()) return;
                ++ran;
            }
        }
    std::printf("[ amx conv ] bwd_weights folded path: %d cases exact\n", ran);
}

// bwd_weights lets a tap's padded pixels join its sum as zero rows of src when that is exact,
// which needs diff_dst finite (0 * inf is NaN). An infinity in diff_dst at a corner pixel must
// reach only the taps whose src pixel for it is inside the image, on every path (the rows and
// folded paths, which fall back, and chunks of 2 pixels that put the corner in a chunk of its
// own).
TEST(AmxConv, InfiniteDiffDstReachesOnlyTheTapsThatReadIt) {
    for (int shape = 0; shape < 3; ++shape)
        for (amx_backend backend : {amx_backend::emulated, amx_backend::native}) {
            if (backend == amx_backend::native && !native_usable(amx_dot::bf16)) continue;
            const int64_t chunk = shape == 1 ? 2 : 0;
            conv_case c;
            c.mb = 1, c.icg = shape == 2 ? 3 : 17, c.ocg = 5, c.i[1] = 4, c.k[1] = c.k[2] = 3;
            // 0: the rows path, 2: the folded path (stride 2), which must fall back
            c.i[2] = shape == 0 ? 32 : shape == 1 ? 5 : 47;
            c.s[2] = shape == 2 ? 2 : 1;
            c.pb[1] = c.pb[2] = c.pe[1] = c.pe[2] = 1, c.chunk = chunk;
            const conv_problem p = make_problem(c);
            if (shape != 1) {
                const bwd_weights_plan pl = plan_bwd_weights(p, backend);
                ASSERT_TRUE(shape == 0 ? pl.rows : pl.folded) << describe(c);
            }
            std::mt19937_64 rng(11);
            inputs in = make_inputs(p, rng, true);
            for (dim_t x = 0; x < in.src.count(); ++x) in.src.set(x, 1 + x % 3);  // no zeros
            in.dst.set(0, INFINITY);  // pixel (0, 0), channel 0
            const auto k = make_conv_kernel(p, backend, c.chunk);
            const buffer got = run(p, in, k.get()), want = run(p, in, nullptr);
            int finite = 0;
            for (dim_t o : output_offsets(p)) {
                finite += std::isfinite(want.get(o));
                ASSERT_EQ(std::isnan(got.get(o)), std::isnan(want.get(o))) << o;
                if (!std::isnan(want.get(o))) {
                    ASSERT_EQ(got.get(o), want.get(o)) << o;
                }
            }
            ASSERT_GT(finite, 0) << "the taps that never read the corner stay finite";
        }
}

// The outputs of fwd and bwd_data are rounded to their type between the next call's tile steps,
// natively by VCVTNE2PS2BF16 where it is exact: it reads denormals as zero, and a denormal sum
// (a bias that is one, added to products that are zero) must round as the reference rounds it,
// not flush. 32 channels (the dense rows) and 20 (the masked ones), every type.
TEST(AmxConv, DenormalSumsAreRoundedNotFlushed) {
    int ran = 0;
    for (const dt_pair &d : dt_pairs)
        for (conv_direction dir : {conv_direction::fwd, conv_direction::bwd_data})
            for (dim_t channels : {dim_t(32), dim_t(20)})
                for (amx_backend backend : {amx_backend::emulated, amx_backend::native}) {
                    if (backend == amx_backend::native && !native_usable(dot_of(d.math))) continue;
                    conv_case c;
                    c.dir = dir, c.dt = d.dt, c.math = d.math, c.bias = true;
                    c.mb = 1, c.icg = c.ocg = channels, c.i[1] = 3, c.i[2] = 40;
                    c.k[1] = c.k[2] = 3, c.pb[1] = c.pb[2] = c.pe[1] = c.pe[2] = 1;
                    const conv_problem p = make_problem(c);
                    std::mt19937_64 rng(13);
                    inputs in = make_inputs(p, rng, true);
                    buffer &data = dir == conv_direction::fwd ? in.src : in.dst;
                    for (dim_t x = 0; x < data.count(); ++x) data.set(x, 0.f);
                    // Denormal in every type: the smallest f16 denormal is 2^-24, bf16's and
                    // f32's far below; each times a small integer stays denormal.
                    const float tiny =
                        d.dt == data_type::f16 ? std::ldexp(1.f, -24) : std::ldexp(1.f, -133);
                    for (dim_t x = 0; x < in.bias.count(); ++x)
                        in.bias.set(x, tiny * float(1 + x % 5));
                    const auto k = make_conv_kernel(p, backend);
                    const buffer got = run(p, in, k.get()), want = run(p, in, nullptr);
                    int nonzero = 0;
                    for (dim_t o : output_offsets(p)) {
                        ASSERT_EQ(got.get(o), want.get(o)) << describe(c) << " at " << o;
                        nonzero += want.get(o) != 0.f;
                    }
                    ASSERT_GT(nonzero, 0) << describe(c) << ": the outputs are the denormal bias";
                    ++ran;
                }
    std::printf("[ amx conv ] denormal sums: %d cases rounded as the reference\n", ran);
}

// Runs k with the operand a gather reads as A (src for fwd, diff_dst for bwd_data) `shift`
// bytes past a 64-byte boundary, and compares every output with `want`.
void check_shifted_input(const conv_case &c, const inputs &in, const kernel &k, const buffer &want,
                         size_t shift) {
    const conv_problem p = make_problem(c);
    const buffer &read = is_fwd(p) ? in.src : in.dst;
    testing::aligned_bytes moved(read.bytes.size() + 64);
    std::memcpy(moved.data() + shift, read.bytes.data(), read.bytes.size());
    buffer out(p.dt, want.count());
    conv_args a;
    (is_fwd(p) ? a.src : a.dst) = moved.data() + shift;
    a.wei = in.wei.bytes.data();
    a.bias = in.bias.bytes.data();
    a.out = out.bytes.data();
    k.execute(a);
    for (dim_t o : output_offsets(p))
        ASSERT_EQ(out.get(o), want.get(o)) << describe(c) << " shift " << shift;
}

// The forward kernel reads src in place (no padded copy) when nothing needs padding and src has
// the tiles' type, an even channel count per group and 64-byte aligned rows; else it copies.
// Both ways give the reference's result: 1x1 strided (ResNet's projection), folded w taps, a
// group offset of 32 channels, NCX (never in place); the same src at a 16-byte offset copies.
TEST(AmxConv, ForwardReadsAlignedSourceInPlaceElseCopies) {
    int in_place = 0, copied = 0;
    for (const dt_pair &d : dt_pairs)
        for (int j = 0; j < 4; ++j)
            for (amx_backend backend : {amx_backend::emulated, amx_backend::native}) {
                if (backend == amx_backend::native && !native_usable(dot_of(d.math))) continue;
                conv_case c;
                c.dir = conv_direction::fwd, c.dt = d.dt, c.math = d.math, c.bias = j % 2;
                c.mb = 2, c.icg = j == 2 ? 32 : 64, c.ocg = 40, c.g = j == 2 ? 2 : 1;
                c.i[1] = 6, c.i[2] = 37;
                if (j == 1) c.k[2] = 3;           // folded taps
                if (j != 1) c.s[1] = c.s[2] = 2;  // ResNet's strided 1x1
                c.ncx = j == 3;
                const conv_problem p = make_problem(c);
                const fwd_plan pl = plan_fwd(p, backend);
                ASSERT_EQ(pl.in_place, d.dt == d.math && j != 3) << describe(c);
                std::mt19937_64 rng(21 + j);
                const inputs in = make_inputs(p, rng, true);
                const buffer want = run(p, in, nullptr);
                const auto k = make_conv_kernel(p, backend);
                for (size_t shift : {size_t(0), size_t(16)}) {
                    check_shifted_input(c, in, *k, want, shift);
                    if (HasFatalFailure()) return;
                    (pl.in_place && shift == 0 ? in_place : copied)++;
                }
            }
    std::printf("[ amx conv ] fwd: %d runs read src in place, %d copied it\n", in_place, copied);
    ASSERT_GT(in_place, 0);
}

// The same for the backward-data kernel's diff_dst, which needs no margin with 1x1 kernels:
// stride 1 and 2 (two rows of one h phase per call), a group offset of 32 channels, NCX (never
// in place); the same diff_dst at a 16-byte offset copies.
TEST(AmxConv, BackwardDataReadsAlignedDiffDstInPlaceElseCopies) {
    int in_place = 0, copied = 0;
    for (const dt_pair &d : dt_pairs)
        for (int j = 0; j < 4; ++j)
            for (amx_backend backend : {amx_backend::emulated, amx_backend::native}) {
                if (backend == amx_backend::native && !native_usable(dot_of(d.math))) continue;
                conv_case c;
                c.dir = conv_direction::bwd_data, c.dt = d.dt, c.math = d.math, c.bias = j % 2;
                c.mb = 2, c.ocg = j == 2 ? 32 : 64, c.icg = 40, c.g = j == 2 ? 2 : 1;
                c.i[1] = 6, c.i[2] = j == 1 ? 13 : 37;
                if (j != 0) c.s[1] = c.s[2] = 2;
                c.ncx = j == 3;
                const conv_problem p = make_problem(c);
                const bwd_data_plan pl = plan_bwd_data(p, backend);
                ASSERT_EQ(pl.in_place, d.dt == d.math && j != 3) << describe(c);
                std::mt19937_64 rng(31 + j);
                const inputs in = make_inputs(p, rng, true);
                const buffer want = run(p, in, nullptr);
                const auto k = make_conv_kernel(p, backend);
                for (size_t shift : {size_t(0), size_t(16)}) {
                    check_shifted_input(c, in, *k, want, shift);
                    if (HasFatalFailure()) return;
                    (pl.in_place && shift == 0 ? in_place : copied)++;
                }
            }
    std::printf("[ amx conv ] bwd_data: %d runs read diff_dst in place, %d copied it\n", in_place,
                copied);
    ASSERT_GT(in_place, 0);
}

// The rows path's zero columns of diff_dst^T (past a row, and a plane's columns past o_w) meet
// src values of the next row there: exact only for finite src too. An infinity in src at the
// last pixel of a row must reach only the taps that read it, on the rows path (24-pixel rows,
// padded to 32), the plane path (short rows), the pixel path (chunks of 2 pixels) and the
// folded path (stride 2: the taps side by side in the columns).
TEST(AmxConv, InfiniteSrcReachesOnlyTheTapsThatReadIt) {
    for (int shape = 0; shape < 4; ++shape)
        for (amx_backend backend : {amx_backend::emulated, amx_backend::native}) {
            if (backend == amx_backend::native && !native_usable(amx_dot::bf16)) continue;
            conv_case c;
            // (17 channels: a few more would be folded; 3 are, at stride 2)
            c.mb = 1, c.icg = shape == 3 ? 3 : 17, c.ocg = 5, c.k[1] = c.k[2] = 3;
            c.i[1] = shape == 1 ? 10 : 4, c.i[2] = shape == 0 ? 24 : shape == 3 ? 47 : 14;
            c.pb[1] = c.pb[2] = c.pe[1] = c.pe[2] = 1, c.chunk = shape == 2 ? 2 : 0;
            c.s[2] = shape == 3 ? 2 : 1;  // 3: the folded path (24 pixels, padded to 32)
            const conv_problem p = make_problem(c);
            if (shape != 2) {
                const bwd_weights_plan pl = plan_bwd_weights(p, backend);
                ASSERT_TRUE(shape == 3 ? pl.folded : pl.rows && pl.plane == (shape == 1))
                    << describe(c);
            }
            std::mt19937_64 rng(12);
            inputs in = make_inputs(p, rng, true);
            for (dim_t x = 0; x < in.dst.count(); ++x) in.dst.set(x, 1 + x % 3);  // no zeros
            in.src.set((p.i[2] - 1) * p.src.sp[2], INFINITY);  // row 0's last pixel, channel 0
            const auto k = make_conv_kernel(p, backend, c.chunk);
            const buffer got = run(p, in, k.get()), want = run(p, in, nullptr);
            int finite = 0;
            for (dim_t o : output_offsets(p)) {
                finite += std::isfinite(want.get(o));
                ASSERT_EQ(std::isnan(got.get(o)), std::isnan(want.get(o))) << describe(c) << o;
                if (!std::isnan(want.get(o))) {
                    ASSERT_EQ(got.get(o), want.get(o)) << describe(c) << " at " << o;
                }
            }
            ASSERT_GT(finite, 0) << "the weights that never read the pixel stay finite";
        }
}

// Weights larger than half of L2 with few pixels put the channel blocks outside the pixel runs
// (amx_blocking.hpp); the forward kernel then copies src whole instead of a band at a time.
// Both gathers in that order equal the reference on integer data.
TEST(AmxConv, ChannelBlocksOutsideEqualTheReference) {
    int ran = 0;
    for (conv_direction dir : {conv_direction::fwd, conv_direction::bwd_data})
        for (amx_backend backend : {amx_backend::emulated, amx_backend::native}) {
            if (backend == amx_backend::native && !native_usable(amx_dot::bf16)) continue;
            conv_case c;
            c.dir = dir, c.bias = true;
            c.mb = 2, c.icg = dir == conv_direction::fwd ? 512 : 160,
            c.ocg = dir == conv_direction::fwd ? 160 : 512;
            c.i[1] = 2, c.i[2] = 3, c.k[1] = c.k[2] = 3;
            c.pb[1] = c.pb[2] = c.pe[1] = c.pe[2] = 1;
            const conv_problem p = make_problem(c);
            const bool outer = dir == conv_direction::fwd ? plan_fwd(p, backend).blocks_outer
                                                          : plan_bwd_data(p, backend).blocks_outer;
            ASSERT_TRUE(outer) << describe(c) << ": weights of "
                               << 2.0 * 9 * c.icg * c.ocg / 1048576 << " MB";
            check_case(c, backend, 90, true);
            if (HasFatalFailure()) return;
            ++ran;
        }
    std::printf("[ amx conv ] channel blocks outside: %d cases exact\n", ran);
}

// bwd_data leaves out the taps whose diff_dst rows all lie in the zero margin: a 5-tap kernel of
// dilation 3 over two diff_dst rows. The first tap never reads a diff_dst row, so an infinite
// weight there must leave every output finite, as in the reference (0 * inf in the margin
// would be NaN); the other outputs equal the reference's on integer data, with src rows in
// pairs (hpair) and without, strided and not.
TEST(AmxConv, BackwardDataSkipsTapsThatReadOnlyTheMargin) {
    int ran = 0;
    for (dim_t stride : {1, 2})
        for (dim_t width : {9, 40})  // 9: src rows in pairs (w phases of at most 16 pixels)
            for (amx_backend backend : {amx_backend::emulated, amx_backend::native}) {
                if (backend == amx_backend::native && !native_usable(amx_dot::bf16)) continue;
                conv_case c;
                c.dir = conv_direction::bwd_data, c.bias = true;
                c.mb = 2, c.icg = 20, c.ocg = 18;
                c.i[1] = 6, c.k[1] = 5, c.dl[1] = 3, c.pb[1] = c.pe[1] = 4, c.s[1] = stride;
                c.i[2] = width, c.k[2] = 4, c.dl[2] = 2, c.pb[2] = c.pe[2] = 2, c.s[2] = stride;
                const conv_problem p = make_problem(c);
                ASSERT_EQ(plan_bwd_data(p, backend).hpair, width == 9) << describe(c);
                check_case(c, backend, 91, true);
                if (HasFatalFailure()) return;
                std::mt19937_64 rng(12);
                inputs in = make_inputs(p, rng, true);
                in.wei.set(0, INFINITY);  // oc 0, ic 0, tap (0, 0): reads rows 4 + i_h on
                const auto k = make_conv_kernel(p, backend);
                const buffer got = run(p, in, k.get()), want = run(p, in, nullptr);
                for (dim_t o : output_offsets(p)) {
                    ASSERT_TRUE(std::isfinite(want.get(o))) << describe(c) << " at " << o;
                    ASSERT_EQ(got.get(o), want.get(o)) << describe(c) << " at " << o;
                }
                ++ran;
            }
    std::printf("[ amx conv ] bwd_data margin taps left out: %d cases exact\n", ran);
}

// An infinite weight at a tap that reads padding for some outputs: the reference leaves padded
// taps out, so those outputs stay finite and the others are infinite, never NaN; the gathers
// (fwd, bwd_data) give the same, on every row order.
TEST(AmxConv, InfiniteWeightAtAPaddedTapIsLeftOut) {
    int ran = 0;
    for (conv_direction dir : {conv_direction::fwd, conv_direction::bwd_data})
        for (dim_t width : {9, 40})
            for (amx_backend backend : {amx_backend::emulated, amx_backend::native}) {
                if (backend == amx_backend::native && !native_usable(amx_dot::bf16)) continue;
                conv_case c;
                c.dir = dir, c.mb = 1, c.icg = 6, c.ocg = 4;
                c.i[1] = 5, c.i[2] = width, c.k[1] = c.k[2] = 3;
                c.pb[1] = c.pb[2] = c.pe[1] = c.pe[2] = 1;
                const conv_problem p = make_problem(c);
                std::mt19937_64 rng(13);
                inputs in = make_inputs(p, rng, true);
                for (buffer *b : {&in.src, &in.dst})  // no zeros: inf * x is never NaN
                    for (dim_t x = 0; x < b->count(); ++x) b->set(x, 1 + x % 3);
                in.wei.set(0, INFINITY);  // oc 0, ic 0, tap (0, 0)
                const auto k = make_conv_kernel(p, backend);
                const buffer got = run(p, in, k.get()), want = run(p, in, nullptr);
                int finite = 0;
                for (dim_t o : output_offsets(p)) {
                    ASSERT_FALSE(std::isnan(want.get(o))) << describe(c) << " at " << o;
                    finite += std::isfinite(want.get(o));
                    ASSERT_EQ(got.get(o), want.get(o))
                        << describe(c) << " at " << o << " (" << k->describe() << ")";
                }
                ASSERT_GT(finite, 0) << describe(c);
                ++ran;
            }
    std::printf("[ amx conv ] infinite weight at a padded tap: %d cases exact\n", ran);
}

TEST(AmxConv, DeclinesWithReasons) {
    conv_case c;
    c.icg = c.ocg = 4, c.i[1] = c.i[2] = 4;
    conv_problem p = make_problem(c);
    EXPECT_EQ(why_not_conv(p, amx_backend::emulated), "");
    p.math_dt = data_type::f32;  // as resolve_op leaves a bf16 op: still bf16 products
    EXPECT_EQ(why_not_conv(p, amx_backend::emulated), "");
    p.dt = p.math_dt = data_type::f32;
    EXPECT_NE(why_not_conv(p, amx_backend::emulated).find("needs bf16 or f16"), std::string::npos);
    EXPECT_THROW(make_conv_kernel(p, amx_backend::emulated), convgrad::error);
    p = make_problem(c);
    p.dir = conv_direction::fwd;
    EXPECT_EQ(why_not_conv(p, amx_backend::emulated), "");
    p.dir = conv_direction::bwd_data;
    EXPECT_EQ(why_not_conv(p, amx_backend::emulated), "");
    p = make_problem(c);
    if (!native_usable(amx_dot::bf16)) {
        EXPECT_EQ(why_not_conv(p, amx_backend::native),
                  std::string("AMX not granted: ") + native_unusable_reason(amx_dot::bf16));
    }
    // Pads so large against a one-pixel image that the padded copy would pass the scratch
    // bound the API checks up front: the dispatch test declines, naming the scratch.
    conv_case big = c;
    big.dir = conv_direction::fwd;
    big.i[1] = big.i[2] = 1, big.k[1] = big.k[2] = 1, big.s[1] = big.s[2] = 40;
    big.pb[1] = big.pb[2] = big.pe[1] = big.pe[2] = 40;
    EXPECT_NE(why_not_dispatch(make_problem(big), amx_backend::emulated).find("scratch"),
              std::string::npos);
    EXPECT_EQ(why_not_dispatch(make_problem(c), amx_backend::emulated), "");
    // The dispatch-row functions: the native one adds the grant and the tile fill estimate,
    // the emulated one builds. 32 channels fill the tiles; 4 fill 1/16 of their columns.
    const std::string grant =
        native_usable(amx_dot::bf16)
            ? std::string()
            : std::string("AMX not granted: ") + native_unusable_reason(amx_dot::bf16);
    EXPECT_EQ(cannot_conv(make_problem(c)), "");
    conv_case wide = c;
    wide.icg = wide.ocg = 32, wide.i[1] = wide.i[2] = 16;
    for (conv_direction dir : dirs) {
        wide.dir = dir;
        EXPECT_EQ(why_not_native(make_problem(wide)), grant) << to_string(dir);
    }
    if (grant.empty())
        EXPECT_NE(why_not_native(make_problem(c)).find("% full"), std::string::npos);
    else
        EXPECT_EQ(why_not_native(make_problem(c)), grant);
    EXPECT_NE(create_emulated(make_problem(c)), nullptr);
    if (!native_usable(amx_dot::bf16)) {
        EXPECT_THROW(create_native(make_problem(c)), convgrad::error);
    }
}

}  // namespace
}  // namespace convgrad::detail::amx
