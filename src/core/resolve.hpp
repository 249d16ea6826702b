// Compile-time resolution of one op: shapes inferred and checked, pads resolved, layouts fixed,
// and the op mapped onto the normalized conv_problem (SEMANTICS §2 mirror identities).
#pragma once

#include "convgrad/op.hpp"
#include "core/conv_problem.hpp"

namespace convgrad::detail {

struct resolved_op {
    std::vector<logical_tensor> inputs;   // in the op's order, shapes and strides known
    std::vector<logical_tensor> outputs;  // one, shape and strides inferred
    dims pads_begin, pads_end;            // after auto_pad
    conv_problem prob;
    // Which inputs play which role in conv_args.
    int src_input = -1, wei_input = -1, dst_input = -1, bias_input = -1;
    int shape_input = -1;  // the s32 dst_shape / weights_shape input, if any
    dims shape_values;     // the values it must hold at execution (the compiled output shape)
};

/// `inputs`/`outputs` replace the op's own logical tensors with the same ids (if given).
resolved_op resolve_op(const op &o, const std::vector<logical_tensor> &inputs,
                       const std::vector<logical_tensor> &outputs);

}  // namespace convgrad::detail
