#include "convgrad/op.hpp"

#include <sstream>

namespace convgrad {

namespace {
struct kind_name {
    const char *name;
    op_kind kind;
};
constexpr kind_name kind_names[] = {
    {"Convolution", op_kind::Convolution},
    {"ConvolutionBackwardData", op_kind::ConvolutionBackwardData},
    {"ConvolutionBackwardWeights", op_kind::ConvolutionBackwardWeights},
    {"ConvTranspose", op_kind::ConvTranspose},
    {"ConvTransposeBackwardData", op_kind::ConvTransposeBackwardData},
    {"ConvTransposeBackwardWeights", op_kind::ConvTransposeBackwardWeights},
    // Names of the old graph spec (graph-spec-v0.9 / v1.0-alpha, dev-graph).
    {"ConvolutionBackpropData", op_kind::ConvolutionBackwardData},
    {"ConvolutionBackpropFilters", op_kind::ConvolutionBackwardWeights},
    {"ConvTransposeBackpropData", op_kind::ConvTransposeBackwardData},
    {"ConvTransposeBackpropFilters", op_kind::ConvTransposeBackwardWeights},
};
}  // namespace

const char *to_string(op_kind k) {
    for (const auto &kn : kind_names)
        if (kn.kind == k) return kn.name;
    return "?";
}

std::optional<op_kind> parse_op_kind(std::string_view name) {
    for (const auto &kn : kind_names)
        if (name == kn.name) return kn.kind;
    return std::nullopt;
}

bool is_conv_transpose_family(op_kind k) {
    return k == op_kind::ConvTranspose || k == op_kind::ConvTransposeBackwardData ||
           k == op_kind::ConvTransposeBackwardWeights;
}

const char *attr_type_name(const attr_value &v) {
    switch (v.index()) {
        case 0: return "s64";
        case 1: return "s64[]";
        case 2: return "f32";
        case 3: return "f32[]";
        case 4: return "string";
        case 5: return "bool";
    }
    return "?";
}

std::string canonical_attr_name(const std::string &name) {
    if (name == "filter_format") return "weights_format";
    if (name == "filter_shape") return "weights_shape";
    if (name == "output_shape") return "dst_shape";
    return name;
}

op::op(size_t id, op_kind kind, std::string name) : id_(id), kind_(kind), name_(std::move(name)) {}

op &op::set_attr(const std::string &name, attr_value value) {
    attrs_[canonical_attr_name(name)] = std::move(value);
    return *this;
}

op &op::add_input(const logical_tensor &lt) {
    inputs_.push_back(lt);
    return *this;
}
op &op::add_output(const logical_tensor &lt) {
    outputs_.push_back(lt);
    return *this;
}
op &op::set_inputs(std::vector<logical_tensor> lts) {
    inputs_ = std::move(lts);
    return *this;
}
op &op::set_outputs(std::vector<logical_tensor> lts) {
    outputs_ = std::move(lts);
    return *this;
}

const attr_value *op::find_attr(const std::string &name) const {
    auto it = attrs_.find(name);
    return it == attrs_.end() ? nullptr : &it->second;
}

std::string op::describe() const {
    std::ostringstream os;
    os << to_string(kind_) << " (op " << id_;
    if (!name_.empty()) os << " '" << name_ << "'";
    os << ")";
    return os.str();
}

}  // namespace convgrad
