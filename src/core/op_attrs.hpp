// Typed view of a convolution op's attributes, with defaults applied (schema already checked).
#pragma once

#include <optional>

#include "convgrad/op.hpp"

namespace convgrad::detail {

enum class auto_pad_kind { none, same_upper, same_lower, valid };

/// The weights formats, all described by where the mirror convolution's O axis (output
/// channels, full count), its I axis (input channels per group) and the kernel axes are.
enum class weights_format { oix, xio, iox, xoi, legacy_oix, legacy_xio };

struct weights_axes {
    int o, i, k0;  // physical axis of O, of I, of the first kernel axis
};
weights_axes axes_of(weights_format f, int rank);
const char *to_string(weights_format f);

struct conv_attrs {
    dims strides, dilations, pads_begin, pads_end;  // pads: empty lists already made zeros? no: raw
    auto_pad_kind auto_pad = auto_pad_kind::none;
    dim_t groups = 1;
    bool ncx = false;
    weights_format wformat = weights_format::xio;
    std::optional<dims> output_padding;
    std::optional<dims> shape_attr;  // dst_shape or weights_shape; absent when all zeros
};

/// Reads the attributes of an op that passed validate_op_schema().
conv_attrs read_attrs(const op &o);

/// Throws invalid_graph_op unless the op's attribute names, types and values, its input and
/// output counts and data types fit its kind. Run by graph::add_op().
void validate_op_schema(const op &o);

}  // namespace convgrad::detail
