// The oneDNN baseline links, computes the same results as convgrad's reference and times small
// problems of all six ops (groups, dilation, asymmetric pads, bias, 1-D/2-D/3-D) with finite
// times; f16 is reported as unsupported.
#include <cmath>
#include <cstdio>
#include <cstring>

#include "bench_problems.hpp"
#include "onednn/onednn_baseline.hpp"

using namespace convgrad;

namespace {

// Largest difference between oneDNN's output (plain tensors) and convgrad's reference.
double max_error(const bench::bench_problem &p, std::string &why_not) {
    const compiled_partition cp = compile_op(p.o, impl_choice::reference);
    bench::problem_buffers buf(p.r);
    cp.execute(buf.input_tensors(cp.inputs()), buf.output_tensors(cp.outputs()));
    const auto c = bench::onednn_conv::create(p.r.prob, why_not);
    if (!c) return NAN;
    c->set_plain_inputs(buf.args(p.r));
    c->run_plain();
    const auto *got = static_cast<const float *>(c->plain_output());
    const auto *want = reinterpret_cast<const float *>(buf.out.data());
    double err = 0;
    for (dim_t i = 0; i < cp.outputs()[0].element_count(); ++i)
        err = std::max(err, double(std::fabs(got[i] - want[i])) / (1 + std::fabs(want[i])));
    return err;
}

}  // namespace

int main() {
    const char *descs[] = {
        "mb2ic16ih12oc16oh12kh3ph1",          // 2-D
        "g2mb2ic8iw20oc12kw3sw2pw1dw1_pew0",  // 1-D, groups, stride, dilation, asymmetric pads
        "mb1ic4id6ih6oc8kd3kh3pd1ph1",        // 3-D
    };
    int failures = 0;
    for (const char *d : descs) {
        for (op_kind k : all_op_kinds) {
            const bool bias = k == op_kind::Convolution || k == op_kind::ConvTranspose;
            const bench::bench_problem p = bench::make_problem(k, d, data_type::f32, bias);
            const bench::onednn_timing t = bench::time_onednn(p.r.prob, 1, 3);
            std::string why_not;
            const double err = max_error(p, why_not);
            const bool ok = std::isfinite(t.plain_ms) && std::isfinite(t.blocked_ms) && err < 1e-4;
            failures += !ok;
            std::printf("%-34s %-40s plain %7.4f ms blocked %7.4f ms err %.1e %s%s%s\n", to_string(k),
                        p.r.prob.desc().c_str(), t.plain_ms, t.blocked_ms, err, t.note.c_str(),
                        why_not.c_str(), ok ? "" : "  FAILED");
        }
    }
    const auto f16 = bench::make_problem(op_kind::Convolution, descs[0], data_type::f16);
    const bench::onednn_timing t = bench::time_onednn(f16.r.prob, 1, 1);
    if (!std::isnan(t.plain_ms) || t.note.find("f16") == std::string::npos) {
        std::printf("f16: expected NaN and a note, got %f '%s'\n", t.plain_ms, t.note.c_str());
        ++failures;
    }
    std::printf("%s\n", failures ? "FAILED" : "OK");
    return failures ? 1 : 0;
}
