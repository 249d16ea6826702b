// benchdnn graph driver rewrites applied to a JSON document: --dt, --mb, --in-shapes,
// --op-attrs (tests/benchdnn/graph/flex_rewrite.cpp). Part of the command-line tool (and its
// tests and fuzzer), not of the library: the library reads and writes graphs as they are.
#pragma once

#include <optional>
#include <string>

#include "convgrad/json.hpp"

namespace convgrad::tool {

struct rewrite_options {
    std::optional<data_type> dt;  // --dt: every float tensor gets this type
    std::optional<dim_t> mb;      // --mb: batch of the data inputs (not for the ops benchdnn skips)
    std::string in_shapes;        // --in-shapes=ID:AxBxC[*tag]+ID:...
    std::string op_attrs;         // --op-attrs=OPID:name:value*name:value+OPID:...

    bool any() const { return dt || mb || !in_shapes.empty() || !op_attrs.empty(); }
};

/// "2x28x28x32" -> {2,28,28,32}. Throws convgrad::error (invalid_arguments) naming `what`.
dims parse_dims(const std::string &s, const std::string &what);

/// Strides of a dense tensor of `shape` stored in the order of a oneDNN format tag
/// ("abcd" plain, "acdb" channels last, ...: letters outermost to innermost).
dims tag_strides(const dims &shape, const std::string &tag);
/// The tag of the given strides (ties keep logical order); "" when unknown.
std::string strides_tag(const dims &shape, const dims &strides);

/// True when benchdnn applies --mb to input `index` of an op of this kind.
bool mb_applies(op_kind kind, size_t index);

/// Applies the rewrites in benchdnn's order (shapes and mb, data type, attributes). When any
/// rewrite is given, the shapes of every op output are set unknown so that they are inferred
/// again. Returns notes worth telling the user (e.g. --mb not applied to an op).
std::vector<std::string> apply_rewrite(json::document &doc, const rewrite_options &o);

}  // namespace convgrad::tool
