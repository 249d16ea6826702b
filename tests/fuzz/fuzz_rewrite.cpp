// Fuzz target: the benchdnn rewrite parsers (--in-shapes, --op-attrs, --mb, --dt on a JSON
// graph) and benchdnn problem descriptors ("mb2ic3ih8oc4oh8kh3"), with compile (and a small
// execute against the reference) of what they produce.
//
// Input: lines "in_shapes\nop_attrs\nmb\ndt\ndescriptor"; a missing line leaves that part out.
#include <cmath>
#include <string>

#include "desc.hpp"
#include "core/checked.hpp"
#include "fuzz_util.hpp"
#include "rewrite.hpp"

using namespace convgrad;

namespace {

json::document base_doc(int which) {
    op o(0, which ? op_kind::ConvolutionBackwardWeights : op_kind::Convolution, "CONV");
    o.set_attr("strides", dims{2, 2}).set_attr("pads_begin", dims{1, 1}).set_attr("pads_end", dims{0, 0});
    o.set_attr("dilations", dims{1, 1}).set_attr("groups", int64_t(1));
    o.set_attr("data_format", std::string("NCX")).set_attr("weights_format", std::string("OIX"));
    if (which) {
        o.set_attr("weights_shape", dims{8, 4, 3, 3});
        o.add_input(logical_tensor(0, data_type::f32, {2, 4, 9, 9}, {324, 1, 36, 4}))
            .add_input(logical_tensor(1, data_type::f32, {2, 8, 4, 4}));
    } else {
        o.add_input(logical_tensor(0, data_type::f32, {2, 4, 9, 9}, {324, 1, 36, 4}))
            .add_input(logical_tensor(1, data_type::f32, {8, 4, 3, 3}));
    }
    o.add_output(logical_tensor::unknown(2, data_type::f32));
    json::document d;
    d.ops.push_back(o);
    return d;
}

std::string line(const std::string &s, size_t &pos) {
    if (pos > s.size()) return {};
    const size_t e = s.find('\n', pos);
    std::string r = s.substr(pos, e == std::string::npos ? std::string::npos : e - pos);
    pos = e == std::string::npos ? s.size() + 1 : e + 1;
    return r;
}

// Descriptors reach large problems in a few bytes ("kh36kw36kd36"), and the reference under ASan
// runs at a few MFLOP/s: 4e7 FLOP took 10-20 s per unit. Parsing and compiling is what this
// target is for; executing stays a quick cross-check.
constexpr double execute_flop_cap = 2e6;

// Compiling a valid problem builds tables (the GEMM kernel's offsets) in proportion to its
// extents, which under ASan with coverage took 45 s for 7.8 million channels, past the 30 s
// timeout. Ops whose tensors hold more elements than this are parsed and rewritten, not
// compiled; the size checks of compile are unit-tested (tests/api/test_errors.cpp, HugeTensors).
constexpr double compile_element_cap = double(1 << 22);

bool too_big_to_compile(const op &o) {
    double elems = 0;
    auto add = [&](const std::vector<logical_tensor> &ts) {
        for (const logical_tensor &t : ts) {
            double n = 1;
            for (dim_t d : t.shape()) n *= std::abs(double(d));
            elems += n;
        }
    };
    add(o.inputs());
    add(o.outputs());
    return elems > compile_element_cap;
}

void compile_and_run(const op &o) {
    if (too_big_to_compile(o)) return;
    try {
        const compiled_partition best = compile_op(o, impl_choice::best);
        const compiled_partition ref = compile_op(o, impl_choice::reference);
        fuzz::run_and_compare(best, ref, 1, execute_flop_cap);
    } catch (const error &) {
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const std::string s(reinterpret_cast<const char *>(data), size);
    size_t pos = 0;
    const std::string in_shapes = line(s, pos), op_attrs = line(s, pos), mb = line(s, pos),
                      dt = line(s, pos), desc = line(s, pos);
    tool::rewrite_options o;
    o.in_shapes = in_shapes;
    o.op_attrs = op_attrs;
    dim_t v = 0;
    if (!mb.empty() && detail::parse_int64(mb, v)) o.mb = v;
    data_type t;
    if (!dt.empty() && parse_data_type(dt, t)) o.dt = t;
    for (int which : {0, 1}) {
        try {
            json::document d = base_doc(which);
            tool::apply_rewrite(d, o);
            compile_and_run(d.ops[0]);
        } catch (const error &) {
        }
    }
    if (!desc.empty()) {
        for (bool deconv : {false, true}) {
            try {
                const tool::conv_desc c = tool::parse_desc(desc, deconv);
                (void)c.str();
                for (op_kind k : all_op_kinds) {
                    if (is_conv_transpose_family(k) != deconv) continue;
                    compile_and_run(tool::make_op(k, c, data_type::f32));
                }
            } catch (const error &) {
            }
        }
    }
    return 0;
}
