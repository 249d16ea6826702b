// The graph API mirrored: data types, logical tensors, ops with attributes, graphs, partitions,
// compiled partitions executed on arrays, and oneDNN Graph JSON.
#include <pybind11/stl.h>

#include <algorithm>
#include <chrono>

#include "array_view.hpp"
#include "bindings.hpp"
#include "convgrad/convgrad.hpp"
#include "convgrad/json.hpp"

namespace convgrad::python {

namespace {

// An attribute value from Python: bool, int, float, str, or a list/tuple of ints or of floats.
attr_value attr_from_python(const std::string &name, const py::handle &v) {
    if (py::isinstance<py::bool_>(v)) return v.cast<bool>();
    if (py::isinstance<py::int_>(v)) return v.cast<int64_t>();
    if (py::isinstance<py::float_>(v)) return v.cast<float>();
    if (py::isinstance<py::str>(v)) return v.cast<std::string>();
    if (py::isinstance<py::list>(v) || py::isinstance<py::tuple>(v)) {
        bool all_int = true;
        for (auto x : v) all_int = all_int && py::isinstance<py::int_>(x) && !py::isinstance<py::bool_>(x);
        if (all_int) return v.cast<std::vector<int64_t>>();
        try {
            return v.cast<std::vector<float>>();
        } catch (const py::cast_error &) {
        }
    }
    throw error(status::invalid_graph_op,
                "op.set_attr: attribute '" + name +
                    "': value must be an int, float, str, bool or a list of ints or floats; got " +
                    std::string(py::str(v.get_type().attr("__name__"))));
}

py::object attr_to_python(const attr_value &v) {
    return std::visit([](const auto &x) -> py::object { return py::cast(x); }, v);
}

// A tensor for execution: a logical tensor bound to an array, which it keeps alive. The bound
// logical tensor takes the array's type, shape and strides, so that execute() checks them
// against the compiled ones.
struct py_tensor {
    logical_tensor lt;
    array_view view;
    py::object array;
    tensor bound() const {
        // Axes of size 1 have no meaningful stride (DLPack exporters normalize it): take the
        // logical tensor's, so that only real differences fail execute()'s check.
        dims st = view.strides;
        if (lt.has_known_strides() && lt.strides().size() == st.size())
            for (size_t a = 0; a < st.size(); ++a)
                if (view.shape[a] == 1) st[a] = lt.strides()[a];
        return tensor(logical_tensor(lt.id(), view.dt, view.shape, st), view.data);
    }
};

std::vector<tensor> bind_all(const std::vector<py_tensor> &ts) {
    std::vector<tensor> out;
    for (const auto &t : ts) out.push_back(t.bound());
    return out;
}

}  // namespace

void bind_graph(py::module_ &m) {
    py::enum_<data_type>(m, "data_type")
        .value("undef", data_type::undef)
        .value("f32", data_type::f32)
        .value("bf16", data_type::bf16)
        .value("f16", data_type::f16)
        .value("s32", data_type::s32);
    py::enum_<layout_type>(m, "layout_type")
        .value("undef", layout_type::undef)
        .value("any", layout_type::any)
        .value("strided", layout_type::strided);
    py::enum_<property_type>(m, "property_type")
        .value("undef", property_type::undef)
        .value("variable", property_type::variable)
        .value("constant", property_type::constant);
    py::enum_<op_kind> kinds(m, "op_kind");
    for (op_kind k : all_op_kinds) kinds.value(to_string(k), k);
    py::enum_<fpmath_mode>(m, "fpmath_mode")
        .value("strict", fpmath_mode::strict)
        .value("bf16", fpmath_mode::bf16)
        .value("f16", fpmath_mode::f16)
        .value("tf32", fpmath_mode::tf32)
        .value("any", fpmath_mode::any);
    py::enum_<impl_choice>(m, "impl_choice")
        .value("best", impl_choice::best)
        .value("reference", impl_choice::reference);

    py::class_<logical_tensor>(m, "logical_tensor")
        .def(py::init<size_t, data_type, dims, property_type>(), py::arg("id"), py::arg("dtype"),
             py::arg("shape"), py::arg("property") = property_type::undef)
        .def(py::init<size_t, data_type, dims, dims, property_type>(), py::arg("id"), py::arg("dtype"),
             py::arg("shape"), py::arg("strides"), py::arg("property") = property_type::undef)
        .def_static("any", &logical_tensor::any, py::arg("id"), py::arg("dtype"), py::arg("shape"),
                    py::arg("property") = property_type::undef)
        .def_static("unknown", &logical_tensor::unknown, py::arg("id"), py::arg("dtype"))
        .def_property_readonly("id", &logical_tensor::id)
        .def_property_readonly("dtype", &logical_tensor::dtype)
        .def_property_readonly("shape", &logical_tensor::shape)
        .def_property_readonly("strides", &logical_tensor::strides)
        .def_property_readonly("layout", &logical_tensor::layout)
        .def_property_readonly("property", &logical_tensor::property)
        .def_property_readonly("ndims", &logical_tensor::ndims)
        .def_property_readonly("values", &logical_tensor::values)
        .def("set_values", &logical_tensor::set_values, py::return_value_policy::reference_internal)
        .def("element_count", &logical_tensor::element_count)
        .def("size_bytes", &logical_tensor::size_bytes)
        .def("__repr__", [](const logical_tensor &lt) { return "<logical_tensor " + lt.to_string() + ">"; });

    py::class_<op>(m, "op")
        .def(py::init([](size_t id, op_kind k, std::string name) { return op(id, k, std::move(name)); }),
             py::arg("id"), py::arg("kind"), py::arg("name") = "")
        .def(py::init([](size_t id, const std::string &kind, std::string name) {
                 auto k = parse_op_kind(kind);
                 if (!k) throw error(status::invalid_graph_op, "op: unknown op kind '" + kind + "'");
                 return op(id, *k, std::move(name));
             }),
             py::arg("id"), py::arg("kind"), py::arg("name") = "")
        .def("set_attr",
             [](op &o, const std::string &name, const py::handle &v) -> op & {
                 return o.set_attr(name, attr_from_python(name, v));
             },
             py::return_value_policy::reference_internal)
        .def("add_input", &op::add_input, py::return_value_policy::reference_internal)
        .def("add_output", &op::add_output, py::return_value_policy::reference_internal)
        .def_property_readonly("id", &op::id)
        .def_property_readonly("kind", &op::kind)
        .def_property_readonly("name", &op::name)
        .def_property_readonly("attrs",
                               [](const op &o) {
                                   py::dict d;
                                   for (const auto &[k, v] : o.attrs()) d[py::str(k)] = attr_to_python(v);
                                   return d;
                               })
        .def_property_readonly("inputs", &op::inputs)
        .def_property_readonly("outputs", &op::outputs)
        .def("__repr__", [](const op &o) { return "<op " + o.describe() + ">"; });

    py::class_<py_tensor>(m, "tensor")
        .def(py::init([](const logical_tensor &lt, py::object array) {
                 py_tensor t;
                 t.lt = lt;
                 const std::string role = "id " + std::to_string(lt.id());
                 t.view = view_array(array, {"tensor", role.c_str()});
                 t.array = std::move(array);
                 return t;
             }),
             py::arg("logical_tensor"), py::arg("array"))
        .def_property_readonly("logical_tensor", [](const py_tensor &t) { return t.lt; })
        .def_property_readonly("array", [](const py_tensor &t) { return t.array; });

    py::class_<compiled_partition>(m, "compiled_partition")
        .def("query_logical_tensor", &compiled_partition::query_logical_tensor)
        .def_property_readonly("inputs", &compiled_partition::inputs)
        .def_property_readonly("outputs", &compiled_partition::outputs)
        .def_property_readonly("pads_begin", &compiled_partition::pads_begin)
        .def_property_readonly("pads_end", &compiled_partition::pads_end)
        .def_property_readonly("kernel_name", &compiled_partition::kernel_name)
        .def_property_readonly("problem_desc", &compiled_partition::problem_desc)
        .def_property_readonly("flops", &compiled_partition::flops)
        .def("execute",
             [](const compiled_partition &cp, const std::vector<py_tensor> &inputs,
                const std::vector<py_tensor> &outputs) {
                 const auto ins = bind_all(inputs), outs = bind_all(outputs);
                 py::gil_scoped_release release;
                 cp.execute(ins, outs);
             },
             py::arg("inputs"), py::arg("outputs"));

    py::class_<partition>(m, "partition")
        .def_property_readonly("op_ids", &partition::op_ids)
        .def_property_readonly("op", &partition::get_op)
        .def_property_readonly("input_ports", &partition::input_ports)
        .def_property_readonly("output_ports", &partition::output_ports)
        .def_property_readonly("fpmath_mode", &partition::get_fpmath_mode)
        .def("compile", &partition::compile, py::arg("inputs"), py::arg("outputs"),
             py::arg("choice") = impl_choice::best);

    py::class_<graph>(m, "graph")
        .def(py::init<>())
        .def(py::init<fpmath_mode>(), py::arg("fpmath_mode"))
        .def_property_readonly("fpmath_mode", &graph::get_fpmath_mode)
        .def("add_op", &graph::add_op)
        .def("finalize", &graph::finalize)
        .def_property_readonly("is_finalized", &graph::is_finalized)
        .def("get_partitions", &graph::get_partitions)
        .def_property_readonly("ops", [](const graph &g) {
            std::vector<op> ops;
            for (const auto &p : g.ops()) ops.push_back(*p);
            return ops;
        });

    // For the benchmark: the mean time of `reps` executions looped in C++ (no Python in the
    // loop), against which the Python call overhead is measured.
    m.def("_time_execute",
          [](const compiled_partition &cp, const std::vector<py_tensor> &inputs,
             const std::vector<py_tensor> &outputs, int reps) {
              const auto ins = bind_all(inputs), outs = bind_all(outputs);
              py::gil_scoped_release release;
              const auto t0 = std::chrono::steady_clock::now();
              for (int i = 0; i < reps; ++i) cp.execute(ins, outs);
              const auto t1 = std::chrono::steady_clock::now();
              return std::chrono::duration<double>(t1 - t0).count() / std::max(reps, 1);
          },
          py::arg("cp"), py::arg("inputs"), py::arg("outputs"), py::arg("reps"));

    m.def("compile_op", &compile_op, py::arg("op"), py::arg("choice") = impl_choice::best,
          py::arg("fpmath_mode") = fpmath_mode::strict);

    py::module_ j = m.def_submodule("json", "oneDNN Graph JSON: read and write graph dumps");
    py::class_<json::document>(j, "document")
        .def(py::init<>())
        .def_readwrite("version", &json::document::version)
        .def_readwrite("engine_kind", &json::document::engine_kind)
        .def_readwrite("fpmath_mode", &json::document::fpmath_mode)
        .def_readwrite("input_ports", &json::document::input_ports)
        .def_readwrite("output_ports", &json::document::output_ports)
        .def_readwrite("ops", &json::document::ops)
        .def("to_graph", &json::document::to_graph)
        .def("graph_inputs", &json::document::graph_inputs)
        .def("graph_outputs", &json::document::graph_outputs);
    j.def("parse", [](const std::string &text, const std::string &source) { return json::parse(text, source); },
          py::arg("text"), py::arg("source") = "<json>");
    j.def("read_file", [](const std::string &path) { return json::read_file(path); }, py::arg("path"));
    j.def("write", &json::write, py::arg("doc"), py::arg("indent") = 2);
    j.def("write_file", &json::write_file, py::arg("doc"), py::arg("path"), py::arg("indent") = 2);
    j.def("from_graph", &json::from_graph, py::arg("graph"));
}

}  // namespace convgrad::python
