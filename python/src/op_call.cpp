#include "op_call.hpp"

#include <algorithm>
#include <memory>
#include <numeric>
#include <string>
#include <unordered_map>

#include "array_view.hpp"
#include "convgrad/convgrad.hpp"

namespace convgrad::python {

namespace {

const char *input_names(op_kind k, size_t i) {
    static const char *names[6][3] = {{"input 'src'", "input 'weights'", "input 'bias'"},
                                      {"input 'diff_dst'", "input 'weights'", "input 'dst_shape'"},
                                      {"input 'src'", "input 'diff_dst'", "input 'weights_shape'"},
                                      {"input 'src'", "input 'weights'", "input 'bias'"},
                                      {"input 'diff_dst'", "input 'weights'", "input ?"},
                                      {"input 'src'", "input 'diff_dst'", "input 'weights_shape'"}};
    return i < 3 ? names[int(k)][i] : "input ?";
}

struct cached_op {
    compiled_partition cp;
    logical_tensor out;  // compiled output: shape and strides to allocate
};

// Guarded by the GIL: only touched while it is held.
std::unordered_map<std::string, std::shared_ptr<const cached_op>> cache;
constexpr size_t max_cache_entries = 4096;

void append(std::string &key, int64_t v) { key.append(reinterpret_cast<const char *>(&v), sizeof v); }
void append(std::string &key, const dims &d) {
    append(key, int64_t(d.size()));
    for (dim_t x : d) append(key, x);
}

attr_value to_attr(const py::handle &v, const std::string &name, op_kind kind) {
    if (py::isinstance<py::bool_>(v)) return bool(v.cast<bool>());
    if (py::isinstance<py::int_>(v)) return v.cast<int64_t>();
    if (py::isinstance<py::str>(v)) return v.cast<std::string>();
    if (py::isinstance<py::float_>(v)) return v.cast<float>();
    if (py::isinstance<py::tuple>(v) || py::isinstance<py::list>(v)) {
        std::vector<int64_t> ints;
        for (auto x : v) {
            if (!py::isinstance<py::int_>(x) || py::isinstance<py::bool_>(x))
                throw error(status::invalid_graph_op,
                            std::string(to_string(kind)) + ": attribute '" + name +
                                "': expected a list of integers; got an element of type " +
                                std::string(py::str(x.get_type().attr("__name__"))));
            ints.push_back(x.cast<int64_t>());
        }
        return ints;
    }
    throw error(status::invalid_graph_op, std::string(to_string(kind)) + ": attribute '" + name +
                                              "': unsupported value type " +
                                              std::string(py::str(v.get_type().attr("__name__"))));
}

// The key part of one attribute: its name and value bytes (types distinguished by a tag).
void append_attr(std::string &key, const std::string &name, const attr_value &v) {
    key += name;
    key += '=';
    key += char('0' + v.index());
    if (auto *i = std::get_if<int64_t>(&v)) append(key, *i);
    else if (auto *l = std::get_if<std::vector<int64_t>>(&v)) append(key, *l);
    else if (auto *s = std::get_if<std::string>(&v)) key += *s + '\0';
    else if (auto *b = std::get_if<bool>(&v)) key += char(*b);
    else if (auto *f = std::get_if<float>(&v)) key.append(reinterpret_cast<const char *>(f), sizeof *f);
    key += ';';
}

// The key part of one (name, value) attribute pair, read straight from the Python objects (no
// conversion on the cached path); unusual values go through the full conversion.
void append_attr_py(std::string &key, const py::handle &item, op_kind kind) {
    PyObject *pair = item.ptr();
    if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2 || !PyUnicode_Check(PyTuple_GET_ITEM(pair, 0)))
        throw error(status::invalid_arguments, std::string(to_string(kind)) +
                                                   ": attributes must be (name, value) pairs");
    Py_ssize_t n = 0;
    const char *name = PyUnicode_AsUTF8AndSize(PyTuple_GET_ITEM(pair, 0), &n);
    key.append(name, size_t(n));
    key += '=';
    PyObject *v = PyTuple_GET_ITEM(pair, 1);
    if (PyLong_Check(v) && !PyBool_Check(v)) {
        key += 'i';
        append(key, int64_t(PyLong_AsLongLong(v)));
        if (PyErr_Occurred()) throw py::error_already_set();
    } else if (PyUnicode_Check(v)) {
        key += 's';
        const char *str = PyUnicode_AsUTF8AndSize(v, &n);
        key.append(str, size_t(n));
        key += '\0';
    } else if (PyTuple_Check(v) && [&] {
                   for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(v); ++i)
                       if (!PyLong_Check(PyTuple_GET_ITEM(v, i)) || PyBool_Check(PyTuple_GET_ITEM(v, i)))
                           return false;
                   return true;
               }()) {
        key += 'l';
        append(key, int64_t(PyTuple_GET_SIZE(v)));
        for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(v); ++i) append(key, int64_t(PyLong_AsLongLong(PyTuple_GET_ITEM(v, i))));
        if (PyErr_Occurred()) throw py::error_already_set();
    } else {
        const std::string nm(name);
        append_attr(key, nm, to_attr(v, nm, kind));
    }
    key += ';';
}

// Whether strides decrease along `order`, skipping axes of size 1 (their stride means nothing,
// and DLPack exporters normalize it).
bool follows_order(const std::vector<size_t> &order, const dims &shape, const dims &strides) {
    dim_t prev = INT64_MAX;
    for (size_t a : order) {
        if (shape[a] <= 1) continue;
        if (strides[a] > prev) return false;
        prev = strides[a];
    }
    return true;
}

// Strides that lay `shape` out densely in the axis order of an input (`like_shape`, `like`):
// the shape's own order if the input follows it, else channels-last (axis 1 innermost) if the
// input follows that, else the input's stride order.
dims strides_in_order_of(const dims &shape, const dims &like_shape, const dims &like) {
    const size_t r = shape.size();
    std::vector<size_t> order(r);
    std::iota(order.begin(), order.end(), size_t(0));
    if (!follows_order(order, like_shape, like)) {
        std::vector<size_t> last(order);
        if (r >= 3) std::rotate(last.begin() + 1, last.begin() + 2, last.end());
        if (r >= 3 && follows_order(last, like_shape, like)) {
            order = last;
        } else {
            std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
                return (like_shape[a] > 1 ? like[a] : 0) > (like_shape[b] > 1 ? like[b] : 0);
            });
        }
    }
    dims st(r);
    dim_t s = 1;
    for (size_t j = r; j-- > 0;) {
        st[order[j]] = s;
        s *= std::max<dim_t>(shape[order[j]], 1);
    }
    return st;
}

bool is_weights_output(op_kind k) {
    return k == op_kind::ConvolutionBackwardWeights || k == op_kind::ConvTransposeBackwardWeights;
}

std::shared_ptr<const cached_op> compile(op_kind kind, const std::vector<std::pair<std::string, attr_value>> &attrs,
                                         const std::vector<array_view> &in, const array_view *out) {
    op o(0, kind, "python");
    for (const auto &[name, v] : attrs) o.set_attr(name, v);
    size_t id = 0;
    for (const auto &v : in) o.add_input(logical_tensor(id++, v.dt, v.shape, v.strides));
    const data_type out_dt = in.empty() ? data_type::undef : in[0].dt;
    if (out) {
        o.add_output(logical_tensor(id, out->dt, out->shape, out->strides));
        auto c = std::make_shared<cached_op>();
        c->cp = compile_op(o);
        c->out = c->cp.outputs()[0];
        return c;
    }
    o.add_output(logical_tensor::unknown(id, out_dt));
    compiled_partition cp = compile_op(o);
    logical_tensor lt = cp.outputs()[0];
    if (!is_weights_output(kind) && !in.empty() && in[0].shape.size() == lt.shape().size()) {
        const dims want = strides_in_order_of(lt.shape(), in[0].shape, in[0].strides);
        if (want != lt.strides()) {
            lt = logical_tensor(id, lt.dtype(), lt.shape(), want);
            o.set_outputs({lt});
            cp = compile_op(o);
        }
    }
    auto c = std::make_shared<cached_op>();
    c->cp = std::move(cp);
    c->out = c->cp.outputs()[0];
    return c;
}

}  // namespace

py::object call_op(int kind_value, const py::tuple &attrs, const py::tuple &inputs, const py::object &out) {
    if (kind_value < 0 || kind_value > 5)
        throw error(status::invalid_arguments, "call_op: op kind must be 0..5; got " + std::to_string(kind_value));
    const op_kind kind = static_cast<op_kind>(kind_value);
    const char *opname = to_string(kind);

    std::string key;
    key.reserve(256);
    append(key, kind_value);
    append(key, get_num_threads());
    for (auto item : attrs) append_attr_py(key, item, kind);
    std::vector<array_view> in;
    in.reserve(inputs.size());
    for (size_t i = 0; i < inputs.size(); ++i) {
        if (inputs[i].is_none()) continue;
        in.push_back(view_array(inputs[i], {opname, input_names(kind, in.size())}));
        const array_view &v = in.back();
        key += char('a' + int(v.dt));
        append(key, v.shape);
        append(key, v.strides);
    }
    std::optional<array_view> out_view;
    if (!out.is_none()) {
        out_view = view_array(out, {opname, "output 'out'"});
        key += 'o';
        key += char('a' + int(out_view->dt));
        append(key, out_view->shape);
        append(key, out_view->strides);
    }

    std::shared_ptr<const cached_op> c;
    if (auto it = cache.find(key); it != cache.end()) {
        c = it->second;
    } else {
        std::vector<std::pair<std::string, attr_value>> attr_list;
        for (auto item : attrs) {
            auto pair = item.cast<py::tuple>();
            std::string name = pair[0].cast<std::string>();
            attr_list.emplace_back(name, to_attr(pair[1], name, kind));
        }
        c = compile(kind, attr_list, in, out_view ? &*out_view : nullptr);
        if (cache.size() >= max_cache_entries) cache.clear();  // shapes churn: start over
        cache.emplace(key, c);
    }

    py::object result = out;
    if (!out_view) {
        const array_family fam = in.empty() ? array_family::numpy : in[0].family;
        result = allocate_array(fam, c->out.dtype(), c->out.shape(), c->out.strides());
        out_view = view_array(result, {opname, "output"});
    }

    std::vector<tensor> ins;
    ins.reserve(in.size());
    for (size_t i = 0; i < in.size(); ++i) ins.emplace_back(c->cp.inputs()[i], in[i].data);
    const std::vector<tensor> outs{tensor(c->out, out_view->data)};
    {
        py::gil_scoped_release release;
        c->cp.execute(ins, outs);
    }
    return result;
}

size_t clear_cache() {
    const size_t n = cache.size();
    cache.clear();
    return n;
}

size_t cache_size() { return cache.size(); }

}  // namespace convgrad::python
