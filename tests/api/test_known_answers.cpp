// Known answers for the six ops, worked out by hand (the arithmetic is in the comments), and
// the behaviour pinned by oneDNN's own tests and the probes of the reference document (§5,
// §11, §12): auto_pad pads, inferred shapes, legacy names and formats, shape precedence.
#include <gtest/gtest.h>

#include "util/conv_test_util.hpp"

namespace convgrad {
namespace {

using testing::make_conv_op;
using testing::run_op;
using testing::tensor_buffer;
using V = std::vector<double>;

constexpr data_type f32 = data_type::f32;

logical_tensor lt(size_t id, dims shape, data_type dt = f32) { return logical_tensor(id, dt, shape); }
logical_tensor unk(size_t id, data_type dt = f32) { return logical_tensor::unknown(id, dt); }

// ---------------------------------------------------------------------------------------------
// Convolution

TEST(KnownAnswers, Convolution2DStride2) {
    // src [1,1,4,4] = 0..15 row-major, w [1,1,2,2] = {1,2,3,4}, s 2, no pads -> 2x2.
    // (0,0): 1*0 + 2*1 + 3*4 + 4*5 = 34; x step adds 2 per tap * (1+2+3+4) = 20 -> 54;
    // y step adds 8*10 = 80 -> 114, 134.
    op o = make_conv_op(op_kind::Convolution, {2, 2}, {0, 0}, {0, 0}, {1, 1});
    o.add_input(lt(0, {1, 1, 4, 4})).add_input(lt(1, {1, 1, 2, 2})).add_output(unk(2));
    V src(16);
    for (int i = 0; i < 16; ++i) src[size_t(i)] = i;
    auto r = run_op(o, {src, {1, 2, 3, 4}});
    EXPECT_EQ(r.shape, (dims{1, 1, 2, 2}));
    EXPECT_EQ(r.values, (V{34, 54, 114, 134}));
}

TEST(KnownAnswers, Convolution1DDilationStrideLargerThanKernelAsymmetricPads) {
    // src [1,1,7] = 1..7, w {1,10}, K 2, dilation 2 (Ke 3), stride 3, pads 2/0:
    // O = (7+2+0-3)/3+1 = 3; i = 3o + 2k - 2.
    // o0: k0 i=-2 (0), k1 i=0 -> 10*1 = 10; o1: i=1 -> 2, i=3 -> 40: 42; o2: i=4 -> 5, i=6 -> 70: 75.
    op o = make_conv_op(op_kind::Convolution, {3}, {2}, {0}, {2});
    o.add_input(lt(0, {1, 1, 7})).add_input(lt(1, {1, 1, 2})).add_output(unk(2));
    auto r = run_op(o, {{1, 2, 3, 4, 5, 6, 7}, {1, 10}});
    EXPECT_EQ(r.shape, (dims{1, 1, 3}));
    EXPECT_EQ(r.values, (V{10, 42, 75}));
}

TEST(KnownAnswers, ConvolutionGroupsWithBias) {
    // groups 2, 1x1 kernels: ch0 = 2*src ch0 + 10, ch1 = -1*src ch1 + 20.
    op o = make_conv_op(op_kind::Convolution, {1, 1}, {0, 0}, {0, 0}, {1, 1});
    o.set_attr("groups", int64_t(2));
    o.add_input(lt(0, {1, 2, 2, 2})).add_input(lt(1, {2, 1, 1, 1})).add_input(lt(2, {2}));
    o.add_output(unk(3));
    auto r = run_op(o, {{1, 2, 3, 4, 5, 6, 7, 8}, {2, -1}, {10, 20}});
    EXPECT_EQ(r.shape, (dims{1, 2, 2, 2}));
    EXPECT_EQ(r.values, (V{12, 14, 16, 18, 15, 14, 13, 12}));
}

TEST(KnownAnswers, ConvolutionNxcXioGroupsMixInsideGroupOnly) {
    // NXC [1,1,1,4] (channels 1,2,3,4), groups 2, XIO [1,1,2,2]: w[ic_g][oc].
    // oc0 (group 0) = 1*c0 + 10*c1 = 21; oc1 = 100*c2 + 1000*c3 = 4300 (group 1 reads c2,c3).
    // XIO layout [kh,kw,icg,oc]: values icg0: oc0=1, oc1=100; icg1: oc0=10, oc1=1000.
    op o = make_conv_op(op_kind::Convolution, {1, 1}, {0, 0}, {0, 0}, {1, 1}, false);
    o.set_attr("groups", int64_t(2));
    o.add_input(lt(0, {1, 1, 1, 4})).add_input(lt(1, {1, 1, 2, 2})).add_output(unk(2));
    auto r = run_op(o, {{1, 2, 3, 4}, {1, 100, 10, 1000}});
    EXPECT_EQ(r.shape, (dims{1, 1, 1, 2}));
    EXPECT_EQ(r.values, (V{21, 4300}));
}

TEST(KnownAnswers, ConvolutionKernelLargerThanStrideTruncates) {
    // I 2, K 3, s 2, pads 0/1: padded 3 -> O = (3-3)/2+1 = 1; w {1,1,1}: 1+2+0 = 3.
    op o = make_conv_op(op_kind::Convolution, {2}, {0}, {1}, {1});
    o.add_input(lt(0, {1, 1, 2})).add_input(lt(1, {1, 1, 3})).add_output(unk(2));
    auto r = run_op(o, {{1, 2}, {1, 1, 1}});
    EXPECT_EQ(r.shape, (dims{1, 1, 1}));
    EXPECT_EQ(r.values, (V{3}));
}

// ---------------------------------------------------------------------------------------------
// ConvolutionBackwardData

op cbd_1d(dims out_shape_or_empty) {
    // The adjoint of Convolution1DDilationStrideLargerThanKernelAsymmetricPads.
    op o = make_conv_op(op_kind::ConvolutionBackwardData, {3}, {2}, {0}, {2});
    o.add_input(lt(0, {1, 1, 3})).add_input(lt(1, {1, 1, 2}));
    o.add_output(out_shape_or_empty.empty() ? unk(2) : lt(2, out_shape_or_empty));
    return o;
}

TEST(KnownAnswers, ConvolutionBackwardData1D) {
    // diff_dst {1,2,3}, w {1,10}, i = 3o + 2k - 2:
    // o0: k1 -> i0 += 10; o1: k0 -> i1 += 2, k1 -> i3 += 20; o2: k0 -> i4 += 3, k1 -> i6 += 30.
    // Also <conv(x,w), y> = <x, this>: x = 1..7 gives 10+4+80+15+210 = 319 = 10+84+225.
    auto r = run_op(cbd_1d({1, 1, 7}), {{1, 2, 3}, {1, 10}});
    EXPECT_EQ(r.values, (V{10, 2, 0, 20, 3, 0, 30}));
    // Without a shape: X = s*(Y-1) + Ke - pb - pe + output_padding = 6 + 3 - 2 + 0 = 7.
    auto r2 = run_op(cbd_1d({}), {{1, 2, 3}, {1, 10}});
    EXPECT_EQ(r2.shape, (dims{1, 1, 7}));
    EXPECT_EQ(r2.values, r.values);
}

TEST(KnownAnswers, ConvolutionBackwardDataExtraRowsGetZero) {
    // Any X with (X + 2 - 3)/3 + 1 == 3 is a valid diff_src: X = 7, 8, 9. Rows beyond the
    // kernel's reach get 0 (the output starts filled with garbage).
    auto r8 = run_op(cbd_1d({1, 1, 8}), {{1, 2, 3}, {1, 10}});
    EXPECT_EQ(r8.values, (V{10, 2, 0, 20, 3, 0, 30, 0}));
    auto r9 = run_op(cbd_1d({1, 1, 9}), {{1, 2, 3}, {1, 10}});
    EXPECT_EQ(r9.values, (V{10, 2, 0, 20, 3, 0, 30, 0, 0}));
    // X = 10 gives (10-1)/3+1 = 4 != 3, and X = 6 gives 2.
    EXPECT_THROW(compile_op(cbd_1d({1, 1, 10})), error);
    EXPECT_THROW(compile_op(cbd_1d({1, 1, 6})), error);
    // output_padding 1 infers X = 8; output_padding 3 (>= stride) would infer 10: error.
    op o = cbd_1d({});
    o.set_attr("output_padding", dims{1});
    auto r = run_op(o, {{1, 2, 3}, {1, 10}});
    EXPECT_EQ(r.shape, (dims{1, 1, 8}));
    EXPECT_EQ(r.values, r8.values);
    o.set_attr("output_padding", dims{3});
    EXPECT_THROW(compile_op(o), error);
}

TEST(KnownAnswers, ConvolutionBackwardDataGrouped) {
    // Grouped ConvolutionBackwardData (oneDNN's backend cannot compile it): groups 2, IC 2,
    // OC 4, 1x1 kernel, OIX w = {1,10,100,1000}. diff_src c0 = 1*dd0 + 10*dd1,
    // c1 = 100*dd2 + 1000*dd3: dd0 {1,2}, dd1 {3,4}, dd2 {5,6}, dd3 {7,8}.
    op o = make_conv_op(op_kind::ConvolutionBackwardData, {1, 1}, {0, 0}, {0, 0}, {1, 1});
    o.set_attr("groups", int64_t(2));
    o.add_input(lt(0, {1, 4, 1, 2})).add_input(lt(1, {4, 1, 1, 1})).add_output(unk(2));
    auto r = run_op(o, {{1, 2, 3, 4, 5, 6, 7, 8}, {1, 10, 100, 1000}});
    EXPECT_EQ(r.shape, (dims{1, 2, 1, 2}));
    EXPECT_EQ(r.values, (V{31, 42, 7500, 8600}));
}

TEST(KnownAnswers, ConvolutionBackwardDataDepthwise2D) {
    // groups 2, one channel each, K 2x2, s 1, diff_src 3x3. ch0 w = [[1,0],[0,0]] puts dd0 at
    // the top left; ch1 w = [[0,0],[0,2]] puts 2*dd1 at the bottom right.
    op o = make_conv_op(op_kind::ConvolutionBackwardData, {1, 1}, {0, 0}, {0, 0}, {1, 1});
    o.set_attr("groups", int64_t(2));
    o.add_input(lt(0, {1, 2, 2, 2})).add_input(lt(1, {2, 1, 2, 2})).add_output(unk(2));
    auto r = run_op(o, {{1, 2, 3, 4, 5, 6, 7, 8}, {1, 0, 0, 0, 0, 0, 0, 2}});
    EXPECT_EQ(r.shape, (dims{1, 2, 3, 3}));
    EXPECT_EQ(r.values, (V{1, 2, 0, 3, 4, 0, 0, 0, 0, 0, 0, 0, 0, 10, 12, 0, 14, 16}));
}

// ---------------------------------------------------------------------------------------------
// ConvolutionBackwardWeights

TEST(KnownAnswers, ConvolutionBackwardWeights1D) {
    // src 1..7, diff_dst {1,2,3}, same attributes as above. dW[k] = sum_o dd[o]*src[3o+2k-2]:
    // k0: 2*2 + 3*5 = 19; k1: 1*1 + 2*4 + 3*7 = 30. <w, dW> = 19 + 300 = 319 again.
    op o = make_conv_op(op_kind::ConvolutionBackwardWeights, {3}, {2}, {0}, {2});
    o.set_attr("weights_shape", dims{1, 1, 2});
    o.add_input(lt(0, {1, 1, 7})).add_input(lt(1, {1, 1, 3})).add_output(unk(2));
    auto r = run_op(o, {{1, 2, 3, 4, 5, 6, 7}, {1, 2, 3}});
    EXPECT_EQ(r.shape, (dims{1, 1, 2}));
    EXPECT_EQ(r.values, (V{19, 30}));
}

TEST(KnownAnswers, ConvolutionBackwardWeightsGroupsAndBatch) {
    // groups 2, N 2, K 1x2: dW[c][kx] = sum_n dd[n][c] * src[n][c][kx].
    // c0: 1*{1,2} + 10*{5,6} = {51,62}; c1: 2*{3,4} + 20*{7,8} = {146,168}.
    op o = make_conv_op(op_kind::ConvolutionBackwardWeights, {1, 1}, {0, 0}, {0, 0}, {1, 1});
    o.set_attr("groups", int64_t(2));
    o.add_input(lt(0, {2, 2, 1, 2})).add_input(lt(1, {2, 2, 1, 1})).add_output(lt(2, {2, 1, 1, 2}));
    auto r = run_op(o, {{1, 2, 3, 4, 5, 6, 7, 8}, {1, 2, 10, 20}});
    EXPECT_EQ(r.values, (V{51, 62, 146, 168}));
}

TEST(KnownAnswers, ConvolutionBackwardWeightsZeroBatchGivesZeros) {
    op o = make_conv_op(op_kind::ConvolutionBackwardWeights, {1, 1}, {1, 1}, {1, 1}, {1, 1});
    o.set_attr("weights_shape", dims{3, 2, 3, 3});
    o.add_input(lt(0, {0, 2, 4, 4})).add_input(lt(1, {0, 3, 4, 4})).add_output(unk(2));
    auto r = run_op(o, {{}, {}}, impl_choice::best, 99);
    EXPECT_EQ(r.shape, (dims{3, 2, 3, 3}));
    EXPECT_EQ(r.values, V(54, 0.0));
    // The reference too.
    auto rr = run_op(o, {{}, {}}, impl_choice::reference, 99);
    EXPECT_EQ(rr.values, V(54, 0.0));
}

TEST(KnownAnswers, ZeroBatchForwardAndBackwardDataAreEmpty) {
    op c = make_conv_op(op_kind::Convolution, {1}, {0}, {0}, {1});
    c.add_input(lt(0, {0, 2, 5})).add_input(lt(1, {3, 2, 2})).add_output(unk(2));
    auto r = run_op(c, {{}, {}});
    EXPECT_EQ(r.shape, (dims{0, 3, 4}));
    op d = make_conv_op(op_kind::ConvolutionBackwardData, {1}, {0}, {0}, {1});
    d.add_input(lt(0, {0, 3, 4})).add_input(lt(1, {3, 2, 2})).add_output(unk(2));
    auto rd = run_op(d, {{}, {}});
    EXPECT_EQ(rd.shape, (dims{0, 2, 5}));
    op t = make_conv_op(op_kind::ConvTransposeBackwardWeights, {1}, {0}, {0}, {1});
    t.set_attr("weights_shape", dims{3, 2, 2});
    t.add_input(lt(0, {0, 3, 4})).add_input(lt(1, {0, 2, 5})).add_output(unk(2));
    auto rt = run_op(t, {{}, {}}, impl_choice::best, 7);
    EXPECT_EQ(rt.values, V(12, 0.0));
}

// ---------------------------------------------------------------------------------------------
// ConvTranspose

TEST(KnownAnswers, ConvTranspose1DOutputPaddingAndBias) {
    // src {1,2}, IOX {1,2,3}, s 2, output_padding 1: Y = 2*1 + 3 + 1 = 6.
    // x0 adds {1,2,3} at 0..2, x1 adds {2,4,6} at 2..4, y5 is reached by no tap: bias only.
    op o = make_conv_op(op_kind::ConvTranspose, {2}, {0}, {0}, {1});
    o.set_attr("output_padding", dims{1});
    o.add_input(lt(0, {1, 1, 2})).add_input(lt(1, {1, 1, 3})).add_input(lt(2, {1}));
    o.add_output(unk(3));
    auto r = run_op(o, {{1, 2}, {1, 2, 3}, {10}});
    EXPECT_EQ(r.shape, (dims{1, 1, 6}));
    EXPECT_EQ(r.values, (V{11, 12, 15, 14, 16, 10}));
}

TEST(KnownAnswers, ConvTranspose1DDilationAndPad) {
    // src {1,2}, IOX {1,10}, dl 3 (Ke 4), pads 1/0, s 1: Y = 1 + 4 - 1 = 4; y = x + 3k - 1.
    // (x0,k1) -> y2: 10; (x1,k0) -> y0: 2; (x1,k1) -> y3: 20; (x0,k0) -> y-1 dropped.
    op o = make_conv_op(op_kind::ConvTranspose, {1}, {1}, {0}, {3});
    o.add_input(lt(0, {1, 1, 2})).add_input(lt(1, {1, 1, 2})).add_output(unk(2));
    auto r = run_op(o, {{1, 2}, {1, 10}});
    EXPECT_EQ(r.shape, (dims{1, 1, 4}));
    EXPECT_EQ(r.values, (V{2, 0, 10, 20}));
}

TEST(KnownAnswers, ConvTransposeGroupedFromOneDnnTests) {
    // oneDNN test_convtranspose.cpp ConvtransposeWithGroups: src {1,2,3,4} [1,4,1,1], IOX
    // [4,4,1,1] alternating 1,0, groups 2 -> [1,8,1,1] {3,0,3,0,7,0,7,0}: IOX is
    // [IC, OC/G, K], so OC = 4*2 = 8 and each group sums its own two inputs (1+2, 3+4).
    V w(16);
    for (size_t i = 0; i < 16; ++i) w[i] = i % 2 == 0 ? 1 : 0;
    for (const char *fmt : {"IOX", "XOI", "OIX", "XIO"}) {
        SCOPED_TRACE(fmt);
        op o = make_conv_op(op_kind::ConvTranspose, {1, 1}, {0, 0}, {0, 0}, {1, 1});
        o.set_attr("groups", int64_t(2)).set_attr("weights_format", std::string(fmt));
        const auto perm = testing::weights_perm(op_kind::ConvTranspose, fmt, 4);
        o.add_input(lt(0, {1, 4, 1, 1}));
        o.add_input(lt(1, testing::permute_dims({4, 4, 1, 1}, perm)));
        o.add_output(unk(2));
        auto r = run_op(o, {{1, 2, 3, 4}, testing::permute_values({4, 4, 1, 1}, w, perm)});
        EXPECT_EQ(r.shape, (dims{1, 8, 1, 1}));
        EXPECT_EQ(r.values, (V{3, 0, 3, 0, 7, 0, 7, 0}));
    }
}

TEST(KnownAnswers, ConvTransposeLegacyWeightsFormats) {
    // Legacy ConvTranspose formats: OIX = [OC/G, IC, K], XIO = [K, IC, OC/G]. IC 2, OC 4,
    // groups 2 (OC/G 2), K 1: V[ic][ocg] = IOX {1,2, 3,4}; dst c = g*2+ocg, g = ic.
    // dst = {1*src0, 2*src0, 3*src1, 4*src1} with src {10, 100}.
    op o = make_conv_op(op_kind::ConvTranspose, {1}, {0}, {0}, {1});
    o.set_attr("groups", int64_t(2)).set_attr("weights_format", std::string("OIX"));
    // legacy OIX [OC/G=2, IC=2, 1]: [ocg][ic] = {V00, V10, V01, V11} = {1,3,2,4}
    o.add_input(lt(0, {1, 2, 1})).add_input(lt(1, {2, 2, 1})).add_output(unk(2));
    auto r = run_op(o, {{10, 100}, {1, 3, 2, 4}});
    EXPECT_EQ(r.values, (V{10, 20, 300, 400}));
    // legacy XIO [1, IC=2, OC/G=2]: [ic][ocg] = {1,2,3,4}
    op x = make_conv_op(op_kind::ConvTranspose, {1}, {0}, {0}, {1});
    x.set_attr("groups", int64_t(2)).set_attr("weights_format", std::string("XIO"));
    x.add_input(lt(0, {1, 2, 1})).add_input(lt(1, {1, 2, 2})).add_output(unk(2));
    auto r2 = run_op(x, {{10, 100}, {1, 2, 3, 4}});
    EXPECT_EQ(r2.values, r.values);
    // The alias filter_format is stored as weights_format.
    o.set_attr("filter_format", std::string("OIX"));
    EXPECT_EQ(std::get<std::string>(*o.find_attr("weights_format")), "OIX");
    EXPECT_EQ(o.find_attr("filter_format"), nullptr);
    EXPECT_EQ(run_op(o, {{10, 100}, {1, 3, 2, 4}}).values, r.values);
}

// ---------------------------------------------------------------------------------------------
// ConvTransposeBackwardData

TEST(KnownAnswers, ConvTransposeBackwardData1D) {
    // Adjoint of ConvTranspose1DOutputPaddingAndBias (no bias): dd = 1..6, V {1,2,3}, s 2:
    // X = (6-3)/2 + 1 = 2; dsrc[x] = sum_k dd[2x+k]*V[k]: 1+4+9 = 14, 3+8+15 = 26.
    // <convT(x), y> = {1,2,5,4,6,0}.{1..6} = 66 = 14*1 + 26*2.
    op o = make_conv_op(op_kind::ConvTransposeBackwardData, {2}, {0}, {0}, {1});
    o.add_input(lt(0, {1, 1, 6})).add_input(lt(1, {1, 1, 3})).add_output(unk(2));
    auto r = run_op(o, {{1, 2, 3, 4, 5, 6}, {1, 2, 3}});
    EXPECT_EQ(r.shape, (dims{1, 1, 2}));
    EXPECT_EQ(r.values, (V{14, 26}));
    // output_padding is accepted (range-checked) and changes nothing.
    o.set_attr("output_padding", dims{1});
    EXPECT_EQ(run_op(o, {{1, 2, 3, 4, 5, 6}, {1, 2, 3}}).values, r.values);
}

TEST(KnownAnswers, ConvTransposeBackwardDataDilated) {
    // Dilated (oneDNN's backend drops the dilation): dd {1,2,3,4}, V {1,10}, dl 3, pads 1/0:
    // X = (4+1-4)/1+1 = 2; dsrc[x] = sum_k dd[x+3k-1]*V[k]: x0: 10*dd2 = 30; x1: dd0 + 10*dd3 = 41.
    // Adjoint of ConvTranspose1DDilationAndPad: {2,0,10,20}.{1,2,3,4} = 112 = 30 + 2*41.
    op o = make_conv_op(op_kind::ConvTransposeBackwardData, {1}, {1}, {0}, {3});
    o.add_input(lt(0, {1, 1, 4})).add_input(lt(1, {1, 1, 2})).add_output(unk(2));
    auto r = run_op(o, {{1, 2, 3, 4}, {1, 10}});
    EXPECT_EQ(r.shape, (dims{1, 1, 2}));
    EXPECT_EQ(r.values, (V{30, 41}));
}

TEST(KnownAnswers, ConvTransposeBackwardDataGrouped) {
    // groups 2, IOX [4,2,1,1] = V[ic][ocg]: ic0 {1,2}, ic1 {3,4}, ic2 {5,6}, ic3 {7,8};
    // dd {1,10,100,1000}; group 0 (ic0, ic1) reads dd0, dd1: 21, 43; group 1: 6500, 8700.
    op o = make_conv_op(op_kind::ConvTransposeBackwardData, {1, 1}, {0, 0}, {0, 0}, {1, 1});
    o.set_attr("groups", int64_t(2));
    o.add_input(lt(0, {1, 4, 1, 1})).add_input(lt(1, {4, 2, 1, 1})).add_output(unk(2));
    auto r = run_op(o, {{1, 10, 100, 1000}, {1, 2, 3, 4, 5, 6, 7, 8}});
    EXPECT_EQ(r.shape, (dims{1, 4, 1, 1}));
    EXPECT_EQ(r.values, (V{21, 43, 6500, 8700}));
}

// ---------------------------------------------------------------------------------------------
// ConvTransposeBackwardWeights

TEST(KnownAnswers, ConvTransposeBackwardWeights1D) {
    // src {1,2}, dd 1..6, s 2, K 3: dV[k] = sum_x src[x]*dd[2x+k] = {1+6, 2+8, 3+10}.
    // <V, dV> with V {1,2,3}: 7 + 20 + 39 = 66 again.
    op o = make_conv_op(op_kind::ConvTransposeBackwardWeights, {2}, {0}, {0}, {1});
    o.set_attr("weights_shape", dims{1, 1, 3});
    o.add_input(lt(0, {1, 1, 2})).add_input(lt(1, {1, 1, 6})).add_output(unk(2));
    auto r = run_op(o, {{1, 2}, {1, 2, 3, 4, 5, 6}});
    EXPECT_EQ(r.shape, (dims{1, 1, 3}));
    EXPECT_EQ(r.values, (V{7, 10, 13}));
}

TEST(KnownAnswers, ConvTransposeBackwardWeightsGrouped) {
    // groups 2, src {1,2,3,4}, dd {1,10,100,1000}, IOX [4,2,1,1]: dV[ic][ocg] = src[ic] *
    // dd[g*2+ocg]: {1,10}, {2,20}, {300,3000}, {400,4000}.
    op o = make_conv_op(op_kind::ConvTransposeBackwardWeights, {1, 1}, {0, 0}, {0, 0}, {1, 1});
    o.set_attr("groups", int64_t(2));
    o.add_input(lt(0, {1, 4, 1, 1})).add_input(lt(1, {1, 4, 1, 1})).add_output(lt(2, {4, 2, 1, 1}));
    auto r = run_op(o, {{1, 2, 3, 4}, {1, 10, 100, 1000}});
    EXPECT_EQ(r.values, (V{1, 10, 2, 20, 300, 3000, 400, 4000}));
    // oneDNN ConvTransposeBackwardWeightsWithGroupsAndFiltersAnyLayout: src [2,4,2],
    // diff_dst [2,4,2], groups 2 -> IOX [4,2,3] (K 3 with pads 1/1).
    op o2 = make_conv_op(op_kind::ConvTransposeBackwardWeights, {1}, {1}, {1}, {1});
    o2.set_attr("groups", int64_t(2)).set_attr("weights_shape", dims{4, 2, 3});
    o2.add_input(lt(0, {2, 4, 2})).add_input(lt(1, {2, 4, 2})).add_output(unk(2));
    EXPECT_EQ(compile_op(o2).outputs()[0].shape(), (dims{4, 2, 3}));
}

// ---------------------------------------------------------------------------------------------
// oneDNN's pinned auto_pad facts (reference doc §5.2, §12 probes 3 and 9)

op cbd_auto_pad(const char *mode, dims dst_shape) {
    op o = make_conv_op(op_kind::ConvolutionBackwardData, {1, 1}, {0, 0}, {0, 0}, {1, 1});
    o.set_attr("auto_pad", std::string(mode)).set_attr("dst_shape", dst_shape);
    o.add_input(lt(0, {1, 1, 6, 6})).add_input(lt(1, {1, 1, 4, 4})).add_output(unk(2));
    return o;
}

TEST(KnownAnswers, ConvolutionBackwardDataAutoPadSplit) {
    // diff_dst 6x6, K 4, s 1, dst_shape 6x6: total 3, SAME_UPPER (1,2), SAME_LOWER (2,1)
    // (the code's split, not the doc formula's).
    auto up = compile_op(cbd_auto_pad("SAME_UPPER", {1, 1, 6, 6}));
    EXPECT_EQ(up.pads_begin(), (dims{1, 1}));
    EXPECT_EQ(up.pads_end(), (dims{2, 2}));
    EXPECT_EQ(up.outputs()[0].shape(), (dims{1, 1, 6, 6}));
    auto lo = compile_op(cbd_auto_pad("SAME_LOWER", {1, 1, 6, 6}));
    EXPECT_EQ(lo.pads_begin(), (dims{2, 2}));
    EXPECT_EQ(lo.pads_end(), (dims{1, 1}));
    auto va = compile_op(cbd_auto_pad("VALID", {1, 1, 9, 9}));
    EXPECT_EQ(va.pads_begin(), (dims{0, 0}));
    EXPECT_EQ(va.pads_end(), (dims{0, 0}));
    EXPECT_EQ(va.outputs()[0].shape(), (dims{1, 1, 9, 9}));
    // Lower case spelling (the seeds') is the same mode.
    auto lc = compile_op(cbd_auto_pad("same_upper", {1, 1, 6, 6}));
    EXPECT_EQ(lc.pads_begin(), (dims{1, 1}));

    // The results equal those with the explicit pads.
    tensor_buffer dd(lt(0, {1, 1, 6, 6})), w(lt(1, {1, 1, 4, 4}));
    dd.fill_ints(1);
    w.fill_ints(2);
    for (const char *mode : {"SAME_UPPER", "SAME_LOWER"}) {
        SCOPED_TRACE(mode);
        auto a = run_op(cbd_auto_pad(mode, {1, 1, 6, 6}), {dd.values(), w.values()});
        const bool upper = mode[5] == 'U';
        op e = make_conv_op(op_kind::ConvolutionBackwardData, {1, 1}, upper ? dims{1, 1} : dims{2, 2},
                            upper ? dims{2, 2} : dims{1, 1}, {1, 1});
        e.add_input(lt(0, {1, 1, 6, 6})).add_input(lt(1, {1, 1, 4, 4})).add_output(lt(2, {1, 1, 6, 6}));
        auto b = run_op(e, {dd.values(), w.values()});
        EXPECT_EQ(a.values, b.values);
    }
}

TEST(KnownAnswers, ConvolutionBackwardDataAutoPadUsesDiffSrcSize) {
    // SAME total from the forward convolution's input (diff_src): X 7, s 2, K 3 -> 7 % 2 = 1,
    // total = 3 - 1 = 2 -> (1,1), Y = (7+2-3)/2+1 = 4.
    op o = make_conv_op(op_kind::ConvolutionBackwardData, {2}, {0}, {0}, {1});
    o.set_attr("auto_pad", std::string("SAME_UPPER")).set_attr("dst_shape", dims{1, 1, 7});
    o.add_input(lt(0, {1, 1, 4})).add_input(lt(1, {1, 1, 3})).add_output(unk(2));
    auto cp = compile_op(o);
    EXPECT_EQ(cp.pads_begin(), (dims{1}));
    EXPECT_EQ(cp.pads_end(), (dims{1}));
    // X 8: 8 % 2 = 0, total = 3 - 2 = 1 -> SAME_UPPER (0,1), Y = (8+1-3)/2+1 = 4.
    o.set_attr("dst_shape", dims{1, 1, 8});
    auto cp8 = compile_op(o);
    EXPECT_EQ(cp8.pads_begin(), (dims{0}));
    EXPECT_EQ(cp8.pads_end(), (dims{1}));
    // Without any diff_src shape, auto_pad cannot be resolved.
    op n = make_conv_op(op_kind::ConvolutionBackwardData, {2}, {0}, {0}, {1});
    n.set_attr("auto_pad", std::string("SAME_UPPER"));
    n.add_input(lt(0, {1, 1, 4})).add_input(lt(1, {1, 1, 3})).add_output(unk(2));
    EXPECT_THROW(compile_op(n), error);
}

TEST(KnownAnswers, ConvolutionBackwardDataDilatedValid) {
    // dilations 2, VALID, diff_dst 10x10, K 4 (Ke 7), dst_shape 16x16 -> 16x16: (16-7)+1 = 10.
    op o = make_conv_op(op_kind::ConvolutionBackwardData, {1, 1}, {5, 5}, {5, 5}, {2, 2});
    o.set_attr("auto_pad", std::string("VALID")).set_attr("dst_shape", dims{1, 1, 16, 16});
    o.add_input(lt(0, {1, 1, 10, 10})).add_input(lt(1, {1, 1, 4, 4})).add_output(unk(2));
    auto cp = compile_op(o);
    EXPECT_EQ(cp.outputs()[0].shape(), (dims{1, 1, 16, 16}));
    EXPECT_EQ(cp.pads_begin(), (dims{0, 0}));
    EXPECT_EQ(cp.pads_end(), (dims{0, 0}));
}

op convt_auto_pad(const char *mode, dims src, dim_t k, dim_t s, dim_t dl) {
    op o = make_conv_op(op_kind::ConvTranspose, {s, s}, {7, 7}, {7, 7}, {dl, dl});
    o.set_attr("auto_pad", std::string(mode));
    o.add_input(lt(0, src)).add_input(lt(1, {1, 1, k, k})).add_output(unk(2));
    return o;
}

TEST(KnownAnswers, ConvTransposeAutoPad) {
    // src 6x6, K 4, s 1: total = Ke - s = 3; SAME_UPPER (1,2), SAME_LOWER (2,1), out 6x6.
    auto up = compile_op(convt_auto_pad("SAME_UPPER", {1, 1, 6, 6}, 4, 1, 1));
    EXPECT_EQ(up.pads_begin(), (dims{1, 1}));
    EXPECT_EQ(up.pads_end(), (dims{2, 2}));
    EXPECT_EQ(up.outputs()[0].shape(), (dims{1, 1, 6, 6}));
    auto lo = compile_op(convt_auto_pad("SAME_LOWER", {1, 1, 6, 6}, 4, 1, 1));
    EXPECT_EQ(lo.pads_begin(), (dims{2, 2}));
    EXPECT_EQ(lo.pads_end(), (dims{1, 1}));
    EXPECT_EQ(lo.outputs()[0].shape(), (dims{1, 1, 6, 6}));
    // VALID: pads 0, out 6 - 1 + 4 = 9.
    auto va = compile_op(convt_auto_pad("VALID", {1, 1, 6, 6}, 4, 1, 1));
    EXPECT_EQ(va.pads_begin(), (dims{0, 0}));
    EXPECT_EQ(va.pads_end(), (dims{0, 0}));
    EXPECT_EQ(va.outputs()[0].shape(), (dims{1, 1, 9, 9}));
    // dilation 2: Ke 7, total 6 -> (3,3), out 10x10 from 10x10.
    auto dl = compile_op(convt_auto_pad("SAME_UPPER", {1, 1, 10, 10}, 4, 1, 2));
    EXPECT_EQ(dl.pads_begin(), (dims{3, 3}));
    EXPECT_EQ(dl.pads_end(), (dims{3, 3}));
    EXPECT_EQ(dl.outputs()[0].shape(), (dims{1, 1, 10, 10}));
    // s 2, K 1: Ke - s < 0 clamps to 0; out 2*2 + 1 = 5 from 3.
    auto cl = compile_op(convt_auto_pad("SAME_LOWER", {1, 1, 3, 3}, 1, 2, 1));
    EXPECT_EQ(cl.pads_begin(), (dims{0, 0}));
    EXPECT_EQ(cl.pads_end(), (dims{0, 0}));
    EXPECT_EQ(cl.outputs()[0].shape(), (dims{1, 1, 5, 5}));
}

TEST(KnownAnswers, ConvTransposeGradientsUseTheConvTransposeAutoPadRule) {
    // SEMANTICS §4: the ConvTranspose family's total is Ke - s whatever the size, so the
    // gradients pad exactly like their forward. s 2, K 3, src 3 with output_padding 1:
    // ConvTranspose total 1 -> SAME_UPPER (0,1), Y = 2*2 + 3 - 1 + 1 = 7 (odd: 7 % 2 = 1, where
    // the conv rule would give total 3 - 1 = 2 instead).
    op f = make_conv_op(op_kind::ConvTranspose, {2}, {0}, {0}, {1});
    f.set_attr("auto_pad", std::string("SAME_UPPER")).set_attr("output_padding", dims{1});
    f.add_input(lt(0, {1, 1, 3})).add_input(lt(1, {1, 1, 3})).add_output(unk(2));
    auto cf = compile_op(f);
    EXPECT_EQ(cf.outputs()[0].shape(), (dims{1, 1, 7}));
    EXPECT_EQ(cf.pads_begin(), (dims{0}));
    EXPECT_EQ(cf.pads_end(), (dims{1}));
    op d = make_conv_op(op_kind::ConvTransposeBackwardData, {2}, {0}, {0}, {1});
    d.set_attr("auto_pad", std::string("SAME_UPPER")).set_attr("output_padding", dims{1});
    d.add_input(lt(0, {1, 1, 7})).add_input(lt(1, {1, 1, 3})).add_output(unk(2));
    auto cd = compile_op(d);
    EXPECT_EQ(cd.pads_begin(), (dims{0}));
    EXPECT_EQ(cd.pads_end(), (dims{1}));
    EXPECT_EQ(cd.outputs()[0].shape(), (dims{1, 1, 3}));
    op w = make_conv_op(op_kind::ConvTransposeBackwardWeights, {2}, {0}, {0}, {1});
    w.set_attr("auto_pad", std::string("SAME_UPPER")).set_attr("weights_shape", dims{1, 1, 3});
    w.add_input(lt(0, {1, 1, 3})).add_input(lt(1, {1, 1, 7})).add_output(unk(2));
    auto cw = compile_op(w);
    EXPECT_EQ(cw.pads_begin(), (dims{0}));
    EXPECT_EQ(cw.pads_end(), (dims{1}));
}

// ---------------------------------------------------------------------------------------------
// Inferred shapes pinned by oneDNN's tests and cases

TEST(KnownAnswers, ConvTransposeBackwardDataInferredShapes) {
    // test_op_schema_cpu.cpp: diff_dst [256,3,227,227], weights [3,96,11,11] in the old
    // (legacy) OIX = [OC/G, IC, K], s 4 -> [256,96,55,55]; the same in IOX is [96,3,11,11].
    for (auto [fmt, w] : {std::pair<const char *, dims>{"OIX", {3, 96, 11, 11}},
                          std::pair<const char *, dims>{"IOX", {96, 3, 11, 11}}}) {
        SCOPED_TRACE(fmt);
        op o = make_conv_op(op_kind::ConvTransposeBackwardData, {4, 4}, {0, 0}, {0, 0}, {1, 1});
        o.set_attr("weights_format", std::string(fmt));
        o.add_input(lt(0, {256, 3, 227, 227})).add_input(lt(1, w)).add_output(unk(2));
        EXPECT_EQ(compile_op(o).outputs()[0].shape(), (dims{256, 96, 55, 55}));
    }
    // groups 2: diff_dst [256,384,13,13], legacy OIX [192,256,3,3] (OC/G 192, IC 256), pads 1
    // -> [256,256,13,13]; IOX [256,192,3,3].
    for (auto [fmt, w] : {std::pair<const char *, dims>{"OIX", {192, 256, 3, 3}},
                          std::pair<const char *, dims>{"IOX", {256, 192, 3, 3}}}) {
        SCOPED_TRACE(fmt);
        op o = make_conv_op(op_kind::ConvTransposeBackwardData, {1, 1}, {1, 1}, {1, 1}, {1, 1});
        o.set_attr("weights_format", std::string(fmt)).set_attr("groups", int64_t(2));
        o.add_input(lt(0, {256, 384, 13, 13})).add_input(lt(1, w)).add_output(unk(2));
        EXPECT_EQ(compile_op(o).outputs()[0].shape(), (dims{256, 256, 13, 13}));
    }
}

TEST(KnownAnswers, DeconvJsonCases) {
    // deconv.json: src [1,32,28,28], IOX [32,128,3,3], s 2, pads_end 41: 2*27 + 3 - 41 = 16.
    op o = make_conv_op(op_kind::ConvTranspose, {2, 2}, {0, 0}, {41, 41}, {1, 1});
    o.add_input(lt(0, {1, 32, 28, 28})).add_input(lt(1, {32, 128, 3, 3})).add_output(unk(2));
    EXPECT_EQ(compile_op(o).outputs()[0].shape(), (dims{1, 128, 16, 16}));
    // deconv_bwd_d.json maps it back, deconv_bwd_w.json gives the weights.
    op d = make_conv_op(op_kind::ConvTransposeBackwardData, {2, 2}, {0, 0}, {41, 41}, {1, 1});
    d.add_input(lt(0, {1, 128, 16, 16})).add_input(lt(1, {32, 128, 3, 3})).add_output(unk(2));
    EXPECT_EQ(compile_op(d).outputs()[0].shape(), (dims{1, 32, 28, 28}));
    op w = make_conv_op(op_kind::ConvTransposeBackwardWeights, {2, 2}, {0, 0}, {41, 41}, {1, 1});
    w.set_attr("weights_shape", dims{32, 128, 3, 3});
    w.add_input(lt(0, {1, 32, 28, 28})).add_input(lt(1, {1, 128, 16, 16})).add_output(unk(2));
    EXPECT_EQ(compile_op(w).outputs()[0].shape(), (dims{32, 128, 3, 3}));
}

TEST(KnownAnswers, ConvTransposeOutputPaddingMustBeBelowStride) {
    // s 2, K 3, src 3x3, output_padding 1: 2*2 + 3 + 1 = 8.
    op o = make_conv_op(op_kind::ConvTranspose, {2, 2}, {0, 0}, {0, 0}, {1, 1});
    o.set_attr("output_padding", dims{1, 1});
    o.add_input(lt(0, {1, 1, 3, 3})).add_input(lt(1, {1, 1, 3, 3})).add_output(unk(2));
    EXPECT_EQ(compile_op(o).outputs()[0].shape(), (dims{1, 1, 8, 8}));
    // A 12-entry list (oneDNN's serialized default) is fine when the extra entries are 0.
    dims twelve(12, 0);
    twelve[0] = twelve[1] = 1;
    o.set_attr("output_padding", twelve);
    EXPECT_EQ(compile_op(o).outputs()[0].shape(), (dims{1, 1, 8, 8}));
    // output_padding 2 = s: error.
    o.set_attr("output_padding", dims{2, 2});
    EXPECT_THROW(compile_op(o), error);
}

TEST(KnownAnswers, ConvolutionBackwardDataJsonCases) {
    // conv_bwd_d_2d.json: diff_dst [1,128,14,14], OIX [128,32,1,1], s 2, dst_shape
    // [1,32,28,28] -> [1,32,28,28]; without dst_shape the inference gives 2*13 + 1 = 27.
    op o = make_conv_op(op_kind::ConvolutionBackwardData, {2, 2}, {0, 0}, {0, 0}, {1, 1});
    o.set_attr("dst_shape", dims{1, 32, 28, 28}).set_attr("output_padding", dims(12, 0));
    o.add_input(lt(0, {1, 128, 14, 14})).add_input(lt(1, {128, 32, 1, 1})).add_output(unk(2));
    EXPECT_EQ(compile_op(o).outputs()[0].shape(), (dims{1, 32, 28, 28}));
    op n = make_conv_op(op_kind::ConvolutionBackwardData, {2, 2}, {0, 0}, {0, 0}, {1, 1});
    n.add_input(lt(0, {1, 128, 14, 14})).add_input(lt(1, {128, 32, 1, 1})).add_output(unk(2));
    EXPECT_EQ(compile_op(n).outputs()[0].shape(), (dims{1, 32, 27, 27}));
    // NXC: dst_shape in NXC order.
    op x = make_conv_op(op_kind::ConvolutionBackwardData, {2, 2}, {0, 0}, {0, 0}, {1, 1});
    x.set_attr("data_format", std::string("NXC")).set_attr("dst_shape", dims{1, 7, 7, 2});
    x.add_input(lt(0, {1, 3, 3, 4})).add_input(lt(1, {4, 2, 3, 3})).add_output(unk(2));
    EXPECT_EQ(compile_op(x).outputs()[0].shape(), (dims{1, 7, 7, 2}));
}

// ---------------------------------------------------------------------------------------------
// Legacy names, attribute aliases

TEST(KnownAnswers, LegacyOpNames) {
    EXPECT_EQ(parse_op_kind("ConvolutionBackpropData"), op_kind::ConvolutionBackwardData);
    EXPECT_EQ(parse_op_kind("ConvolutionBackpropFilters"), op_kind::ConvolutionBackwardWeights);
    EXPECT_EQ(parse_op_kind("ConvTransposeBackpropData"), op_kind::ConvTransposeBackwardData);
    EXPECT_EQ(parse_op_kind("ConvTransposeBackpropFilters"), op_kind::ConvTransposeBackwardWeights);
    for (op_kind k : all_op_kinds) EXPECT_EQ(parse_op_kind(to_string(k)), k);
    // Written out under the current names.
    EXPECT_STREQ(to_string(*parse_op_kind("ConvTransposeBackpropFilters")),
                 "ConvTransposeBackwardWeights");
    EXPECT_FALSE(parse_op_kind("Deconvolution").has_value());
    EXPECT_FALSE(parse_op_kind("convolution").has_value());
}

TEST(KnownAnswers, LegacyAttributeAliases) {
    EXPECT_EQ(canonical_attr_name("filter_format"), "weights_format");
    EXPECT_EQ(canonical_attr_name("filter_shape"), "weights_shape");
    EXPECT_EQ(canonical_attr_name("output_shape"), "dst_shape");
    EXPECT_EQ(canonical_attr_name("strides"), "strides");

    // ConvolutionBackpropData with output_shape and filter_format, as the old spec wrote it.
    op o(0, *parse_op_kind("ConvolutionBackpropData"));
    o.set_attr("strides", dims{3}).set_attr("pads_begin", dims{2}).set_attr("pads_end", dims{0});
    o.set_attr("dilations", dims{2}).set_attr("data_format", std::string("NCX"));
    o.set_attr("filter_format", std::string("OIX")).set_attr("output_shape", dims{1, 1, 8});
    o.add_input(lt(0, {1, 1, 3})).add_input(lt(1, {1, 1, 2})).add_output(unk(2));
    auto r = run_op(o, {{1, 2, 3}, {1, 10}});
    EXPECT_EQ(r.values, (V{10, 2, 0, 20, 3, 0, 30, 0}));

    // ConvolutionBackpropFilters with filter_shape in XIO order ([K, IC/G, OC]).
    op w(1, *parse_op_kind("ConvolutionBackpropFilters"));
    w.set_attr("strides", dims{3}).set_attr("pads_begin", dims{2}).set_attr("pads_end", dims{0});
    w.set_attr("dilations", dims{2}).set_attr("data_format", std::string("NCX"));
    w.set_attr("filter_shape", dims{2, 1, 1});
    w.add_input(lt(0, {1, 1, 7})).add_input(lt(1, {1, 1, 3})).add_output(unk(2));
    auto rw = run_op(w, {{1, 2, 3, 4, 5, 6, 7}, {1, 2, 3}});
    EXPECT_EQ(rw.shape, (dims{2, 1, 1}));
    EXPECT_EQ(rw.values, (V{19, 30}));
}

// ---------------------------------------------------------------------------------------------
// dst_shape / weights_shape precedence: output lt > s32 input values > attribute > inference

op cbd_precedence(bool with_input, std::optional<dims> input_values, std::optional<dims> attr,
                  logical_tensor out) {
    op o = cbd_1d({});
    o.set_outputs({out});
    if (attr) o.set_attr("dst_shape", *attr);
    if (with_input) {
        logical_tensor s(3, data_type::s32, {3});
        if (input_values) s.set_values(*input_values);
        o.add_input(s);
    }
    return o;
}

TEST(KnownAnswers, ConvolutionBackwardDataShapePrecedence) {
    auto shape_of = [](const op &o) { return compile_op(o).outputs()[0].shape(); };
    // X may be 7, 8 or 9 (see above).
    EXPECT_EQ(shape_of(cbd_precedence(false, {}, {}, unk(2))), (dims{1, 1, 7}));
    EXPECT_EQ(shape_of(cbd_precedence(false, {}, dims{1, 1, 9}, unk(2))), (dims{1, 1, 9}));
    EXPECT_EQ(shape_of(cbd_precedence(true, {}, dims{1, 1, 9}, unk(2))), (dims{1, 1, 9}));
    EXPECT_EQ(shape_of(cbd_precedence(true, dims{1, 1, 8}, dims{1, 1, 9}, unk(2))),
              (dims{1, 1, 8}));
    EXPECT_EQ(shape_of(cbd_precedence(true, dims{1, 1, 8}, dims{1, 1, 9}, lt(2, {1, 1, 7}))),
              (dims{1, 1, 7}));
    EXPECT_EQ(shape_of(cbd_precedence(false, {}, dims{1, 1, 9}, lt(2, {1, 1, 8}))),
              (dims{1, 1, 8}));
    // An all-zero attribute (oneDNN's default) is absent.
    EXPECT_EQ(shape_of(cbd_precedence(false, {}, dims(12, 0), unk(2))), (dims{1, 1, 7}));
    // An output lt of known rank but unknown dims does not count as a given shape.
    EXPECT_EQ(shape_of(cbd_precedence(false, {}, dims{1, 1, 9},
                                      lt(2, {unknown_dim, unknown_dim, unknown_dim}))),
              (dims{1, 1, 9}));
}

TEST(KnownAnswers, ConvolutionBackwardDataShapeInputAtExecution) {
    // The 3-input form works; the s32 tensor at execution must hold the compiled shape.
    op o = cbd_precedence(true, dims{1, 1, 8}, {}, unk(2));
    auto r = run_op(o, {{1, 2, 3}, {1, 10}, {1, 1, 8}});
    EXPECT_EQ(r.values, (V{10, 2, 0, 20, 3, 0, 30, 0}));
    try {
        run_op(o, {{1, 2, 3}, {1, 10}, {1, 1, 9}});
        ADD_FAILURE() << "no error";
    } catch (const error &e) {
        EXPECT_EQ(e.code(), status::invalid_shape);
        EXPECT_NE(std::string(e.what()).find("[1,1,8]"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("[1,1,9]"), std::string::npos) << e.what();
    }
    // Values unknown at compile time: the shape comes from the attribute and the input must
    // agree with it at execution.
    op a = cbd_precedence(true, {}, dims{1, 1, 9}, unk(2));
    EXPECT_EQ(run_op(a, {{1, 2, 3}, {1, 10}, {1, 1, 9}}).shape, (dims{1, 1, 9}));
    EXPECT_THROW(run_op(a, {{1, 2, 3}, {1, 10}, {1, 1, 7}}), error);
}

TEST(KnownAnswers, BackwardWeightsShapePrecedence) {
    for (op_kind k : {op_kind::ConvolutionBackwardWeights, op_kind::ConvTransposeBackwardWeights}) {
        SCOPED_TRACE(to_string(k));
        const bool ct = k == op_kind::ConvTransposeBackwardWeights;
        // Convolution: src [1,2,5] -> diff_dst [1,4,?]; K 3 gives 3, K 1 gives 5 (pads 0).
        // ConvTranspose family: src is the small side, diff_dst the big one.
        auto make = [&](std::optional<dims> values, std::optional<dims> attr, logical_tensor out,
                        dim_t kk) {
            op o = make_conv_op(k, {1}, {0}, {0}, {1});
            const dim_t small = 5 - kk + 1;
            if (ct) o.add_input(lt(0, {1, 4, small})).add_input(lt(1, {1, 2, 5}));
            else o.add_input(lt(0, {1, 2, 5})).add_input(lt(1, {1, 4, small}));
            if (attr) o.set_attr("weights_shape", *attr);
            if (values) o.add_input(logical_tensor(3, data_type::s32, {3}).set_values(*values));
            o.set_outputs({out});
            return o;
        };
        // OIX [4,2,K] (Convolution: OC 4, IC 2); IOX [4,2,K] (ConvTranspose: IC 4, OC 2).
        auto shape_of = [](const op &o) { return compile_op(o).outputs()[0].shape(); };
        EXPECT_EQ(shape_of(make({}, dims{4, 2, 3}, unk(2), 3)), (dims{4, 2, 3}));
        EXPECT_EQ(shape_of(make(dims{4, 2, 1}, dims{4, 2, 3}, unk(2), 1)), (dims{4, 2, 1}));
        EXPECT_EQ(shape_of(make(dims{4, 2, 1}, dims{4, 2, 2}, lt(2, {4, 2, 3}), 3)),
                  (dims{4, 2, 3}));
        EXPECT_EQ(shape_of(make({}, dims(12, 0), lt(2, {4, 2, 3}), 3)), (dims{4, 2, 3}));
        // No shape at all: error.
        EXPECT_THROW(compile_op(make({}, {}, unk(2), 3)), error);
        EXPECT_THROW(compile_op(make({}, dims(12, 0), unk(2), 3)), error);
        // The s32 input at execution must hold the compiled shape.
        op o = make(dims{4, 2, 1}, {}, unk(2), 1);
        EXPECT_NO_THROW(run_op(o, {V(ct ? 20 : 10, 1), V(ct ? 10 : 20, 1), {4, 2, 1}}));
        EXPECT_THROW(run_op(o, {V(ct ? 20 : 10, 1), V(ct ? 10 : 20, 1), {4, 2, 3}}), error);
    }
}

}  // namespace
}  // namespace convgrad
