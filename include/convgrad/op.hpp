// Ops: a kind, typed attributes and input/output logical tensors.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "convgrad/logical_tensor.hpp"

namespace convgrad {

/// An attribute value as oneDNN Graph serializes them: s64, s64[], f32, f32[], string, bool.
using attr_value =
    std::variant<int64_t, std::vector<int64_t>, float, std::vector<float>, std::string, bool>;

/// JSON type name of an attribute value ("s64", "s64[]", "f32", "f32[]", "string", "bool").
CONVGRAD_API const char *attr_type_name(const attr_value &v);

class CONVGRAD_API op {
public:
    op(size_t id, op_kind kind, std::string name = {});

    /// Sets an attribute; legacy names (filter_format, filter_shape, output_shape) are stored
    /// under their current names. Validity is checked when the op is added to a graph.
    op &set_attr(const std::string &name, attr_value value);
    op &add_input(const logical_tensor &lt);
    op &add_output(const logical_tensor &lt);
    op &set_inputs(std::vector<logical_tensor> lts);
    op &set_outputs(std::vector<logical_tensor> lts);

    size_t id() const { return id_; }
    op_kind kind() const { return kind_; }
    const std::string &name() const { return name_; }
    const std::map<std::string, attr_value> &attrs() const { return attrs_; }
    const attr_value *find_attr(const std::string &name) const;
    const std::vector<logical_tensor> &inputs() const { return inputs_; }
    const std::vector<logical_tensor> &outputs() const { return outputs_; }

    /// "ConvTransposeBackwardWeights (op 3)": how messages name the op.
    std::string describe() const;

private:
    size_t id_;
    op_kind kind_;
    std::string name_;
    std::map<std::string, attr_value> attrs_;
    std::vector<logical_tensor> inputs_;
    std::vector<logical_tensor> outputs_;
};

/// Maps a legacy attribute name to its current name (identity for current names).
CONVGRAD_API std::string canonical_attr_name(const std::string &name);

}  // namespace convgrad
