#include "array_view.hpp"

#include <dlpack/dlpack.h>
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

namespace convgrad::python {

namespace {

[[noreturn]] void fail(status s, const subject &what, const std::string &rule) {
    throw error(s, what.text() + ": " + rule);
}

// torch is imported lazily: NumPy-only users never load it.
struct torch_handles {
    py::object tensor_type, to_dlpack, empty_strided;
    py::object f32, bf16, f16, s32;
};

torch_handles *torch_if_loaded() {
    static torch_handles *handles = nullptr;
    if (handles) return handles;
    py::dict modules = py::module_::import("sys").attr("modules");
    if (!modules.contains("torch")) return nullptr;
    py::object torch = modules["torch"];
    handles = new torch_handles{torch.attr("Tensor"),
                                torch.attr("_C").attr("_to_dlpack"),
                                torch.attr("empty_strided"),
                                torch.attr("float32"),
                                torch.attr("bfloat16"),
                                torch.attr("float16"),
                                torch.attr("int32")};  // leaked on purpose: lives as long as torch
    return handles;
}

data_type from_dlpack(DLDataType t, const subject &what) {
    if (t.lanes == 1) {
        if (t.code == kDLFloat && t.bits == 32) return data_type::f32;
        if (t.code == kDLFloat && t.bits == 16) return data_type::f16;
        if (t.code == kDLBfloat && t.bits == 16) return data_type::bf16;
        if (t.code == kDLInt && t.bits == 32) return data_type::s32;
    }
    const char *code = t.code == kDLFloat ? "float" : t.code == kDLBfloat ? "bfloat"
                       : t.code == kDLInt ? "int" : t.code == kDLUInt ? "uint" : "other";
    fail(status::invalid_data_type, what,
         std::string("element type must be float32, bfloat16 or float16 (int32 for shape "
                     "inputs); got ") + code + std::to_string(t.bits) +
             (t.lanes != 1 ? " x" + std::to_string(t.lanes) : ""));
}

bool view_dlpack(const py::handle &obj, const subject &what, array_view &v) {
    torch_handles *th = torch_if_loaded();
    py::object capsule;
    if (th && py::isinstance(obj, th->tensor_type)) {
        // torch's C exporter: no Python-level checks, works on tensors that require grad (the
        // data is only read or written, never part of the autograd graph here).
        capsule = th->to_dlpack(obj);
        v.family = array_family::torch;
    } else if (py::hasattr(obj, "__dlpack__")) {
        try {
            capsule = obj.attr("__dlpack__")();
        } catch (py::error_already_set &e) {
            // NumPy refuses read-only arrays (DLPack cannot say read-only): the buffer
            // protocol takes them.
            if (e.matches(PyExc_BufferError) && PyObject_CheckBuffer(obj.ptr())) return false;
            throw;
        }
        v.family = array_family::numpy;
    } else {
        return false;
    }
    auto *m = static_cast<DLManagedTensor *>(PyCapsule_GetPointer(capsule.ptr(), "dltensor"));
    if (!m) throw py::error_already_set();
    const DLTensor &t = m->dl_tensor;
    if (t.device.device_type != kDLCPU && t.device.device_type != kDLCUDAHost)
        fail(status::invalid_arguments, what,
             "the array must be in CPU memory; got DLPack device type " +
                 std::to_string(int(t.device.device_type)));
    v.dt = from_dlpack(t.dtype, what);
    v.shape.assign(t.shape, t.shape + t.ndim);
    if (t.strides) {
        v.strides.assign(t.strides, t.strides + t.ndim);
    } else {
        v.strides.assign(size_t(t.ndim), 1);
        for (int i = t.ndim - 2; i >= 0; --i) v.strides[size_t(i)] = v.strides[size_t(i) + 1] * t.shape[i + 1];
    }
    v.data = static_cast<char *>(t.data) + t.byte_offset;
    // The capsule stays unconsumed: dropping it runs the producer's deleter, so holding it is
    // the borrow.
    v.keep_alive = std::move(capsule);
    return true;
}

void view_buffer(const py::handle &obj, const subject &what, array_view &v) {
    py::buffer_info info;
    try {
        info = py::reinterpret_borrow<py::buffer>(obj).request(true);
    } catch (py::error_already_set &) {
        info = py::reinterpret_borrow<py::buffer>(obj).request(false);  // read-only input
    }
    const std::string &f = info.format;
    if (f == "f") v.dt = data_type::f32;
    else if (f == "e") v.dt = data_type::f16;
    else if (f == "i" && info.itemsize == 4) v.dt = data_type::s32;
    else
        fail(status::invalid_data_type, what,
             "element type must be float32 or float16 (int32 for shape inputs); got buffer format '" + f + "'");
    v.shape.assign(info.shape.begin(), info.shape.end());
    v.strides.clear();
    for (auto s : info.strides) {
        if (s % info.itemsize != 0)
            fail(status::invalid_shape, what,
                 "strides must be whole elements; got a stride of " + std::to_string(s) + " bytes");
        v.strides.push_back(s / info.itemsize);
    }
    v.data = info.ptr;
    v.family = array_family::numpy;
    v.keep_alive = py::reinterpret_borrow<py::object>(obj);
}

}  // namespace

array_view view_array(const py::handle &obj, const subject &what) {
    array_view v;
    if (view_dlpack(obj, what, v)) return v;
    if (PyObject_CheckBuffer(obj.ptr())) {
        view_buffer(obj, what, v);
        return v;
    }
    fail(status::invalid_arguments, what,
         std::string("expected an array (an object with __dlpack__, such as a torch tensor or a "
                     "NumPy array, or with the buffer protocol); got ") +
             std::string(py::str(obj.get_type().attr("__name__"))));
}

py::object allocate_array(array_family family, data_type dt, const dims &shape, const dims &strides) {
    if (family == array_family::torch) {
        torch_handles *th = torch_if_loaded();
        const py::object &tdt = dt == data_type::f32    ? th->f32
                                : dt == data_type::bf16 ? th->bf16
                                : dt == data_type::f16  ? th->f16
                                                        : th->s32;
        return th->empty_strided(py::tuple(py::cast(shape)), py::tuple(py::cast(strides)),
                                 py::arg("dtype") = tdt);
    }
    if (dt == data_type::bf16)
        throw error(status::invalid_data_type,
                    "output: NumPy has no bfloat16; give bf16 data as torch tensors");
    const py::dtype ndt = dt == data_type::f32 ? py::dtype::of<float>()
                          : dt == data_type::f16 ? py::dtype("float16")
                                                 : py::dtype::of<int32_t>();
    std::vector<py::ssize_t> bytes;
    for (dim_t s : strides) bytes.push_back(py::ssize_t(s * dim_t(element_size(dt))));
    return py::array(ndt, std::vector<py::ssize_t>(shape.begin(), shape.end()), bytes);
}

}  // namespace convgrad::python
