// bf16/f16 through the optimized kernels: inputs widened exactly, each output rounded once to
// nearest-even, overflow to infinity and NaN kept, on every instruction set (the vectorized
// conversions of the packing code and their scalar tails). Sums of two values are exact in f32,
// so the result must equal the reference's (double, rounded once) bit for bit.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "core/resolve.hpp"
#include "util/kernel_check.hpp"
#include "util/tensor_buffer.hpp"

namespace convgrad {
namespace {

using testing::tensor_buffer;

// Two layers whose outputs each add two inputs (weights 1) of values that need rounding, with
// NaN, Inf and (f16) overflowing pairs among them:
// - 37 groups of 2 input channels -> 1 output channel each, a 1x1 kernel: out = x0 + x1;
// - depthwise over 80 channels, a kernel of 2 along w: out = x[w] + x[w + 1]. The depthwise
//   kernel's bf16 blocks of 32 channels split and merge the lanes by parity (dw_split_block,
//   vt::store_bf16_merge, which rounds in the 32-bit lanes), and 80 channels are two such
//   blocks and one plain vector.
TEST(LowPrecision, RoundingOverflowAndNaNMatchTheReference) {
    struct layer {
        const char *what;
        dim_t g, icg, kw;
        const char *kernel_prefix;  // the best kernel's family ("" : any but the reference)
    };
    const layer layers[] = {{"pairs of channels", 37, 2, 1, ""},
                            {"depthwise, 2 taps", 80, 1, 2, "depthwise:"}};
    for (const layer &L : layers)
        for (data_type dt : {data_type::bf16, data_type::f16}) {
            const dim_t g = L.g, mb = 3, w = 9, ow = w - L.kw + 1;
            op o(3, op_kind::Convolution, "sum_pairs");
            o.set_attr("strides", dims{1})
                .set_attr("pads_begin", dims{0})
                .set_attr("pads_end", dims{0});
            o.set_attr("dilations", dims{1}).set_attr("groups", g);
            o.add_input(logical_tensor(0, dt, {mb, w, L.icg * g}))
                .add_input(logical_tensor(1, dt, {L.kw, L.icg, g}));
            o.add_output(logical_tensor::unknown(2, dt));
            const compiled_partition best = compile_op(o),
                                     ref = compile_op(o, impl_choice::reference);
            const std::string what = std::string(L.what) + " " + to_string(dt);
            ASSERT_NE(best.kernel_name(), "ref:any") << what;
            // The family asked for, unless no row of it runs here (an ISA cap: generic).
            if (best.kernel_name().rfind(L.kernel_prefix, 0) != 0) {
                const detail::resolved_op r = detail::resolve_op(o, o.inputs(), o.outputs());
                for (const detail::impl_desc &row : detail::kernel_inventory()) {
                    if (std::string(row.name).rfind(L.kernel_prefix, 0) != 0) continue;
                    EXPECT_FALSE(detail::effective_features().contains(row.needs()) &&
                                 row.cannot(r.prob).empty())
                        << what << ": " << row.name << " runs here, " << best.kernel_name()
                        << " was chosen";
                }
            }

            tensor_buffer x(best.inputs()[0]), wt(best.inputs()[1]);
            std::mt19937_64 rng(dt == data_type::bf16 ? 5 : 6);
            std::uniform_real_distribution<double> mant(1.0, 2.0);
            std::uniform_int_distribution<int> ex(-6, 6), sign(0, 1);
            for (dim_t i = 0; i < x.count(); ++i) {
                double v = mant(rng) * std::ldexp(1.0, ex(rng)) * (sign(rng) ? -1 : 1);
                if (i % 97 == 5) v = std::nan("");
                if (i % 89 == 7) v = INFINITY;
                if (dt == data_type::f16 && i % 83 == 11) v = 60000.0;  // pairs overflow f16
                x.set(i, v);                                            // rounds to dt
            }
            for (dim_t i = 0; i < wt.count(); ++i) wt.set(i, 1.0);
            tensor_buffer got(best.outputs()[0]), want(ref.outputs()[0]);
            best.execute({x.as_tensor(), wt.as_tensor()}, {got.as_tensor()});
            ref.execute({x.as_tensor(), wt.as_tensor()}, {want.as_tensor()});
            int rounded = 0, nans = 0;
            for (dim_t i = 0; i < got.count(); ++i) {
                const double a = got.get(i), b = want.get(i);
                if (std::isnan(b)) {
                    EXPECT_TRUE(std::isnan(a)) << what << " element " << i;
                    ++nans;
                } else {
                    EXPECT_EQ(a, b) << what << " element " << i;
                }
                // Output (n, q, c) adds the two inputs of its window: channels 2c and 2c + 1 of
                // pixel q, or channel c of pixels q and q + 1.
                const dim_t c = i % g, q = (i / g) % ow, n = i / (g * ow);
                const dim_t x0 = (n * w + q) * L.icg * g + L.icg * c,
                            x1 = L.icg == 2 ? x0 + 1 : x0 + g;
                const double exact = x.get(x0) + x.get(x1);
                rounded += std::isfinite(exact) && exact != b;
            }
            EXPECT_GT(rounded, 10) << what << ": the data must exercise rounding";
            EXPECT_GT(nans, 0) << what << ": the data must hold NaN";
        }
}

// Values m * 2^e, m in [1, 2) rounded to dt, |e| <= 4, either sign: sums of three stay exact
// in f32 (bf16 and f16 alike), so only the one rounding of the result can differ.
void fill_rounding_values(testing::tensor_buffer &t, std::mt19937_64 &rng) {
    std::uniform_real_distribution<double> mant(1.0, 2.0);
    std::uniform_int_distribution<int> ex(-4, 4), sign(0, 1);
    for (dim_t i = 0; i < t.count(); ++i)
        t.set(i, mant(rng) * std::ldexp(1.0, ex(rng)) * (sign(rng) ? -1 : 1));
}
// Integers in [-120, 120] (exact in bf16 and f16): sums of a few thousand stay exact in f32
// and need more bits than bf16 or f16 have.
void fill_wide_integers(testing::tensor_buffer &t, std::mt19937_64 &rng) {
    std::uniform_int_distribution<int> v(-120, 120);
    for (dim_t i = 0; i < t.count(); ++i) t.set(i, v(rng));
}

// One 2-D NXC problem for check_rounded_output: the canonical convolution's channels per group
// (`red` on the side the op reduces, `out` on its output's side), kernel, padding and stride,
// the big and small spatial sizes, the fill of the data, and the groups.
struct rounding_geometry {
    dim_t red, out, k, pad, stride;
    dims big, small;
    void (*fill)(testing::tensor_buffer &, std::mt19937_64 &);
    dim_t groups = 1;
    bool bias = true;
};

// Runs `row` on the op of `kind` in `dt` over geometry `g` (weights +-1; a bias unless `g` has
// none), expects the reference's values bit for bit, and expects the plan to round the output
// in place and the data to make that rounding matter (the same op in f32, whose sums are
// exact, differs).
void check_rounded_output(const detail::impl_desc &row, testing::create_fn create, op_kind kind,
                          data_type dt, const rounding_geometry &g) {
    const bool out_is_src =
        kind == op_kind::ConvolutionBackwardData || kind == op_kind::ConvTranspose;
    const dim_t ic = out_is_src ? g.out : g.red, oc = out_is_src ? g.red : g.out, mb = 2;
    const bool ct = is_conv_transpose_family(kind);
    auto build = [&](data_type t) {
        op o(1, kind, "rounded_in_kernel");
        o.set_attr("strides", dims{g.stride, g.stride}).set_attr("dilations", dims{1, 1});
        o.set_attr("pads_begin", dims{g.pad, g.pad}).set_attr("pads_end", dims{g.pad, g.pad});
        o.set_attr("groups", g.groups).set_attr("data_format", std::string("NXC"));
        o.set_attr("weights_format", std::string(ct ? "XOI" : "XIO"));
        const dim_t G = g.groups;
        const testing::conv_shapes sh{{mb, g.big[0], g.big[1], G * ic},
                                      {mb, g.small[0], g.small[1], G * oc},
                                      {g.k, g.k, ic, G * oc},
                                      {0, 0},
                                      G * ic,
                                      G * oc};
        testing::add_conv_tensors(o, kind, sh, g.bias, t, [&](size_t id, const dims &d) {
            return logical_tensor(id, t, d);
        });
        return o;
    };
    const op o = build(dt), o32 = build(data_type::f32);
    const detail::resolved_op r = detail::resolve_op(o, o.inputs(), o.outputs());
    const detail::resolved_op r32 = detail::resolve_op(o32, o32.inputs(), o32.outputs());
    const std::string what =
        std::string(row.name) + " " + to_string(kind) + " " + to_string(dt) + " " + r.prob.desc();
    ASSERT_EQ(row.serves(r.prob), "") << what;
    ASSERT_EQ(row.cannot(r.prob), "") << what;
    ASSERT_NE(create(r.prob)->describe().find("rounded in place"), std::string::npos)
        << what << ": the output is not rounded in place";
    std::mt19937_64 rng(uint64_t(kind) * 7 + uint64_t(dt));
    std::vector<testing::tensor_buffer> in, in32;
    for (size_t i = 0; i < r.inputs.size(); ++i) {
        in.emplace_back(r.inputs[i]);
        g.fill(in.back(), rng);
        if (int(i) == r.wei_input)
            for (dim_t e = 0; e < in.back().count(); ++e)
                in.back().set(e, (e * 5 + 1) % 3 == 0 ? -1 : 1);
        in32.emplace_back(r32.inputs[i]);
        for (dim_t e = 0; e < in.back().count(); ++e) in32.back().set(e, in.back().get(e));
    }
    testing::tensor_buffer got(r.outputs[0]), want(r.outputs[0]), exact(r32.outputs[0]);
    testing::run_poisoned(r, create, in, got);
    testing::run_poisoned(r, detail::reference_impl().create, in, want);
    testing::run_poisoned(r32, detail::reference_impl().create, in32, exact);
    dim_t rounded = 0, bad = 0;
    for (dim_t i = 0; i < got.count(); ++i) {
        bad += got.get(i) != want.get(i);
        rounded += exact.get(i) != want.get(i);  // the f32 sums are exact
    }
    EXPECT_EQ(bad, 0) << what << ": values differ from the reference";
    EXPECT_GT(rounded, got.count() / 8) << what << ": the data must exercise rounding";
}

// The direct kernel writes a bf16/f16 output in place, each value rounded once from the f32
// sum (direct_plan::out_rounded_in_kernel), on every `direct_brgemm` row that runs here, for
// the four ops whose output is a data tensor:
// - by the microkernel: 2 channels reduced (sums of three with the bias: exact in f32), 37
//   output channels (a tail on every vector width), stride 2 and a 1x1 kernel, so the data
//   gradients have src pixels no tap reaches (written all the same: zero, or the bias alone);
// - from the gather's f32 tiles: 2100 channels reduced by a 1x1 kernel, 70 output channels,
//   whose weights panel (2100 x 64 lanes of f32, 525 KiB) exceeds the whole-K budget (an eighth
//   of L2) while chunks of 32 channels or more fit L1, so K runs in chunks; and 160 channels x
//   3x3 taps, whose chunks would not fit L1, so the gather keeps all of K in one chunk.
// And the grouped kernel's register tiles (`grouped_lanes`), rounded in place the same way: 37
// groups of 2 channels (74 lanes: a tail on every vector width), stride 2, a 1x1 kernel. And
// the GEMM kernel's C (no bias: a bias keeps its f32 block), 1x1 at stride 1: 2 channels
// reduced (one K block, rounded by the microkernel straight away), and 1000 (K blocks summed
// in the f32 block, the last one's microkernel rounding into the user's tensor).
TEST(LowPrecision, OptimizedKernelsRoundTheirOutputOnce) {
    const rounding_geometry in_ukernel{2, 37, 1, 0, 2, {7, 9}, {4, 5}, fill_rounding_values};
    const rounding_geometry k_chunks{2100, 70, 1, 0, 1, {6, 7}, {6, 7}, fill_wide_integers};
    const rounding_geometry whole_k_3x3{160, 70, 3, 1, 1, {6, 7}, {6, 7}, fill_wide_integers};
    const rounding_geometry grouped{2, 2, 1, 0, 2, {7, 9}, {4, 5}, fill_rounding_values, 37};
    const rounding_geometry gemm_one_block{2, 37,   1, 0, 1, {7, 9}, {7, 9}, fill_rounding_values,
                                           1, false};
    // (Pixels enough for 2 blocks of rows per thread: fewer would split K over the threads.)
    const rounding_geometry gemm_k_blocks{1000, 40,   1, 0, 1, {9, 16}, {9, 16}, fill_wide_integers,
                                          1,    false};
    int rows_ran = 0;
    for (const detail::impl_desc &row : detail::kernel_inventory()) {
        const std::string name = row.name;
        std::vector<rounding_geometry> geometries;
        if (name.rfind("direct_brgemm:", 0) == 0) geometries = {in_ukernel, k_chunks, whole_k_3x3};
        if (name.rfind("grouped_lanes:", 0) == 0) geometries = {grouped};
        if (name.rfind("gemm:", 0) == 0) geometries = {gemm_one_block, gemm_k_blocks};
        if (geometries.empty()) continue;
        const testing::row_mode m = testing::how_to_run(row);
        if (!m.create) continue;
        ++rows_ran;
        for (data_type dt : {data_type::bf16, data_type::f16})
            for (op_kind kind : {op_kind::Convolution, op_kind::ConvolutionBackwardData,
                                 op_kind::ConvTranspose, op_kind::ConvTransposeBackwardData})
                for (const rounding_geometry &g : geometries)
                    check_rounded_output(row, m.create, kind, dt, g);
    }
    if (rows_ran == 0) GTEST_SKIP() << "no direct_brgemm, grouped_lanes or gemm row runs here";
}

}  // namespace
}  // namespace convgrad
