// One op on arrays: the functions convgrad.convolution(...), ... end here. The compiled partition
// is cached by (op kind, attributes, input types/shapes/strides, output strides, thread count),
// so a repeated call costs a dictionary lookup and the kernel.
#pragma once

#include <pybind11/pybind11.h>

namespace convgrad::python {

namespace py = pybind11;

/// Runs op `kind` (an op_kind value) with `attrs` (a tuple of (name, value) pairs; values are
/// int, str, or tuples of ints) on `inputs` (a tuple of arrays; None entries are skipped, e.g.
/// a missing bias). `out` is the output array or None (allocated, following the memory order
/// of the first input for data outputs, dense for weights; torch tensors for torch inputs,
/// NumPy arrays otherwise). Returns the output. The GIL is released while the kernel runs.
py::object call_op(int kind, const py::tuple &attrs, const py::tuple &inputs, const py::object &out);

/// Drops every cached compiled partition; returns how many there were.
size_t clear_cache();
size_t cache_size();

}  // namespace convgrad::python
