// convgrad._convgrad: the compiled part of the Python package (python/convgrad/ wraps it).
#include <pybind11/pybind11.h>

#include "bindings.hpp"
#include "convgrad/convgrad.hpp"
#include "op_call.hpp"

namespace py = pybind11;
using namespace convgrad;

PYBIND11_MODULE(_convgrad, m) {
    m.doc() = "convgrad: oneDNN Graph convolution ops and their gradients on x86 CPUs";
    m.attr("__version__") = version_string;

    // convgrad::error -> convgrad.Error (a ValueError) with the same message; the status is
    // kept as the exception's `status` attribute.
    static py::exception<error> exc(m, "Error", PyExc_ValueError);
    py::register_exception_translator([](std::exception_ptr p) {
        try {
            if (p) std::rethrow_exception(p);
        } catch (const error &e) {
            py::object inst = py::reinterpret_borrow<py::object>(exc.ptr())(e.what());
            inst.attr("status") = to_string(e.code());
            PyErr_SetObject(exc.ptr(), inst.ptr());
        }
    });

    m.def("set_num_threads", &set_num_threads, py::arg("n"),
          "Threads of ops compiled from now on (0: OpenMP's default).");
    m.def("get_num_threads", &get_num_threads);

    python::bind_graph(m);

    m.def("_call", &python::call_op, py::arg("kind"), py::arg("attrs"), py::arg("inputs"),
          py::arg("out") = py::none());
    m.def("_clear_cache", &python::clear_cache);
    m.def("_cache_size", &python::cache_size);
}
