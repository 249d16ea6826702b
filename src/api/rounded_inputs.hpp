// fpmath_mode bf16/f16 on an f32 op: the inputs that are multiplied (src, weights, diff_dst),
// rounded once to the math type, in copies with the user's layout. Any kernel then computes the
// mode's result: products of bf16 (f16) values are exact in f32 and are summed in f32.
#pragma once

#include <memory>
#include <vector>

#include "convgrad/logical_tensor.hpp"
#include "core/conv_problem.hpp"

namespace convgrad::detail {

/// Copies of the f32 tensors `data[i]` (described by `lts[i]`) with every element rounded to
/// `to` (bf16 or f16, nearest-even) and widened back; each copy keeps the tensor's strides, so
/// the returned pointer replaces the user's. Throws std::bad_alloc when memory runs out.
class rounded_inputs {
public:
    const float *add(const logical_tensor &lt, const void *data, data_type to, int nthr);

private:
    std::vector<std::unique_ptr<float[]>> copies_;
};

}  // namespace convgrad::detail
