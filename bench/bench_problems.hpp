// Benchmark problems: built through the public API (an op with NXC data and the family's default
// weights format) and resolved to the internal canonical problem, plus seeded input buffers.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "convgrad/convgrad.hpp"
#include "core/resolve.hpp"

namespace convgrad::bench {

struct bench_problem {
    std::string label;  // "ConvolutionBackwardData/g1mb8ic64ih56oc64oh56kh3ph1/f32"
    op o{0, op_kind::Convolution};
    detail::resolved_op r;  // r.prob: the canonical problem; r.inputs/r.outputs: the tensors
};

/// The op `kind` whose canonical (mirror, for the ConvTranspose family) convolution is `desc`,
/// written as conv_problem::desc() and benchdnn write it: "g1mb8ic64ih56oc64oh56kh3sh1ph1",
/// "mb8ic128iw512oc128kw3pw1", with optional dd/dh/dw (0-based dilation) and _ped/_peh/_pew (end
/// pads). Missing values follow benchdnn: an axis copies the one before it (iw = ih), o* is computed,
/// end pads equal begin pads (or follow from o* when given). Throws convgrad::error.
bench_problem make_problem(op_kind kind, const std::string &desc, data_type dt = data_type::f32,
                           bool bias = false);

/// Problems from the command line, `--problem=<Kind>:<desc>[:bf16|:f16][:bias]` (repeatable;
/// the args are removed from argv), or the default list when there are none. Throws on a bad one.
std::vector<bench_problem> problems_from_args(int &argc, char **argv);

/// Input and output buffers of a problem, inputs filled with seeded values in [-1, 1).
struct problem_buffers {
    std::vector<std::vector<uint8_t>> in;
    std::vector<uint8_t> out;
    explicit problem_buffers(const detail::resolved_op &r);
    std::vector<tensor> input_tensors(const std::vector<logical_tensor> &lts);
    std::vector<tensor> output_tensors(const std::vector<logical_tensor> &lts);
    /// Pointers in the roles of the internal kernels.
    detail::conv_args args(const detail::resolved_op &r);
};

}  // namespace convgrad::bench
