// A 1x1 kernel that steps over pixels reads only every s-th one: the forward and weight gradient
// see src as that view, at stride 1 (conv_problem::read_only_windowed_pixels). Checked as an
// identity of the ops: the strided op on src gives exactly what the stride-1 op gives on the
// pixels it reads, copied out by the test, in NCX and NXC, f32 and bf16, 1-D to 3-D, with axes
// that are not strided and end pads that windows do not reach. A last window in the end
// padding reads a zero there: the view would not hold, and the problem stays as it is.
#include <gtest/gtest.h>

#include "core/op_error.hpp"
#include "core/resolve.hpp"
#include "util/conv_test_util.hpp"

namespace convgrad {
namespace {

using testing::run_op;
using V = std::vector<double>;

struct strided_case {
    dims src;       // logical N, C, spatial (NCX order; permuted for NXC)
    dims stride;    // per spatial axis
    dims pads_end;  // per spatial axis
    dim_t oc;
};

dims out_spatial(const strided_case &c) {
    dims o;
    for (size_t x = 0; x < c.stride.size(); ++x)
        o.push_back((c.src[x + 2] + c.pads_end[x] - 1) / c.stride[x] + 1);
    return o;
}

// NCX shape of the pixels the windows read: the output's spatial extents.
dims read_shape(const strided_case &c) {
    const dims osp = out_spatial(c);
    dims sub = c.src;
    for (size_t x = 0; x < osp.size(); ++x) sub[x + 2] = osp[x];
    return sub;
}

// Logical shape in the op's data format from the NCX order.
dims in_format(const dims &ncx, bool nxc) {
    return nxc ? testing::permute_dims(ncx, testing::ncx_to_nxc(int(ncx.size()))) : ncx;
}

dim_t count(const dims &d) {
    dim_t n = 1;
    for (dim_t x : d) n *= x;
    return n;
}

// NCX values in the op's data format.
V in_format(const dims &ncx, const V &v, bool nxc) {
    return nxc ? testing::permute_values(ncx, v, testing::ncx_to_nxc(int(ncx.size()))) : v;
}

// The pixels windows read, src[..., o * s] per axis (whole windows inside src), of NCX values.
V read_pixels(const V &src, const strided_case &c) {
    const dims sub = read_shape(c);
    const dims st = dense_strides(c.src);
    const size_t r = sub.size();
    V out;
    std::vector<dim_t> idx(r, 0);
    for (dim_t lin = 0; lin < count(sub); ++lin) {
        dim_t off = 0;
        for (size_t j = 0; j < r; ++j) off += idx[j] * (j >= 2 ? c.stride[j - 2] : 1) * st[j];
        out.push_back(src[size_t(off)]);
        for (size_t j = r; j-- > 0;) {
            if (++idx[j] < sub[j]) break;
            idx[j] = 0;
        }
    }
    return out;
}

op strided_op(op_kind k, const strided_case &c, bool nxc, data_type dt, bool strided) {
    const size_t S = c.stride.size();
    const dims osp = out_spatial(c), sub = read_shape(c);
    const dims ones(S, 1), zeros(S, 0);
    op o(0, k, "t");
    o.set_attr("strides", strided ? c.stride : ones).set_attr("pads_begin", zeros);
    o.set_attr("pads_end", strided ? c.pads_end : zeros).set_attr("dilations", ones);
    o.set_attr("data_format", std::string(nxc ? "NXC" : "NCX"));
    o.set_attr("weights_format", std::string("OIX"));
    dims w{c.oc, c.src[1]};
    for (size_t x = 0; x < S; ++x) w.push_back(1);
    dims y{c.src[0], c.oc};
    y.insert(y.end(), osp.begin(), osp.end());
    const dims x_shape = in_format(strided ? c.src : sub, nxc), y_shape = in_format(y, nxc);
    o.add_input(logical_tensor(0, dt, x_shape));
    if (k == op_kind::Convolution) {
        o.add_input(logical_tensor(1, dt, w)).add_output(logical_tensor::unknown(2, dt));
    } else {
        o.add_input(logical_tensor(1, dt, y_shape)).add_output(logical_tensor(2, dt, w));
    }
    return o;
}

const strided_case cases[] = {
    {{2, 5, 9}, {2}, {0}, 7},                    // 1-D
    {{2, 5, 7, 9}, {2, 3}, {0, 0}, 6},           // 2-D, both axes
    {{1, 3, 9, 9}, {2, 2}, {1, 1}, 4},           // end pads that no window reaches
    {{2, 4, 5, 6}, {1, 2}, {0, 0}, 17},          // only w strided
    {{1, 4, 3, 5, 7}, {2, 1, 3}, {0, 0, 0}, 5},  // 3-D, d and w
    {{2, 33, 10, 10}, {2, 2}, {0, 0}, 40},       // vectors and tails of channels
};

TEST(Strided1x1, ReadsOnlyThePixelsItsWindowsRead) {
    for (const strided_case &c : cases)
        for (op_kind k : {op_kind::Convolution, op_kind::ConvolutionBackwardWeights})
            for (bool nxc : {false, true})
                for (data_type dt : {data_type::f32, data_type::bf16}) {
                    SCOPED_TRACE(std::string(to_string(k)) + (nxc ? " NXC " : " NCX ") +
                                 to_string(dt) + " src " + detail::to_string(c.src));
                    const op strided = strided_op(k, c, nxc, dt, true);
                    const op dense = strided_op(k, c, nxc, dt, false);
                    const V src_ncx = testing::small_ints(count(c.src), 1);
                    const V src = in_format(c.src, src_ncx, nxc);
                    const V sub = in_format(read_shape(c), read_pixels(src_ncx, c), nxc);
                    const dim_t other = count(dense.inputs()[1].shape());
                    const V second = testing::small_ints(other, 2);
                    const auto got = run_op(strided, {src, second});
                    const auto want = run_op(dense, {sub, second});
                    EXPECT_EQ(got.shape, want.shape);
                    EXPECT_EQ(got.values, want.values);
                }
}

// The view is taken where it holds, and only there.
TEST(Strided1x1, TheProblemReadsTheView) {
    auto prob = [](const strided_case &c, bool nxc) {
        const op o = strided_op(op_kind::Convolution, c, nxc, data_type::f32, true);
        return detail::resolve_op(o, o.inputs(), o.outputs()).prob;
    };
    // 2-D, both axes strided: NXC takes both; NCX keeps w, its unit-stride axis.
    const strided_case both = cases[1];
    const detail::conv_problem p = prob(both, true), q = prob(both, false);
    EXPECT_EQ(p.i[1], 4);
    EXPECT_EQ(p.i[2], 3);
    EXPECT_EQ(p.s[1], 1);
    EXPECT_EQ(p.s[2], 1);
    EXPECT_EQ(p.src.sp[1], 2 * 9 * 5);
    EXPECT_EQ(p.src.sp[2], 3 * 5);
    EXPECT_EQ(q.i[1], 4);
    EXPECT_EQ(q.s[1], 1);
    EXPECT_EQ(q.src.sp[1], 2 * 9);
    EXPECT_EQ(q.i[2], 9);
    EXPECT_EQ(q.s[2], 3);
    // The last window in the end padding: as given.
    const detail::conv_problem r = prob({{1, 6, 6, 6}, {2, 2}, {1, 1}, 3}, true);
    EXPECT_EQ(r.i[1], 6);
    EXPECT_EQ(r.s[1], 2);
    EXPECT_EQ(r.pe[1], 1);
}

}  // namespace
}  // namespace convgrad
