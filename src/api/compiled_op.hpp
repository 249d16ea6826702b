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

}  // namespace convgrad
