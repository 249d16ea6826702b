// oneDNN Graph's JSON serialization: read a graph dump (benchdnn's --case files) into convgrad
// ops and logical tensors, and write one back in the same form.
//
// Format (what oneDNN's graph::serialize writes and benchdnn's graph driver reads):
//   {"version", "engine_kind", "fpmath_mode", ["fpmath_mode_apply_to_int"], ["input_ports"],
//    ["output_ports"], "graph": [op...]}
//   op: {"id", "name", "kind", "attrs": {name: {"type", "value"}}, "inputs": [lt], "outputs": [lt]}
//   lt: {"id", "dtype", "shape", "stride", "layout_type", "property_type"}; unknown dims (and
//       an unknown rank) are written as INT64_MIN.
// Errors are convgrad::error naming the source, the op (id and index in "graph") and the field;
// syntax errors give the byte position.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "convgrad/graph.hpp"

namespace convgrad::json {

/// A JSON graph document: the ops, and the top-level fields kept so that it can be written back.
struct CONVGRAD_API document {
    std::string version = "3.7.0";
    std::string engine_kind = "cpu";
    std::string fpmath_mode = "strict";
    std::optional<std::string> fpmath_mode_apply_to_int;  // "true"/"false" in newer dumps
    std::optional<std::vector<size_t>> input_ports;      // absent in older dumps
    std::optional<std::vector<size_t>> output_ports;
    std::vector<op> ops;
    /// Per op: attribute names in the order the file gave them. The writer follows it (then
    /// writes any other attribute in name order), so that a file round-trips unchanged.
    std::vector<std::vector<std::string>> attr_order;

    /// Adds every op to a new graph and finalizes it (throws what graph::add_op throws).
    graph to_graph() const;
    /// Tensor ids consumed by some op and produced by none, in order of first use.
    std::vector<size_t> graph_inputs() const;
    /// Tensor ids produced by some op and consumed by none, in order of production.
    std::vector<size_t> graph_outputs() const;
    /// The op with this id (nullptr if none).
    const op *find_op(size_t id) const;
    op *find_op(size_t id);
};

struct read_options {
    /// Check each op against the op schema while reading (attribute names, types, values, input
    /// counts, data types), so that errors carry the op's position in the file.
    bool validate = true;
};

/// Parses a JSON graph. `source` names the text in error messages (a file name).
CONVGRAD_API document parse(std::string_view text, const std::string &source = "<json>",
               const read_options &opts = {});
/// Reads and parses a file.
CONVGRAD_API document read_file(const std::string &path, const read_options &opts = {});

/// Serializes with oneDNN's field order; `indent` < 0 writes one line.
CONVGRAD_API std::string write(const document &doc, int indent = 2);
CONVGRAD_API void write_file(const document &doc, const std::string &path, int indent = 2);

/// A document holding the ops of a graph (default top-level fields, ports left out).
CONVGRAD_API document from_graph(const graph &g);

}  // namespace convgrad::json
