// Uses an installed convgrad through its public API only: ConvTransposeBackwardWeights of a small
// layer (NCX, OIX weights, stride 2, pad 1, groups 1), checked against a direct computation of
// its definition. Small integer data make every product and sum exact in f32.
// Exit status 0 when the result matches and the loaded library is the headers' version.
#include <cstdio>
#include <cstring>
#include <vector>

#include <convgrad/convgrad.hpp>

using namespace convgrad;

int main() {
    // Header and library must agree: a program can check what it was linked or loaded with.
    const version_info v = version();
    std::printf("convgrad headers %s, library %s\n", CONVGRAD_VERSION_STRING, v.string);
    if (std::strcmp(v.string, CONVGRAD_VERSION_STRING) != 0 || v.major != CONVGRAD_VERSION_MAJOR) return 3;

    const dim_t n = 2, ic = 3, oc = 5, ih = 4, iw = 3, k = 3, s = 2, p = 1;
    const dim_t oh = (ih - 1) * s - 2 * p + k, ow = (iw - 1) * s - 2 * p + k;  // ConvTranspose output
    std::vector<float> src(size_t(n * ic * ih * iw)), dst(size_t(n * oc * oh * ow));
    for (size_t i = 0; i < src.size(); ++i) src[i] = float(int(i * 7 % 11) - 5);
    for (size_t i = 0; i < dst.size(); ++i) dst[i] = float(int(i * 5 % 9) - 4);

    op o(0, op_kind::ConvTransposeBackwardWeights);
    o.set_attr("strides", dims{s, s}).set_attr("pads_begin", dims{p, p}).set_attr("pads_end", dims{p, p})
        .set_attr("dilations", dims{1, 1}).set_attr("data_format", std::string("NCX"))
        .set_attr("weights_format", std::string("OIX")).set_attr("weights_shape", dims{oc, ic, k, k});
    o.add_input(logical_tensor(0, data_type::f32, {n, ic, ih, iw}))
        .add_input(logical_tensor(1, data_type::f32, {n, oc, oh, ow}))
        .add_output(logical_tensor::unknown(2, data_type::f32));

    std::vector<float> got;
    try {
        graph g;
        g.add_op(o);
        g.finalize();
        const partition part = g.get_partitions().at(0);
        const compiled_partition cp = part.compile(part.input_ports(), part.output_ports());
        const logical_tensor out = cp.outputs().at(0);
        if (out.shape() != dims{oc, ic, k, k}) return 4;
        got.assign(size_t(out.element_count()), -1.f);
        cp.execute({tensor(part.input_ports()[0], src.data()), tensor(part.input_ports()[1], dst.data())},
                   {tensor(out, got.data())});
        std::printf("kernel %s\n", cp.kernel_name().c_str());
    } catch (const error &e) {
        std::fprintf(stderr, "convgrad error (%s): %s\n", to_string(e.code()), e.what());
        return 2;
    }

    // diff_weights[o][i][ky][kx] = sum over n, y, x of src[n][i][y][x] * diff_dst[n][o][y*s-p+ky][x*s-p+kx].
    int wrong = 0;
    for (dim_t oo = 0; oo < oc; ++oo)
        for (dim_t ii = 0; ii < ic; ++ii)
            for (dim_t ky = 0; ky < k; ++ky)
                for (dim_t kx = 0; kx < k; ++kx) {
                    double want = 0;
                    for (dim_t b = 0; b < n; ++b)
                        for (dim_t y = 0; y < ih; ++y)
                            for (dim_t x = 0; x < iw; ++x) {
                                const dim_t dy = y * s - p + ky, dx = x * s - p + kx;
                                if (dy < 0 || dy >= oh || dx < 0 || dx >= ow) continue;
                                want += double(src[size_t(((b * ic + ii) * ih + y) * iw + x)]) *
                                        dst[size_t(((b * oc + oo) * oh + dy) * ow + dx)];
                            }
                    const float g = got[size_t(((oo * ic + ii) * k + ky) * k + kx)];
                    if (double(g) != want && wrong++ < 5)
                        std::fprintf(stderr, "diff_weights[%ld][%ld][%ld][%ld] = %g, want %g\n", long(oo), long(ii),
                                     long(ky), long(kx), double(g), want);
                }
    if (wrong) return 1;
    std::printf("ConvTransposeBackwardWeights %ldx%ldx%ldx%ld: exact\n", long(oc), long(ic), long(k), long(k));
    return 0;
}
