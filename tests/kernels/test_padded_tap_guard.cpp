// An infinite weight at a tap that reads padding (or, for the weight gradient, an infinite
// diff_dst value whose window reads padding): the reference leaves that tap out where it reads
// padding, so those outputs are finite and the others infinite, never NaN. Every row that
// dispatch hands such a problem to (each preferred in turn, CONVGRAD_PREFER) gives the
// reference's result: the rows that multiply padding as zeros do so behind the weights check
// of dispatch/padded_tap_guard.hpp. The check itself: it finds a non-finite weight of every
// type at any position of strided weights. The problems: 3x3 windows with padding, and one
// window over the whole padded input (a matrix product: the gemm rows copy src with zeros).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <random>
#include <set>
#include <string>

#include "dispatch/padded_tap_guard.hpp"
#include "dispatch/registry.hpp"
#include "util/conv_case.hpp"

namespace convgrad::detail {
namespace {

using namespace testcase;

struct prefer_env {  // CONVGRAD_PREFER for the scope
    explicit prefer_env(const char *name) { setenv("CONVGRAD_PREFER", name, 1); }
    ~prefer_env() { unsetenv("CONVGRAD_PREFER"); }
};

TEST(PaddedTapGuard, InfinityAtAPaddedTapMatchesTheReferenceOnEveryRow) {
    int ran = 0;
    std::set<std::string> rows_seen, rows_expected;
    for (conv_direction dir :
         {conv_direction::fwd, conv_direction::bwd_data, conv_direction::bwd_weights})
        for (data_type dt : {data_type::f32, data_type::bf16})
            for (dim_t channels : {4, 24})
                for (bool whole : {false, true}) {
                    conv_case c;
                    c.dir = dir, c.dt = c.math = dt, c.mb = 2, c.icg = channels,
                    c.ocg = channels - 2;
                    if (whole) {  // a matrix product: one window, the padded input (the gemm rows)
                        c.i[1] = 1, c.i[2] = 4, c.k[1] = 1, c.k[2] = 6;
                        c.pb[2] = c.pe[2] = 1;
                    } else {
                        c.i[1] = 6, c.i[2] = 20, c.k[1] = c.k[2] = 3;
                        c.pb[1] = c.pb[2] = c.pe[1] = c.pe[2] = 1;
                    }
                    const conv_problem p = make_problem(c);
                    ASSERT_TRUE(p.reads_padding());
                    std::mt19937_64 rng(5);
                    inputs in = make_inputs(p, rng, true);
                    for (buffer *b : {&in.src, &in.dst})  // no zeros: inf * x is never NaN
                        for (dim_t x = 0; x < b->count(); ++x) b->set(x, 1 + x % 3);
                    // (bwd_weights: diff_dst's first pixel, whose window reads padding)
                    (dir == conv_direction::bwd_weights ? in.dst : in.wei).set(0, INFINITY);
                    const buffer want = run(p, in, nullptr);
                    int finite = 0;
                    for (dim_t o : output_offsets(p)) {
                        ASSERT_FALSE(std::isnan(want.get(o)));
                        finite += std::isfinite(want.get(o));
                    }
                    ASSERT_GT(finite, 0);
                    for (const impl_desc &row : kernel_inventory()) {
                        const std::string name = row.name;
                        if (whole &&
                            (name == "gemm:avx512" || name == "gemm_bf16dot:avx512_bf16" ||
                             name == "amx_gemm:amx") &&
                            row.cannot(p).empty() && effective_features().contains(row.needs()) &&
                            (!row.cannot_natively || row.cannot_natively(p).empty()))
                            rows_expected.insert(name);
                        const prefer_env env(row.name);
                        const dispatch_result d = dispatch(p, effective_features(), false);
                        if (d.impl != &row) continue;  // not here, or not this problem
                        const buffer got = run(p, in, d.k.get());
                        for (dim_t o : output_offsets(p))
                            ASSERT_EQ(got.get(o), want.get(o))
                                << row.name << " " << describe(c) << " at " << o;
                        ++ran;
                        rows_seen.insert(row.name);
                    }
                }
    std::printf("[ padded tap guard ] %d (row, problem) pairs as the reference\n", ran);
    // The matrix-product rows took the whole-window problems where they run natively.
    for (const std::string &r : rows_expected) EXPECT_EQ(rows_seen.count(r), 1u) << r;
    ASSERT_GT(ran, 8);
}

TEST(PaddedTapGuard, FindsANonFiniteWeightAnywhere) {
    for (data_type dt : {data_type::f32, data_type::bf16, data_type::f16})
        for (bool xio : {false, true}) {
            conv_case c;
            c.dt = c.math = dt, c.xio = xio, c.icg = 5, c.ocg = 3, c.g = 2, c.pad = 3;
            c.i[1] = c.i[2] = 4, c.k[1] = 2, c.k[2] = 3;
            const conv_problem p = make_problem(c);
            std::mt19937_64 rng(6);
            inputs in = make_inputs(p, rng, false);
            ASSERT_TRUE(weights_all_finite(p, in.wei.bytes.data())) << describe(c);
            int checked = 0;
            for (dim_t g = 0; g < p.g; ++g)
                for (dim_t oc = 0; oc < p.ocg; ++oc)
                    for (dim_t ic = 0; ic < p.icg; ++ic)
                        for (dim_t kh = 0; kh < p.k[1]; ++kh)
                            for (dim_t kw = 0; kw < p.k[2]; ++kw) {
                                const dim_t x = (g * p.ocg + oc) * p.wei.oc + ic * p.wei.ic +
                                                kh * p.wei.sp[1] + kw * p.wei.sp[2];
                                const float keep = float(in.wei.get(x));
                                for (float bad : {INFINITY, -INFINITY, NAN}) {
                                    in.wei.set(x, bad);
                                    ASSERT_FALSE(weights_all_finite(p, in.wei.bytes.data()))
                                        << describe(c) << " at " << x << " = " << bad;
                                }
                                in.wei.set(x, keep);
                                ++checked;
                            }
            ASSERT_EQ(checked, p.g * p.ocg * p.icg * p.ksp());
        }
}

// The border of diff_dst is the positions whose windows read padding, per axis: an infinity
// there is found, one inside is not (strides 1 and 2, pads 1 and 2, NXC and NCX, whose border
// is checked channel by channel).
TEST(PaddedTapGuard, FindsAnInfiniteDiffDstOnTheBorderOnly) {
    for (dim_t s : {1, 2})
        for (dim_t pad : {1, 2})
            for (bool ncx : {false, true}) {
                conv_case c;
                c.dir = conv_direction::bwd_weights, c.dt = c.math = data_type::f32, c.ncx = ncx;
                c.mb = 2, c.icg = 3, c.ocg = 5, c.i[1] = 9, c.i[2] = 11, c.k[1] = c.k[2] = 3;
                c.s[1] = c.s[2] = s, c.pb[1] = c.pb[2] = c.pe[1] = c.pe[2] = pad;
                const conv_problem p = make_problem(c);
                std::mt19937_64 rng(7);
                inputs in = make_inputs(p, rng, true);
                ASSERT_TRUE(border_diff_dst_finite(p, in.dst.bytes.data()));
                int border = 0;
                for (dim_t n = 0; n < p.mb; ++n)
                    for (dim_t oh = 0; oh < p.o[1]; ++oh)
                        for (dim_t ow = 0; ow < p.o[2]; ++ow) {
                            auto outside = [&](int x, dim_t o) {
                                return o * p.s[x] - p.pb[x] < 0 ||
                                       o * p.s[x] - p.pb[x] + (p.k[x] - 1) * p.dl[x] >= p.i[x];
                            };
                            const bool on_border = outside(1, oh) || outside(2, ow);
                            border += on_border;
                            const dim_t x = n * p.dst.n + oh * p.dst.sp[1] + ow * p.dst.sp[2] +
                                            (n + oh + ow) % p.oc() * p.dst.c;  // every channel
                            const float keep = float(in.dst.get(x));
                            in.dst.set(x, INFINITY);
                            ASSERT_EQ(border_diff_dst_finite(p, in.dst.bytes.data()), !on_border)
                                << describe(c) << " at (" << n << ", " << oh << ", " << ow << ")";
                            in.dst.set(x, keep);
                        }
                ASSERT_GT(border, 0) << describe(c);
                ASSERT_LT(border, p.mb * p.o[1] * p.o[2]) << describe(c);
            }
}

}  // namespace
}  // namespace convgrad::detail
