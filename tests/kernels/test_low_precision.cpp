// bf16/f16 through the optimized kernels: inputs widened exactly, each output rounded once to
// nearest-even, overflow to infinity and NaN kept, on every instruction set (the vectorized
// conversions of the packing code and their scalar tails). Sums of two values are exact in f32,
// so the result must equal the reference's (double, rounded once) bit for bit.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "util/tensor_buffer.hpp"

namespace convgrad {
namespace {

using testing::tensor_buffer;

TEST(LowPrecision, RoundingOverflowAndNaNMatchTheReference) {
    for (data_type dt : {data_type::bf16, data_type::f16}) {
        // 37 groups of 2 input channels -> 1 output channel each, weights 1: out = x0 + x1.
        const dim_t g = 37, mb = 3, w = 9;
        op o(3, op_kind::Convolution, "sum_pairs");
        o.set_attr("strides", dims{1}).set_attr("pads_begin", dims{0}).set_attr("pads_end", dims{0});
        o.set_attr("dilations", dims{1}).set_attr("groups", g);
        o.add_input(logical_tensor(0, dt, {mb, w, 2 * g})).add_input(logical_tensor(1, dt, {1, 2, g}));
        o.add_output(logical_tensor::unknown(2, dt));
        const compiled_partition best = compile_op(o), ref = compile_op(o, impl_choice::reference);
        ASSERT_NE(best.kernel_name(), "ref:any");

        tensor_buffer x(best.inputs()[0]), wt(best.inputs()[1]);
        std::mt19937_64 rng(dt == data_type::bf16 ? 5 : 6);
        std::uniform_real_distribution<double> mant(1.0, 2.0);
        std::uniform_int_distribution<int> ex(-6, 6), sign(0, 1);
        for (dim_t i = 0; i < x.count(); ++i) {
            double v = mant(rng) * std::ldexp(1.0, ex(rng)) * (sign(rng) ? -1 : 1);
            if (i % 97 == 5) v = std::nan("");
            if (i % 89 == 7) v = INFINITY;
            if (dt == data_type::f16 && i % 83 == 11) v = 60000.0;  // pairs overflow f16
            x.set(i, v);  // rounds to dt
        }
        for (dim_t i = 0; i < wt.count(); ++i) wt.set(i, 1.0);
        tensor_buffer got(best.outputs()[0]), want(ref.outputs()[0]);
        best.execute({x.as_tensor(), wt.as_tensor()}, {got.as_tensor()});
        ref.execute({x.as_tensor(), wt.as_tensor()}, {want.as_tensor()});
        int rounded = 0;
        for (dim_t i = 0; i < got.count(); ++i) {
            const double a = got.get(i), b = want.get(i);
            if (std::isnan(b)) {
                EXPECT_TRUE(std::isnan(a)) << to_string(dt) << " element " << i;
            } else {
                EXPECT_EQ(a, b) << to_string(dt) << " element " << i;
            }
            const double exact = x.get((i / g) * 2 * g + 2 * (i % g)) + x.get((i / g) * 2 * g + 2 * (i % g) + 1);
            rounded += std::isfinite(exact) && exact != b;
        }
        EXPECT_GT(rounded, 10) << "the data must exercise rounding";
    }
}

}  // namespace
}  // namespace convgrad
