// Fuzz target: op construction from random attributes and shapes. Any of the six ops, rank 1-3,
// any attribute values (including absurd ones: huge strides, negative pads), any shapes and
// strides, inputs and outputs known, unknown or "any"; compile, then execute the small ones on
// buffers of exactly the described extent and compare with the reference.
#include <fuzzer/FuzzedDataProvider.h>

#include "fuzz_util.hpp"

using namespace convgrad;

namespace {

// Mostly small values (the interesting edges), sometimes anything.
dim_t any_dim(FuzzedDataProvider &p) {
    switch (p.ConsumeIntegralInRange(0, 7)) {
        case 0: return p.ConsumeIntegral<int64_t>();
        case 1: return p.PickValueInArray<int64_t>({INT64_MAX, INT64_MIN, INT64_MAX / 2, -1, 0, 1LL << 32});
        default: return p.ConsumeIntegralInRange<int64_t>(0, 9);
    }
}

dims any_dims(FuzzedDataProvider &p, size_t n) {
    dims d;
    for (size_t i = 0; i < n; ++i) d.push_back(any_dim(p));
    return d;
}

logical_tensor any_tensor(FuzzedDataProvider &p, size_t id, data_type dt, const dims &shape) {
    switch (p.ConsumeIntegralInRange(0, 5)) {
        case 0: return logical_tensor::unknown(id, dt);
        case 1: return logical_tensor::any(id, dt, shape);
        case 2: {  // any strides
            dims st;
            for (size_t i = 0; i < shape.size(); ++i) st.push_back(p.ConsumeIntegralInRange<int64_t>(-1, 300));
            return logical_tensor(id, dt, shape, st);
        }
        default: return logical_tensor(id, dt, shape);
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    FuzzedDataProvider p(data, size);
    try {
        const op_kind kind = p.PickValueInArray(all_op_kinds);
        const size_t S = p.ConsumeIntegralInRange<size_t>(1, 3);
        const data_type dt = p.PickValueInArray({data_type::f32, data_type::bf16, data_type::f16});
        op o(p.ConsumeIntegralInRange<size_t>(0, 3), kind, "fuzz");
        auto sp = [&] { return p.ConsumeBool() ? any_dims(p, S) : any_dims(p, p.ConsumeIntegralInRange<size_t>(0, 4)); };
        o.set_attr("strides", sp()).set_attr("dilations", sp());
        o.set_attr("pads_begin", sp()).set_attr("pads_end", sp());
        if (p.ConsumeBool()) o.set_attr("groups", p.ConsumeBool() ? any_dim(p) : p.ConsumeIntegralInRange<int64_t>(1, 4));
        if (p.ConsumeBool()) o.set_attr("data_format", std::string(p.PickValueInArray({"NXC", "NCX", "nxc"})));
        if (p.ConsumeBool())
            o.set_attr("weights_format", std::string(p.PickValueInArray({"OIX", "XIO", "IOX", "XOI", "OXI"})));
        if (p.ConsumeBool())
            o.set_attr("auto_pad", std::string(p.PickValueInArray({"None", "SAME_UPPER", "SAME_LOWER", "VALID", "x"})));
        if (p.ConsumeBool()) o.set_attr("output_padding", sp());
        const bool shape_attr = p.ConsumeBool();
        const dims x = any_dims(p, S + 2), y = any_dims(p, S + 2), w = any_dims(p, S + 2);
        switch (kind) {
            case op_kind::ConvolutionBackwardData:
                if (shape_attr) o.set_attr("dst_shape", x);
                break;
            case op_kind::ConvolutionBackwardWeights:
            case op_kind::ConvTransposeBackwardWeights:
                if (shape_attr) o.set_attr("weights_shape", w);
                break;
            default: break;
        }
        const bool bwd_w = kind == op_kind::ConvolutionBackwardWeights || kind == op_kind::ConvTransposeBackwardWeights;
        o.add_input(any_tensor(p, 0, dt, x)).add_input(any_tensor(p, 1, dt, bwd_w ? y : w));
        if (p.ConsumeBool()) o.add_input(any_tensor(p, 2, dt, any_dims(p, 1)));  // bias
        o.add_output(any_tensor(p, 3, dt, p.ConsumeBool() ? y : x));

        const compiled_partition best = compile_op(o, impl_choice::best);
        const compiled_partition ref = compile_op(o, impl_choice::reference);
        fuzz::run_and_compare(best, ref, size);
    } catch (const error &) {
    }
    return 0;
}
