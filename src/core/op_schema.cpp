// The schema of the six ops: which attributes, of which types and values, how many inputs and
// outputs of which data types. Checked when an op is added to a graph.
#include <algorithm>
#include <cctype>

#include "core/op_attrs.hpp"
#include "core/op_error.hpp"

namespace convgrad::detail {
namespace {

enum class attr_kind { s64, s64_list, string };

struct attr_spec {
    const char *name;
    attr_kind kind;
    bool required;
};

constexpr attr_spec common_attrs[] = {
    {"strides", attr_kind::s64_list, true},     {"pads_begin", attr_kind::s64_list, true},
    {"pads_end", attr_kind::s64_list, true},    {"dilations", attr_kind::s64_list, true},
    {"auto_pad", attr_kind::string, false},     {"groups", attr_kind::s64, false},
    {"data_format", attr_kind::string, false},  {"weights_format", attr_kind::string, false},
};
constexpr attr_spec output_padding_attr = {"output_padding", attr_kind::s64_list, false};
constexpr attr_spec dst_shape_attr = {"dst_shape", attr_kind::s64_list, false};
constexpr attr_spec weights_shape_attr = {"weights_shape", attr_kind::s64_list, false};

std::vector<attr_spec> attrs_of(op_kind k) {
    std::vector<attr_spec> v(std::begin(common_attrs), std::end(common_attrs));
    switch (k) {
        case op_kind::Convolution: break;
        case op_kind::ConvolutionBackwardData:
            v.push_back(output_padding_attr);
            v.push_back(dst_shape_attr);
            break;
        case op_kind::ConvolutionBackwardWeights: v.push_back(weights_shape_attr); break;
        case op_kind::ConvTranspose: v.push_back(output_padding_attr); break;
        // SEMANTICS §4: output_padding is listed by the seeds for the two ConvTranspose
        // gradients; it is accepted and range-checked there, and otherwise unused.
        case op_kind::ConvTransposeBackwardData: v.push_back(output_padding_attr); break;
        case op_kind::ConvTransposeBackwardWeights:
            v.push_back(output_padding_attr);
            v.push_back(weights_shape_attr);
            break;
    }
    return v;
}

const char *kind_name(attr_kind k) {
    switch (k) {
        case attr_kind::s64: return "s64";
        case attr_kind::s64_list: return "s64[]";
        case attr_kind::string: return "string";
    }
    return "?";
}

bool has_kind(const attr_value &v, attr_kind k) {
    switch (k) {
        case attr_kind::s64: return std::holds_alternative<int64_t>(v);
        case attr_kind::s64_list: return std::holds_alternative<std::vector<int64_t>>(v);
        case attr_kind::string: return std::holds_alternative<std::string>(v);
    }
    return false;
}

std::string upper(std::string s) {
    for (char &c : s) c = char(std::toupper(static_cast<unsigned char>(c)));
    return s;
}

bool parse_auto_pad(const std::string &s, auto_pad_kind &out) {
    const std::string u = upper(s);
    if (u == "NONE") out = auto_pad_kind::none;
    else if (u == "SAME_UPPER") out = auto_pad_kind::same_upper;
    else if (u == "SAME_LOWER") out = auto_pad_kind::same_lower;
    else if (u == "VALID") out = auto_pad_kind::valid;
    else return false;
    return true;
}

bool parse_weights_format(op_kind k, const std::string &s, weights_format &out) {
    if (is_conv_transpose_family(k)) {
        if (s == "XOI") out = weights_format::xoi;
        else if (s == "IOX") out = weights_format::iox;
        // Legacy values of the old ConvTranspose spec (seed 004): OIX = [OC/G, IC, K].
        else if (s == "OIX") out = weights_format::legacy_oix;
        else if (s == "XIO") out = weights_format::legacy_xio;
        else return false;
    } else {
        if (s == "XIO") out = weights_format::xio;
        else if (s == "OIX") out = weights_format::oix;
        else return false;
    }
    return true;
}

const dims &list_attr(const op &o, const char *name) {
    return std::get<std::vector<int64_t>>(*o.find_attr(name));
}

void check_list_min(const op &o, const op_error &err, const char *name, dim_t min_value,
                    const char *rule) {
    const attr_value *v = o.find_attr(name);
    if (!v) return;
    for (dim_t x : std::get<std::vector<int64_t>>(*v))
        if (x < min_value)
            err.fail(status::invalid_graph_op, op_error::attr_subject(name), rule,
                     ">= " + std::to_string(min_value), to_string(list_attr(o, name)));
}

}  // namespace

const char *to_string(weights_format f) {
    switch (f) {
        case weights_format::oix: return "OIX";
        case weights_format::xio: return "XIO";
        case weights_format::iox: return "IOX";
        case weights_format::xoi: return "XOI";
        case weights_format::legacy_oix: return "OIX";
        case weights_format::legacy_xio: return "XIO";
    }
    return "?";
}

weights_axes axes_of(weights_format f, int r) {
    switch (f) {
        case weights_format::oix:  // [OC, IC/G, K]
        case weights_format::iox:  // [IC, OC/G, K]: O and I of the mirror convolution
            return {0, 1, 2};
        case weights_format::xio:  // [K, IC/G, OC]
        case weights_format::xoi:  // [K, OC/G, IC]
            return {r - 1, r - 2, 0};
        case weights_format::legacy_oix:  // [OC/G, IC, K]
            return {1, 0, 2};
        case weights_format::legacy_xio:  // [K, IC, OC/G]
            return {r - 2, r - 1, 0};
    }
    return {0, 1, 2};
}

void validate_op_schema(const op &o) {
    const op_error err(o);
    const op_kind k = o.kind();
    const auto specs = attrs_of(k);

    // Attributes: known names, right types, required ones present.
    for (const auto &entry : o.attrs()) {
        // (Not a structured binding: clang 14 cannot capture one in the lambda.)
        const auto &name = entry.first;
        const auto &value = entry.second;
        auto it = std::find_if(specs.begin(), specs.end(),
                               [&](const attr_spec &s) { return name == s.name; });
        if (it == specs.end())
            err.fail(status::invalid_graph_op, op_error::attr_subject(name),
                     std::string("is not defined for ") + to_string(k));
        if (!has_kind(value, it->kind))
            err.fail(status::invalid_graph_op, op_error::attr_subject(name), "wrong value type",
                     kind_name(it->kind), attr_type_name(value));
    }
    for (const auto &s : specs)
        if (s.required && !o.find_attr(s.name))
            err.fail(status::invalid_graph_op, op_error::attr_subject(s.name),
                     "is required and missing");

    // Values.
    if (auto *v = o.find_attr("auto_pad")) {
        auto_pad_kind ap;
        if (!parse_auto_pad(std::get<std::string>(*v), ap))
            err.fail(status::invalid_graph_op, op_error::attr_subject("auto_pad"),
                     "unknown value", "None, SAME_UPPER, SAME_LOWER or VALID (any case)",
                     "'" + std::get<std::string>(*v) + "'");
    }
    if (auto *v = o.find_attr("data_format")) {
        const auto &s = std::get<std::string>(*v);
        if (s != "NXC" && s != "NCX")
            err.fail(status::invalid_graph_op, op_error::attr_subject("data_format"),
                     "unknown value", "NXC or NCX", "'" + s + "'");
    }
    if (auto *v = o.find_attr("weights_format")) {
        weights_format wf;
        const auto &s = std::get<std::string>(*v);
        if (!parse_weights_format(k, s, wf))
            err.fail(status::invalid_graph_op, op_error::attr_subject("weights_format"),
                     std::string("unknown value for ") + to_string(k),
                     is_conv_transpose_family(k) ? "XOI or IOX (legacy: XIO, OIX)" : "XIO or OIX",
                     "'" + s + "'");
    }
    if (auto *v = o.find_attr("groups")) {
        if (std::get<int64_t>(*v) < 1)
            err.fail(status::invalid_graph_op, op_error::attr_subject("groups"),
                     "must be positive", ">= 1", std::to_string(std::get<int64_t>(*v)));
    }
    check_list_min(o, err, "strides", 1, "every stride must be positive");
    check_list_min(o, err, "dilations", 1, "every dilation must be positive (1 = dense)");
    check_list_min(o, err, "pads_begin", 0, "pads must be non-negative");
    check_list_min(o, err, "pads_end", 0, "pads must be non-negative");
    check_list_min(o, err, "output_padding", 0, "output_padding must be non-negative");
    check_list_min(o, err, "dst_shape", 0, "dims must be non-negative");
    check_list_min(o, err, "weights_shape", 0, "dims must be non-negative");

    // Spatial lists agree with each other (their length against the tensors is checked when
    // the shapes are known, at compile time).
    const size_t ns = list_attr(o, "strides").size();
    if (ns < 1 || ns > 3)
        err.fail(status::invalid_graph_op, op_error::attr_subject("strides"),
                 "needs one entry per spatial axis (1-D, 2-D or 3-D)", "1 to 3 entries",
                 std::to_string(ns));
    for (const char *name : {"dilations", "pads_begin", "pads_end"}) {
        const size_t n = list_attr(o, name).size();
        const bool may_be_empty = name[0] == 'p';
        if (n != ns && !(may_be_empty && n == 0))
            err.fail(status::invalid_graph_op, op_error::attr_subject(name),
                     "needs as many entries as 'strides'", std::to_string(ns), std::to_string(n));
    }

    // Inputs and outputs.
    const size_t nin = o.inputs().size();
    const bool two_only = k == op_kind::ConvTransposeBackwardData;
    if (nin < 2 || nin > (two_only ? 2u : 3u))
        err.fail(status::invalid_graph_op, "inputs", "wrong number of inputs",
                 two_only ? "2" : "2 or 3", std::to_string(nin));
    if (o.outputs().size() != 1)
        err.fail(status::invalid_graph_op, "outputs", "wrong number of outputs", "1",
                 std::to_string(o.outputs().size()));

    // Data types: all float tensors share one of f32/bf16/f16; shape inputs are s32.
    const bool third_is_shape = nin == 3 && k != op_kind::Convolution && k != op_kind::ConvTranspose;
    data_type common = data_type::undef;
    std::string first_name;  // owned: the names passed in are temporaries
    auto check_float = [&](const logical_tensor &lt, const std::string &what) {
        const data_type dt = lt.dtype();
        if (dt == data_type::undef) return;
        if (dt != data_type::f32 && dt != data_type::bf16 && dt != data_type::f16)
            err.fail(status::invalid_data_type, err.tensor_subject(what.c_str(), lt),
                     "unsupported data type", "f32, bf16 or f16", to_string(dt));
        if (common == data_type::undef) {
            common = dt;
            first_name = what;
        } else if (dt != common)
            err.fail(status::invalid_data_type, err.tensor_subject(what.c_str(), lt),
                     "all float tensors of the op share one data type (that of " + first_name + ")",
                     to_string(common), to_string(dt));
    };
    for (size_t i = 0; i < nin; ++i) {
        const std::string what = "input " + std::to_string(i);
        if (i == 2 && third_is_shape) {
            const data_type dt = o.inputs()[i].dtype();
            if (dt != data_type::s32 && dt != data_type::undef)
                err.fail(status::invalid_data_type, err.tensor_subject("input 2", o.inputs()[i]),
                         "shape inputs are s32", "s32", to_string(dt));
        } else {
            check_float(o.inputs()[i], what);
        }
    }
    check_float(o.outputs()[0], "output 0");
}

conv_attrs read_attrs(const op &o) {
    conv_attrs a;
    a.strides = list_attr(o, "strides");
    a.dilations = list_attr(o, "dilations");
    a.pads_begin = list_attr(o, "pads_begin");
    a.pads_end = list_attr(o, "pads_end");
    if (a.pads_begin.empty()) a.pads_begin.assign(a.strides.size(), 0);
    if (a.pads_end.empty()) a.pads_end.assign(a.strides.size(), 0);
    if (auto *v = o.find_attr("auto_pad")) parse_auto_pad(std::get<std::string>(*v), a.auto_pad);
    if (auto *v = o.find_attr("groups")) a.groups = std::get<int64_t>(*v);
    if (auto *v = o.find_attr("data_format")) a.ncx = std::get<std::string>(*v) == "NCX";
    a.wformat = is_conv_transpose_family(o.kind()) ? weights_format::xoi : weights_format::xio;
    if (auto *v = o.find_attr("weights_format"))
        parse_weights_format(o.kind(), std::get<std::string>(*v), a.wformat);
    if (auto *v = o.find_attr("output_padding")) a.output_padding = std::get<std::vector<int64_t>>(*v);
    for (const char *name : {"dst_shape", "weights_shape"}) {
        if (auto *v = o.find_attr(name)) {
            const auto &d = std::get<std::vector<int64_t>>(*v);
            // The serialized default is twelve zeros: an all-zero list means "not given".
            if (std::any_of(d.begin(), d.end(), [](dim_t x) { return x != 0; })) a.shape_attr = d;
        }
    }
    return a;
}

}  // namespace convgrad::detail
