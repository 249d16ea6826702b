// Execution of a compiled op: check the user's tensors against what was compiled, then run the
// kernel.
#include <chrono>
#include <new>

#include "api/compiled_op.hpp"
#include "api/rounded_inputs.hpp"
#include "api/verbose.hpp"
#include "core/op_error.hpp"
#include "threading/parallel.hpp"

namespace convgrad {

using detail::op_error;

namespace {

void check_tensor(const op_error &err, const char *what, size_t index, const tensor &t,
                  const logical_tensor &compiled) {
    const std::string subject = std::string(what) + " " + std::to_string(index) + " (id " +
                                std::to_string(compiled.id()) + ")";
    const logical_tensor &lt = t.get_logical_tensor();
    if (lt.id() != compiled.id())
        err.fail(status::invalid_arguments, subject, "tensor id differs from the compiled one",
                 std::to_string(compiled.id()), std::to_string(lt.id()));
    if (lt.has_known_shape() && lt.shape() != compiled.shape())
        err.fail(status::invalid_shape, subject, "shape differs from the compiled one",
                 detail::to_string(compiled.shape()), detail::to_string(lt.shape()));
    if (lt.has_known_strides() && lt.has_known_shape() && lt.strides() != compiled.strides())
        err.fail(status::invalid_shape, subject, "strides differ from the compiled ones",
                 detail::to_string(compiled.strides()), detail::to_string(lt.strides()));
    if (lt.dtype() != data_type::undef && lt.dtype() != compiled.dtype())
        err.fail(status::invalid_data_type, subject, "data type differs from the compiled one",
                 to_string(compiled.dtype()), to_string(lt.dtype()));
    if (!t.get_data_handle() && compiled.size_bytes() != 0)
        err.fail(status::invalid_arguments, subject, "data handle is null");
}

}  // namespace

void detail::check_thread_count(const op &o) {
    const int n = requested_threads();
    if (n > max_thread_count)
        op_error(o).fail(status::invalid_arguments, "thread count (OMP_NUM_THREADS, omp_set_num_threads)",
                         "at most " + std::to_string(max_thread_count) + " threads are supported",
                         "<= " + std::to_string(max_thread_count), std::to_string(n));
}

void compiled_op::execute(const std::vector<tensor> &inputs,
                          const std::vector<tensor> &outputs) const {
    const op_error err(source);
    if (inputs.size() != r.inputs.size())
        err.fail(status::invalid_arguments, "execute", "wrong number of input tensors",
                 std::to_string(r.inputs.size()), std::to_string(inputs.size()));
    if (outputs.size() != r.outputs.size())
        err.fail(status::invalid_arguments, "execute", "wrong number of output tensors",
                 std::to_string(r.outputs.size()), std::to_string(outputs.size()));
    for (size_t i = 0; i < inputs.size(); ++i) check_tensor(err, "input", i, inputs[i], r.inputs[i]);
    check_tensor(err, "output", 0, outputs[0], r.outputs[0]);
    detail::check_thread_count(source);

    if (r.shape_input >= 0) {
        // The s32 shape tensor must hold the shape the op was compiled for.
        const auto *v = static_cast<const int32_t *>(inputs[size_t(r.shape_input)].get_data_handle());
        const dim_t stride = r.inputs[size_t(r.shape_input)].strides()[0];
        dims got;
        for (size_t j = 0; j < r.shape_values.size(); ++j) got.push_back(v[dim_t(j) * stride]);
        if (got != r.shape_values)
            err.fail(status::invalid_shape,
                     err.tensor_subject(source.kind() == op_kind::ConvolutionBackwardData
                                            ? "dst_shape"
                                            : "weights_shape",
                                        r.inputs[size_t(r.shape_input)]),
                     "values at execution must equal the compiled output shape",
                     detail::to_string(r.shape_values), detail::to_string(got));
    }

    detail::conv_args a;
    auto in_ptr = [&](int idx) -> const void * {
        return idx >= 0 ? inputs[size_t(idx)].get_data_handle() : nullptr;
    };
    a.src = in_ptr(r.src_input);
    a.dst = in_ptr(r.dst_input);
    a.wei = in_ptr(r.wei_input);
    a.bias = in_ptr(r.bias_input);
    a.out = outputs[0].get_data_handle();
    if (r.outputs[0].size_bytes() == 0) return;  // nothing to write (zero batch)

    try {
        // fpmath_mode bf16/f16: the multiplied inputs rounded once (the bias is not rounded).
        detail::rounded_inputs rounded;
        if (r.prob.math_dt != r.prob.dt && !k->rounds_to_math_type()) {
            const int nthr = detail::threads_for(double(r.outputs[0].size_bytes()));
            auto round = [&](int idx, const void *&p) {
                if (idx >= 0 && p) p = rounded.add(r.inputs[size_t(idx)], p, r.prob.math_dt, nthr);
            };
            round(r.src_input, a.src);
            round(r.wei_input, a.wei);
            round(r.dst_input, a.dst);
        }
        if (detail::verbose_level() >= 1) {
            const auto t0 = std::chrono::steady_clock::now();
            k->execute(a);
            const auto t1 = std::chrono::steady_clock::now();
            detail::verbose_exec(*this, std::chrono::duration<double, std::milli>(t1 - t0).count());
        } else {
            k->execute(a);
        }
    } catch (const error &) {
        throw;
    } catch (const std::bad_alloc &) {
        // Thrown on any thread of a parallel region; threading/parallel.hpp brings it here.
        err.fail(status::out_of_memory, "execute",
                 std::string("kernel ") + impl->name + " could not allocate its scratch memory");
    } catch (const std::exception &e) {
        err.fail(status::runtime_error, "execute",
                 std::string("kernel ") + impl->name + " failed: " + e.what());
    }
}

}  // namespace convgrad
