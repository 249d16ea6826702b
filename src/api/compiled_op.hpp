// What a compiled partition holds: the resolved op and the kernel chosen for it.
#pragma once

#include "convgrad/graph.hpp"
#include "core/resolve.hpp"
#include "dispatch/registry.hpp"

namespace convgrad {

struct compiled_op {
    op source;
    detail::resolved_op r;
    const detail::impl_desc *impl = nullptr;
    std::string kernel_name;
    std::unique_ptr<detail::kernel> k;

    explicit compiled_op(const op &o) : source(o) {}
    void execute(const std::vector<tensor> &inputs, const std::vector<tensor> &outputs) const;
};

namespace detail {
/// The thread count (OMP_NUM_THREADS, omp_set_num_threads) is within max_thread_count; else an
/// invalid_arguments error naming the op. Checked at compile and at every execute.
void check_thread_count(const op &o);
}  // namespace detail

}  // namespace convgrad
