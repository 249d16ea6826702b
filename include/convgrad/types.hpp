// Basic vocabulary of the public API: data types, status codes and the one exception type.
#pragma once

#include "convgrad/export.hpp"

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace convgrad {

using dim_t = int64_t;
using dims = std::vector<dim_t>;

/// A dimension whose size is not known yet (oneDNN Graph's DNNL_GRAPH_UNKNOWN_DIM).
inline constexpr dim_t unknown_dim = INT64_MIN;

enum class data_type { undef, f32, bf16, f16, s32 };

/// JSON spelling ("f32", "bf16", ...); "undef" for undef.
CONVGRAD_API const char *to_string(data_type dt);
/// Parses the JSON spelling; returns false when the name is not a convgrad data type.
CONVGRAD_API bool parse_data_type(std::string_view name, data_type &out);
/// Size of one element in bytes (0 for undef).
CONVGRAD_API size_t element_size(data_type dt);

/// oneDNN Graph's fpmath_mode, a graph-level setting: how far an f32 op may lower the precision
/// of its products (docs/semantics.md). strict: f32 throughout. bf16 / f16: the inputs may be
/// rounded once to that type (products then exact, accumulated in f32, output f32). tf32, any:
/// the fastest of the allowed choices.
enum class fpmath_mode { strict, bf16, f16, tf32, any };

/// JSON spelling: "strict", "bf16", "f16", "tf32", "any".
CONVGRAD_API const char *to_string(fpmath_mode m);
/// Parses the JSON spelling; returns false when the name is not one of them.
CONVGRAD_API bool parse_fpmath_mode(std::string_view name, fpmath_mode &out);

enum class status {
    success = 0,
    invalid_arguments,  // a call's arguments are wrong (null pointer, wrong count, ...)
    invalid_graph_op,   // the op itself is malformed: attribute, input count, data type
    invalid_shape,      // shapes are inconsistent with each other or with the attributes
    invalid_data_type,  // a data type the op does not support
    unimplemented,      // valid request that convgrad does not implement
    out_of_memory,      // sizes overflow int64 or exceed what can be allocated
    runtime_error,      // anything else at execution
};

CONVGRAD_API const char *to_string(status s);

/// The most threads convgrad runs on. A larger OMP_NUM_THREADS or omp_set_num_threads makes
/// compile and execute fail with invalid_arguments (docs/semantics.md, "Limits").
inline constexpr int max_thread_count = 1024;

/// The single exception type thrown by convgrad. `what()` names the op (id and kind), the
/// tensor or attribute, the rule, and the expected and actual values.
class CONVGRAD_API error : public std::runtime_error {
public:
    error(status code, const std::string &message) : std::runtime_error(message), code_(code) {}
    status code() const noexcept { return code_; }

private:
    status code_;
};

// The six ops (here rather than in op.hpp so that code that only names an op kind, such as
// the kernels, does not pull in the attribute machinery).
enum class op_kind {
    Convolution,
    ConvolutionBackwardData,
    ConvolutionBackwardWeights,
    ConvTranspose,
    ConvTransposeBackwardData,
    ConvTransposeBackwardWeights,
};

inline constexpr op_kind all_op_kinds[] = {
    op_kind::Convolution,   op_kind::ConvolutionBackwardData,   op_kind::ConvolutionBackwardWeights,
    op_kind::ConvTranspose, op_kind::ConvTransposeBackwardData, op_kind::ConvTransposeBackwardWeights,
};

/// The current JSON name ("ConvTransposeBackwardWeights", ...).
CONVGRAD_API const char *to_string(op_kind k);
/// Accepts current and legacy names (ConvolutionBackpropData, ConvTransposeBackpropFilters...).
CONVGRAD_API std::optional<op_kind> parse_op_kind(std::string_view name);
/// True for ConvTranspose, ConvTransposeBackwardData and ConvTransposeBackwardWeights.
CONVGRAD_API bool is_conv_transpose_family(op_kind k);

}  // namespace convgrad
