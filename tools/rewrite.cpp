#include "rewrite.hpp"

#include <algorithm>
#include <map>
#include <numeric>
#include <set>

#include "core/checked.hpp"
#include "core/op_error.hpp"

namespace convgrad::tool {

namespace {

[[noreturn]] void bad(const std::string &what) { throw error(status::invalid_arguments, what); }

std::vector<std::string> split(const std::string &s, char sep) {
    std::vector<std::string> out;
    size_t start = 0;
    while (true) {
        const size_t p = s.find(sep, start);
        out.push_back(s.substr(start, p == std::string::npos ? std::string::npos : p - start));
        if (p == std::string::npos) break;
        start = p + 1;
    }
    return out;
}

size_t parse_id(const std::string &s, const std::string &what) {
    if (s.empty() || !std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; }))
        bad(what + ": '" + s + "' is not an id");
    dim_t v = 0;
    if (!detail::parse_int64(s, v)) bad(what + ": id '" + s + "' does not fit a 64-bit integer");
    return size_t(v);
}

bool is_float(data_type dt) {
    return dt == data_type::f32 || dt == data_type::bf16 || dt == data_type::f16;
}

logical_tensor with_dtype(const logical_tensor &lt, data_type dt) {
    if (lt.ndims() < 0) return logical_tensor::unknown(lt.id(), dt);
    logical_tensor r = lt.layout() == layout_type::any
                           ? logical_tensor::any(lt.id(), dt, lt.shape(), lt.property())
                           : logical_tensor(lt.id(), dt, lt.shape(), lt.strides(), lt.property());
    if (lt.values()) r.set_values(*lt.values());
    return r;
}

// The attribute type a new attribute gets when --op-attrs names one the op does not have.
attr_value parse_attr_value(const std::string &name, const std::string &value,
                            const attr_value *existing, const std::string &what) {
    int type = existing ? int(existing->index()) : -1;
    if (type < 0) {
        if (name == "groups") type = 0;
        else if (name == "auto_pad" || name == "data_format" || name == "weights_format" ||
                 name == "filter_format")
            type = 4;
        else type = 1;
    }
    try {
        switch (type) {
            case 0: {
                size_t used = 0;
                const long long v = std::stoll(value, &used);
                if (used != value.size()) throw std::invalid_argument("trailing");
                return int64_t(v);
            }
            case 1: {
                std::vector<int64_t> v;
                if (value.empty()) return v;
                for (const auto &p : split(value, 'x')) {
                    size_t used = 0;
                    v.push_back(std::stoll(p, &used));
                    if (used != p.size()) throw std::invalid_argument("trailing");
                }
                return v;
            }
            case 2: return std::stof(value);
            case 3: {
                std::vector<float> v;
                for (const auto &p : split(value, 'x')) v.push_back(std::stof(p));
                return v;
            }
            case 4: return value;
            case 5: return value == "1" || value == "true" || value == "True";
        }
    } catch (const std::logic_error &) {
    }
    bad(what + ": value '" + value + "' is not a valid " +
        attr_type_name(type == 0 ? attr_value(int64_t(0)) : type == 1 ? attr_value(std::vector<int64_t>{})
                       : type == 2 ? attr_value(0.f) : type == 3 ? attr_value(std::vector<float>{})
                       : type == 4 ? attr_value(std::string{}) : attr_value(false)));
}

}  // namespace

dims parse_dims(const std::string &s, const std::string &what) {
    if (s.empty()) bad(what + ": empty shape");
    dims d;
    for (const auto &p : split(s, 'x')) {
        if (p.empty() || !std::all_of(p.begin(), p.end(), [](char c) { return c >= '0' && c <= '9'; }))
            bad(what + ": '" + s + "' is not a shape like 2x32x28x28");
        dim_t v = 0;
        if (!detail::parse_int64(p, v))
            bad(what + ": dimension " + p + " of '" + s + "' does not fit a 64-bit integer");
        d.push_back(v);
    }
    return d;
}

dims tag_strides(const dims &shape, const std::string &tag) {
    if (tag.size() != shape.size())
        bad("format tag '" + tag + "' has " + std::to_string(tag.size()) + " letters for a rank-" +
            std::to_string(shape.size()) + " shape");
    std::vector<bool> used(shape.size(), false);
    for (char c : tag) {
        const int a = c - 'a';
        if (a < 0 || a >= int(shape.size()) || used[size_t(a)])
            bad("format tag '" + tag + "' is not a permutation of the first " +
                std::to_string(shape.size()) + " letters (plain tags like abcd, acdb only)");
        used[size_t(a)] = true;
    }
    dims st(shape.size());
    dim_t acc = 1;
    for (size_t i = tag.size(); i-- > 0;) {
        const size_t a = size_t(tag[i] - 'a');
        st[a] = acc;
        acc = detail::checked_mul(acc, std::max<dim_t>(shape[a], 1), "strides of the format tag");
    }
    return st;
}

std::string strides_tag(const dims &shape, const dims &strides) {
    if (strides.size() != shape.size() || shape.empty()) return {};
    for (dim_t s : strides)
        if (s == unknown_dim) return {};
    std::vector<size_t> order(shape.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return strides[a] > strides[b]; });
    std::string tag;
    for (size_t a : order) tag.push_back(char('a' + a));
    return tag;
}

bool mb_applies(op_kind kind, size_t index) {
    // benchdnn (deserialize.hpp, unsupport_mb_rewrite_ops_): the ops whose output shape comes
    // from an attribute keep their batch.
    if (kind == op_kind::ConvolutionBackwardData || kind == op_kind::ConvolutionBackwardWeights ||
        kind == op_kind::ConvTransposeBackwardWeights)
        return false;
    return index == 0;  // the data input; weights and bias have no batch
}

std::vector<std::string> apply_rewrite(json::document &doc, const rewrite_options &o) {
    std::vector<std::string> notes;
    if (!o.any()) return notes;
    const auto inputs = doc.graph_inputs();
    auto is_input = [&](size_t id) { return std::find(inputs.begin(), inputs.end(), id) != inputs.end(); };

    // The current definition and memory tag of each graph input.
    std::map<size_t, logical_tensor> defs;
    for (const auto &op_ : doc.ops)
        for (const auto &lt : op_.inputs())
            if (is_input(lt.id())) defs.emplace(lt.id(), lt);

    // --in-shapes
    std::map<size_t, logical_tensor> new_defs;
    if (!o.in_shapes.empty()) {
        for (const auto &item : split(o.in_shapes, '+')) {
            const std::string what = "--in-shapes '" + item + "'";
            const size_t colon = item.find(':');
            if (colon == std::string::npos) bad(what + ": expected ID:SHAPE[*TAG]");
            const size_t id = parse_id(item.substr(0, colon), what);
            if (!is_input(id)) {
                std::string list;
                for (size_t i : inputs) list += (list.empty() ? "" : ", ") + std::to_string(i);
                bad(what + ": tensor " + std::to_string(id) + " is not an input of the graph (inputs: " +
                    list + ")");
            }
            const std::string spec = item.substr(colon + 1);
            const logical_tensor &old = defs.at(id);
            std::string shape_s = spec, tag;
            if (const size_t star = spec.find('*'); star != std::string::npos) {
                shape_s = spec.substr(0, star);
                tag = spec.substr(star + 1);
                if (shape_s.empty() || tag.empty()) bad(what + ": expected SHAPE*TAG");
            } else if (!spec.empty() && std::all_of(spec.begin(), spec.end(), [](char c) {
                           return c >= 'a' && c <= 'z' && c != 'x';
                       })) {
                shape_s.clear();  // a tag alone
                tag = spec;
            }
            dims shape = shape_s.empty() ? old.shape() : parse_dims(shape_s, what);
            if (tag.empty()) {
                // Same rank: keep the memory order the file had; another rank: plain.
                const std::string old_tag = strides_tag(old.shape(), old.strides());
                if (int(shape.size()) == old.ndims() && !old_tag.empty()) tag = old_tag;
                else {
                    tag.clear();
                    for (size_t i = 0; i < shape.size(); ++i) tag.push_back(char('a' + i));
                }
            }
            dims st;
            try {
                st = tag_strides(shape, tag);
            } catch (const error &e) {
                bad(what + ": " + e.what());
            }
            new_defs[id] = logical_tensor(id, old.dtype(), shape, st, old.property());
        }
    }
    // --mb
    if (o.mb) {
        // Batch 0 is valid (the library runs it: nothing to compute).
        if (*o.mb < 0) bad("--mb: must be >= 0, got " + std::to_string(*o.mb));
        std::set<size_t> skipped_ops;
        for (const auto &op_ : doc.ops)
            for (size_t i = 0; i < op_.inputs().size(); ++i) {
                const size_t id = op_.inputs()[i].id();
                if (!is_input(id)) continue;
                if (!mb_applies(op_.kind(), i)) {
                    if (i == 0 && !mb_applies(op_.kind(), 0) && skipped_ops.insert(op_.id()).second)
                        notes.push_back(std::string("--mb is not applied to ") + op_.describe() +
                                        " (as in benchdnn: its output shape comes from an attribute)");
                    continue;
                }
                logical_tensor cur = new_defs.count(id) ? new_defs.at(id) : defs.at(id);
                if (cur.ndims() < 1) continue;
                dims shape = cur.shape();
                shape[0] = *o.mb;
                const std::string tag = strides_tag(cur.shape(), cur.strides());
                dims st;
                try {
                    st = tag.empty() ? dense_strides(shape) : tag_strides(shape, tag);
                } catch (const error &e) {
                    throw error(e.code(), "--mb " + std::to_string(*o.mb) + ": tensor " +
                                              std::to_string(id) + ": " + e.what());
                }
                new_defs[id] = logical_tensor(id, cur.dtype(), shape, st, cur.property());
            }
    }
    for (auto &op_ : doc.ops) {
        std::vector<logical_tensor> ins = op_.inputs();
        for (auto &lt : ins)
            if (auto it = new_defs.find(lt.id()); it != new_defs.end()) lt = it->second;
        op_.set_inputs(std::move(ins));
    }

    // --dt
    if (o.dt) {
        if (!is_float(*o.dt)) bad(std::string("--dt: ") + to_string(*o.dt) + " is not f32, bf16 or f16");
        for (auto &op_ : doc.ops) {
            std::vector<logical_tensor> ins = op_.inputs(), outs = op_.outputs();
            for (auto *list : {&ins, &outs})
                for (auto &lt : *list)
                    if (is_float(lt.dtype())) lt = with_dtype(lt, *o.dt);
            op_.set_inputs(std::move(ins));
            op_.set_outputs(std::move(outs));
        }
    }

    // --op-attrs
    if (!o.op_attrs.empty()) {
        for (const auto &item : split(o.op_attrs, '+')) {
            const std::string what = "--op-attrs '" + item + "'";
            const size_t colon = item.find(':');
            if (colon == std::string::npos) bad(what + ": expected OPID:NAME:VALUE[*NAME:VALUE]");
            const size_t id = parse_id(item.substr(0, colon), what);
            op *target = doc.find_op(id);
            if (!target) bad(what + ": the graph has no op with id " + std::to_string(id));
            for (const auto &kv : split(item.substr(colon + 1), '*')) {
                const size_t c = kv.find(':');
                if (c == std::string::npos || c == 0) bad(what + ": expected NAME:VALUE, got '" + kv + "'");
                const std::string name = canonical_attr_name(kv.substr(0, c));
                target->set_attr(name, parse_attr_value(name, kv.substr(c + 1), target->find_attr(name),
                                                        what + " attribute '" + name + "'"));
                // Keep the file's order for written-back documents.
                const size_t idx = size_t(target - doc.ops.data());
                if (idx < doc.attr_order.size()) {
                    auto &ord = doc.attr_order[idx];
                    if (std::find(ord.begin(), ord.end(), name) == ord.end()) ord.push_back(name);
                }
            }
        }
    }

    // Every output (and intermediate tensor) is inferred again.
    for (auto &op_ : doc.ops) {
        std::vector<logical_tensor> ins = op_.inputs(), outs = op_.outputs();
        for (auto &lt : outs) lt = logical_tensor::unknown(lt.id(), lt.dtype());
        for (auto &lt : ins)
            if (!is_input(lt.id())) lt = logical_tensor::unknown(lt.id(), lt.dtype());
        op_.set_inputs(std::move(ins));
        op_.set_outputs(std::move(outs));
    }
    return notes;
}

}  // namespace convgrad::tool
