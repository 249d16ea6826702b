// The parts of the extension module, each registered by its own function.
#pragma once

#include <pybind11/pybind11.h>

namespace convgrad::python {

namespace py = pybind11;

void bind_graph(py::module_ &m);

}  // namespace convgrad::python
