// Reading and writing oneDNN Graph JSON graphs with nlohmann-json (ordered, so that field order
// is kept both ways).
#include "convgrad/json.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/op_attrs.hpp"

namespace convgrad::json {

using ojson = nlohmann::ordered_json;

namespace {

// Where in the document a value sits, for messages: "case.json: graph[0] (op 3 'CONV_0'): attrs.strides".
struct position {
    std::string source;
    std::string op_part;  // empty at top level

    [[noreturn]] void fail(const std::string &field, const std::string &what,
                           status code = status::invalid_graph_op) const {
        std::string msg = source + ": ";
        if (!op_part.empty()) msg += op_part + ": ";
        if (!field.empty()) msg += field + ": ";
        throw error(code, msg + what);
    }
};

const char *json_type(const ojson &j) { return j.type_name(); }

// nlohmann keeps integers above INT64_MAX as unsigned: get<int64_t>() would wrap them negative.
int64_t as_int64(const position &pos, const ojson &j, const std::string &field) {
    if (j.is_number_unsigned() && j.get<uint64_t>() > uint64_t(INT64_MAX))
        pos.fail(field, "integer " + j.dump() + " does not fit a 64-bit signed integer",
                 status::invalid_shape);
    return j.get<int64_t>();
}

int64_t get_int(const position &pos, const ojson &j, const std::string &field) {
    if (!j.is_number_integer())
        pos.fail(field, std::string("expected an integer, got ") + json_type(j) + " " + j.dump());
    return as_int64(pos, j, field);
}

// A JSON number as an f32 attribute: converting a double out of float's range is undefined.
float as_float(const position &pos, const ojson &j, const std::string &field) {
    const double v = j.get<double>();
    if (std::isfinite(v) && std::fabs(v) > double(std::numeric_limits<float>::max()))
        pos.fail(field, "number " + j.dump() + " is out of the range of f32");
    return float(v);
}

size_t get_id(const position &pos, const ojson &j, const std::string &field) {
    const int64_t v = get_int(pos, j, field);
    if (v < 0) pos.fail(field, "expected a non-negative id, got " + std::to_string(v));
    return size_t(v);
}

std::string get_string(const position &pos, const ojson &j, const std::string &field) {
    if (!j.is_string())
        pos.fail(field, std::string("expected a string, got ") + json_type(j) + " " + j.dump());
    return j.get<std::string>();
}

dims get_dims(const position &pos, const ojson &j, const std::string &field) {
    if (!j.is_array()) pos.fail(field, std::string("expected a list of integers, got ") + json_type(j));
    dims d;
    for (size_t i = 0; i < j.size(); ++i)
        d.push_back(get_int(pos, j[i], field + "[" + std::to_string(i) + "]"));
    return d;
}

const ojson &member(const position &pos, const ojson &obj, const char *name,
                    const std::string &prefix = {}) {
    auto it = obj.find(name);
    if (it == obj.end()) pos.fail(prefix + name, "is missing");
    return *it;
}

attr_value parse_attr(const position &pos, const std::string &name, const ojson &j) {
    const std::string field = "attrs." + name;
    if (!j.is_object())
        pos.fail(field, std::string("expected an object {\"type\", \"value\"}, got ") + json_type(j));
    const std::string type = get_string(pos, member(pos, j, "type", field + "."), field + ".type");
    const ojson &v = member(pos, j, "value", field + ".");
    const std::string vf = field + ".value";
    auto mismatch = [&](const char *expected) {
        pos.fail(vf, std::string("attribute type '") + type + "' needs " + expected + ", got " +
                         json_type(v) + " " + v.dump());
    };
    if (type == "s64") {
        if (!v.is_number_integer()) mismatch("an integer");
        return as_int64(pos, v, vf);
    }
    if (type == "s64[]") {
        if (!v.is_array()) mismatch("a list of integers");
        std::vector<int64_t> out;
        for (const auto &e : v) {
            if (!e.is_number_integer()) mismatch("a list of integers");
            out.push_back(as_int64(pos, e, vf));
        }
        return out;
    }
    if (type == "f32") {
        if (!v.is_number()) mismatch("a number");
        return as_float(pos, v, vf);
    }
    if (type == "f32[]") {
        if (!v.is_array()) mismatch("a list of numbers");
        std::vector<float> out;
        for (const auto &e : v) {
            if (!e.is_number()) mismatch("a list of numbers");
            out.push_back(as_float(pos, e, vf));
        }
        return out;
    }
    if (type == "string") {
        if (!v.is_string()) mismatch("a string");
        return v.get<std::string>();
    }
    if (type == "bool") {
        if (v.is_boolean()) return v.get<bool>();
        if (v.is_number_integer() && (v.get<int64_t>() == 0 || v.get<int64_t>() == 1))
            return v.get<int64_t>() == 1;
        mismatch("true or false");
    }
    pos.fail(field + ".type", "unknown attribute type '" + type +
                                  "' (expected s64, s64[], f32, f32[], string or bool)");
}

logical_tensor parse_lt(const position &pos, const ojson &j, const std::string &field) {
    if (!j.is_object()) pos.fail(field, std::string("expected a logical tensor object, got ") + json_type(j));
    const size_t id = get_id(pos, member(pos, j, "id", field + "."), field + ".id");
    const std::string f = field + " (tensor " + std::to_string(id) + ")";
    const std::string dts = get_string(pos, member(pos, j, "dtype", f + "."), f + ".dtype");
    data_type dt;
    if (!parse_data_type(dts, dt))
        pos.fail(f + ".dtype", "data type '" + dts + "' is not supported (f32, bf16, f16, s32, undef)",
                 status::invalid_data_type);
    dims shape = get_dims(pos, member(pos, j, "shape", f + "."), f + ".shape");
    dims stride;
    if (auto it = j.find("stride"); it != j.end()) stride = get_dims(pos, *it, f + ".stride");
    std::string layout = "strided";
    if (auto it = j.find("layout_type"); it != j.end()) layout = get_string(pos, *it, f + ".layout_type");
    property_type pt = property_type::undef;
    if (auto it = j.find("property_type"); it != j.end()) {
        const std::string p = get_string(pos, *it, f + ".property_type");
        if (p == "undef") pt = property_type::undef;
        else if (p == "variable") pt = property_type::variable;
        else if (p == "constant") pt = property_type::constant;
        else pos.fail(f + ".property_type", "'" + p + "' is not supported (undef, variable, constant)");
    }
    // oneDNN writes an unknown rank as a single INT64_MIN.
    if (shape.size() == 1 && shape[0] == unknown_dim) {
        // (The property of a tensor of unknown rank is not kept: nothing depends on it.)
        return logical_tensor::unknown(id, dt);
    }
    for (dim_t d : shape)
        if (d < 0 && d != unknown_dim)
            pos.fail(f + ".shape", "negative dimension " + std::to_string(d) + " (unknown is INT64_MIN)",
                     status::invalid_shape);
    if (layout == "any") return logical_tensor::any(id, dt, shape, pt);
    if (layout != "strided" && layout != "undef")
        pos.fail(f + ".layout_type", "'" + layout + "' is not supported (strided, any, undef)");
    if (stride.size() == 1 && stride[0] == unknown_dim && shape.size() != 1)
        stride.assign(shape.size(), unknown_dim);
    if (stride.empty() && !shape.empty()) stride.assign(shape.size(), unknown_dim);
    if (stride.size() != shape.size())
        pos.fail(f + ".stride", "has " + std::to_string(stride.size()) + " entries for a shape of rank " +
                                    std::to_string(shape.size()),
                 status::invalid_shape);
    bool all_unknown = true;
    for (dim_t s : stride) all_unknown = all_unknown && s == unknown_dim;
    // Strides unknown with a known shape: dense row-major (what oneDNN's reader falls back to).
    if (all_unknown) return logical_tensor(id, dt, shape, pt);
    return logical_tensor(id, dt, shape, stride, pt);
}

std::vector<size_t> parse_ports(const position &pos, const ojson &j, const char *name) {
    if (!j.is_array()) pos.fail(name, std::string("expected a list of tensor ids, got ") + json_type(j));
    std::vector<size_t> v;
    for (size_t i = 0; i < j.size(); ++i)
        v.push_back(get_id(pos, j[i], std::string(name) + "[" + std::to_string(i) + "]"));
    return v;
}

std::string op_part(size_t index, const ojson &j) {
    std::string s = "graph[" + std::to_string(index) + "]";
    if (j.is_object()) {
        auto it = j.find("id");
        if (it != j.end() && it->is_number_integer()) s += " (op " + std::to_string(it->get<int64_t>());
        else return s;
        auto nt = j.find("name");
        if (nt != j.end() && nt->is_string() && !nt->get<std::string>().empty())
            s += " '" + nt->get<std::string>() + "'";
        s += ")";
    }
    return s;
}

bool same_tensor(const logical_tensor &a, const logical_tensor &b) {
    return a.dtype() == b.dtype() && a.ndims() == b.ndims() && a.shape() == b.shape();
}

}  // namespace

document parse(std::string_view text, const std::string &source, const read_options &opts) {
    ojson root;
    try {
        root = ojson::parse(text.begin(), text.end());
    } catch (const ojson::parse_error &e) {
        throw error(status::invalid_arguments, source + ": JSON syntax error at byte " +
                                                   std::to_string(e.byte) + ": " + e.what());
    } catch (const ojson::exception &e) {  // out_of_range: a number too large (1e400)
        throw error(status::invalid_arguments, source + ": invalid JSON: " + e.what());
    }
    const position top{source, {}};
    if (!root.is_object()) top.fail("", std::string("expected a JSON object at top level, got ") + json_type(root));

    document doc;
    if (auto it = root.find("version"); it != root.end()) doc.version = get_string(top, *it, "version");
    if (auto it = root.find("engine_kind"); it != root.end())
        doc.engine_kind = get_string(top, *it, "engine_kind");
    if (auto it = root.find("fpmath_mode"); it != root.end()) {
        doc.fpmath_mode = get_string(top, *it, "fpmath_mode");
        fpmath_mode m;
        if (!parse_fpmath_mode(doc.fpmath_mode, m))
            top.fail("fpmath_mode", "must be one of strict, bf16, f16, tf32, any; got \"" + doc.fpmath_mode + "\"");
    }
    if (auto it = root.find("fpmath_mode_apply_to_int"); it != root.end()) {
        if (it->is_boolean()) doc.fpmath_mode_apply_to_int = it->get<bool>() ? "true" : "false";
        else doc.fpmath_mode_apply_to_int = get_string(top, *it, "fpmath_mode_apply_to_int");
    }
    if (auto it = root.find("input_ports"); it != root.end())
        doc.input_ports = parse_ports(top, *it, "input_ports");
    if (auto it = root.find("output_ports"); it != root.end())
        doc.output_ports = parse_ports(top, *it, "output_ports");
    const ojson &g = member(top, root, "graph");
    if (!g.is_array()) top.fail("graph", std::string("expected a list of ops, got ") + json_type(g));

    std::map<size_t, logical_tensor> seen;  // tensor id -> first definition
    std::set<size_t> op_ids;
    for (size_t i = 0; i < g.size(); ++i) {
        const ojson &jo = g[i];
        const position pos{source, op_part(i, jo)};
        if (!jo.is_object()) pos.fail("", std::string("expected an op object, got ") + json_type(jo));
        const size_t id = get_id(pos, member(pos, jo, "id"), "id");
        if (!op_ids.insert(id).second) pos.fail("id", "op id " + std::to_string(id) + " is used twice");
        std::string name;
        if (auto it = jo.find("name"); it != jo.end()) name = get_string(pos, *it, "name");
        const std::string kind_s = get_string(pos, member(pos, jo, "kind"), "kind");
        const auto kind = parse_op_kind(kind_s);
        if (!kind)
            pos.fail("kind", "unknown op kind '" + kind_s +
                                 "' (convgrad implements Convolution, ConvolutionBackwardData, "
                                 "ConvolutionBackwardWeights, ConvTranspose, "
                                 "ConvTransposeBackwardData, ConvTransposeBackwardWeights)",
                     status::unimplemented);
        op o(id, *kind, name);
        std::vector<std::string> order;
        if (auto it = jo.find("attrs"); it != jo.end()) {
            if (!it->is_object()) pos.fail("attrs", std::string("expected an object, got ") + json_type(*it));
            for (auto a = it->begin(); a != it->end(); ++a) {
                // Internal attributes of oneDNN's dumps that carry no meaning for the op.
                if (a.key() == "op_depth" || a.key() == "matched") continue;
                o.set_attr(a.key(), parse_attr(pos, a.key(), a.value()));
                const std::string canon = canonical_attr_name(a.key());
                if (std::find(order.begin(), order.end(), canon) == order.end()) order.push_back(canon);
            }
        }
        for (const char *side : {"inputs", "outputs"}) {
            const ojson &list = member(pos, jo, side);
            if (!list.is_array()) pos.fail(side, std::string("expected a list of logical tensors, got ") + json_type(list));
            for (size_t k = 0; k < list.size(); ++k) {
                const std::string field = std::string(side) + "[" + std::to_string(k) + "]";
                logical_tensor lt = parse_lt(pos, list[k], field);
                auto [it, fresh] = seen.emplace(lt.id(), lt);
                if (!fresh && !same_tensor(it->second, lt))
                    pos.fail(field, "tensor id " + std::to_string(lt.id()) + " was defined before as " +
                                        it->second.to_string() + ", here as " + lt.to_string(),
                             status::invalid_shape);
                if (side[0] == 'i') o.add_input(lt);
                else o.add_output(lt);
            }
        }
        if (opts.validate) {
            try {
                detail::validate_op_schema(o);
            } catch (const error &e) {
                pos.fail("", e.what(), e.code());
            }
        }
        doc.ops.push_back(std::move(o));
        doc.attr_order.push_back(std::move(order));
    }

    // Ports must name tensors of the graph: inputs consumed by an op, outputs produced by one.
    std::set<size_t> consumed, produced;
    for (const auto &o : doc.ops) {
        for (const auto &lt : o.inputs()) consumed.insert(lt.id());
        for (const auto &lt : o.outputs()) {
            if (!produced.insert(lt.id()).second)
                top.fail("graph", "tensor " + std::to_string(lt.id()) + " is produced by two ops");
        }
    }
    if (doc.input_ports)
        for (size_t i = 0; i < doc.input_ports->size(); ++i) {
            const size_t id = (*doc.input_ports)[i];
            if (!consumed.count(id))
                top.fail("input_ports[" + std::to_string(i) + "]",
                         "dangling tensor id " + std::to_string(id) + ": no op consumes it");
        }
    if (doc.output_ports)
        for (size_t i = 0; i < doc.output_ports->size(); ++i) {
            const size_t id = (*doc.output_ports)[i];
            if (!produced.count(id))
                top.fail("output_ports[" + std::to_string(i) + "]",
                         "dangling tensor id " + std::to_string(id) + ": no op produces it");
        }
    return doc;
}

document read_file(const std::string &path, const read_options &opts) {
    std::ifstream f(path, std::ios::binary);
    if (!f) throw error(status::invalid_arguments, path + ": cannot open the file");
    std::ostringstream ss;
    ss << f.rdbuf();
    return parse(ss.str(), path, opts);
}

namespace {

ojson dims_json(const dims &d) {
    ojson a = ojson::array();
    for (dim_t x : d) a.push_back(x);
    return a;
}

ojson lt_json(const logical_tensor &lt) {
    ojson j;
    j["id"] = lt.id();
    j["dtype"] = to_string(lt.dtype());
    if (lt.ndims() < 0) {
        j["shape"] = dims_json({unknown_dim});
        j["stride"] = dims_json({unknown_dim});
    } else {
        j["shape"] = dims_json(lt.shape());
        if (lt.layout() == layout_type::strided && lt.strides().size() == lt.shape().size())
            j["stride"] = dims_json(lt.strides());
        else j["stride"] = dims_json(dims(lt.shape().size(), unknown_dim));
    }
    j["layout_type"] = lt.ndims() < 0 && lt.layout() == layout_type::undef
                           ? "undef"
                           : to_string(lt.layout() == layout_type::undef ? layout_type::strided
                                                                        : lt.layout());
    j["property_type"] = to_string(lt.property());
    return j;
}

ojson attr_json(const attr_value &v) {
    ojson j;
    j["type"] = attr_type_name(v);
    std::visit([&](const auto &x) { j["value"] = x; }, v);
    return j;
}

ojson doc_json(const document &doc) {
    ojson root;
    root["version"] = doc.version;
    root["engine_kind"] = doc.engine_kind;
    root["fpmath_mode"] = doc.fpmath_mode;
    if (doc.fpmath_mode_apply_to_int) root["fpmath_mode_apply_to_int"] = *doc.fpmath_mode_apply_to_int;
    if (doc.input_ports) root["input_ports"] = *doc.input_ports;
    if (doc.output_ports) root["output_ports"] = *doc.output_ports;
    ojson g = ojson::array();
    for (size_t i = 0; i < doc.ops.size(); ++i) {
        const op &o = doc.ops[i];
        ojson jo;
        jo["id"] = o.id();
        jo["name"] = o.name();
        jo["kind"] = to_string(o.kind());
        ojson attrs = ojson::object();
        std::set<std::string> written;
        if (i < doc.attr_order.size())
            for (const auto &name : doc.attr_order[i])
                if (const attr_value *v = o.find_attr(name)) {
                    attrs[name] = attr_json(*v);
                    written.insert(name);
                }
        for (const auto &[name, v] : o.attrs())
            if (!written.count(name)) attrs[name] = attr_json(v);
        jo["attrs"] = std::move(attrs);
        ojson ins = ojson::array(), outs = ojson::array();
        for (const auto &lt : o.inputs()) ins.push_back(lt_json(lt));
        for (const auto &lt : o.outputs()) outs.push_back(lt_json(lt));
        jo["inputs"] = std::move(ins);
        jo["outputs"] = std::move(outs);
        g.push_back(std::move(jo));
    }
    root["graph"] = std::move(g);
    return root;
}

}  // namespace

std::string write(const document &doc, int indent) { return doc_json(doc).dump(indent); }

void write_file(const document &doc, const std::string &path, int indent) {
    std::ofstream f(path, std::ios::binary);
    if (!f) throw error(status::invalid_arguments, path + ": cannot open the file for writing");
    f << write(doc, indent) << "\n";
    if (!f) throw error(status::runtime_error, path + ": write failed");
}

document from_graph(const graph &g) {
    document doc;
    doc.fpmath_mode = to_string(g.get_fpmath_mode());
    for (const auto &o : g.ops()) {
        doc.ops.push_back(*o);
        doc.attr_order.emplace_back();
    }
    return doc;
}

graph document::to_graph() const {
    convgrad::fpmath_mode mode;
    if (!parse_fpmath_mode(fpmath_mode, mode))
        throw error(status::invalid_arguments, "fpmath_mode: must be one of strict, bf16, f16, tf32, any; got \"" +
                                                   fpmath_mode + "\"");
    graph g(mode);
    for (const auto &o : ops) g.add_op(o);
    g.finalize();
    return g;
}

std::vector<size_t> document::graph_inputs() const {
    std::set<size_t> produced;
    for (const auto &o : ops)
        for (const auto &lt : o.outputs()) produced.insert(lt.id());
    std::vector<size_t> v;
    for (const auto &o : ops)
        for (const auto &lt : o.inputs())
            if (!produced.count(lt.id()) && std::find(v.begin(), v.end(), lt.id()) == v.end())
                v.push_back(lt.id());
    return v;
}

std::vector<size_t> document::graph_outputs() const {
    std::set<size_t> consumed;
    for (const auto &o : ops)
        for (const auto &lt : o.inputs()) consumed.insert(lt.id());
    std::vector<size_t> v;
    for (const auto &o : ops)
        for (const auto &lt : o.outputs())
            if (!consumed.count(lt.id())) v.push_back(lt.id());
    return v;
}

const op *document::find_op(size_t id) const {
    for (const auto &o : ops)
        if (o.id() == id) return &o;
    return nullptr;
}

op *document::find_op(size_t id) {
    for (auto &o : ops)
        if (o.id() == id) return &o;
    return nullptr;
}

}  // namespace convgrad::json
