// A borrowed view of a Python array (anything with __dlpack__, or the buffer protocol): data
// pointer, type, shape and strides in elements, and the object that keeps the memory alive.
// Nothing is copied.
#pragma once

#include <pybind11/pybind11.h>

#include <string>

#include "convgrad/types.hpp"

namespace convgrad::python {

namespace py = pybind11;

/// Which kind of array an output should be allocated as.
enum class array_family { numpy, torch };

struct array_view {
    void *data = nullptr;
    data_type dt = data_type::undef;
    dims shape;
    dims strides;  // in elements
    array_family family = array_family::numpy;
    py::object keep_alive;  // the DLPack capsule or buffer that owns the borrow
};

/// Names an argument in error messages, e.g. "Convolution: input 'src'" (built only on error:
/// a call that succeeds pays no string work).
struct subject {
    const char *op;
    const char *role;
    std::string text() const { return std::string(op) + ": " + role; }
};

/// Views `obj`. `what` names the argument in error messages.
/// Throws convgrad::error (invalid_arguments / invalid_data_type) for objects that are not
/// arrays, arrays outside CPU memory, element types convgrad does not compute in, or strides
/// that are not whole elements.
array_view view_array(const py::handle &obj, const subject &what);

/// Allocates an uninitialized array of `family` with this type, shape and strides (elements).
py::object allocate_array(array_family family, data_type dt, const dims &shape, const dims &strides);

}  // namespace convgrad::python
