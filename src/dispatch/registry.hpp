// Dispatch: one ordered list of implementations drives kernel choice, tests and benchmarks.
// Each implementation says why it declines a problem; the reference accepts everything.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/conv_problem.hpp"
#include "dispatch/cpu_features.hpp"

namespace convgrad::detail {

/// A kernel prepared for one problem at compile time; execute() may run concurrently.
class kernel {
public:
    virtual ~kernel() = default;
    virtual void execute(const conv_args &args) const = 0;
    /// How the kernel mapped the problem, for CONVGRAD_VERBOSE=2 (empty: nothing to add).
    virtual std::string describe() const { return {}; }
};

struct impl_desc {
    const char *name;
    cpu_isa isa;  // the instruction-set level it is compiled for: it needs features_of(isa)
    /// Empty when the implementation accepts the problem, else the reason it declines.
    std::string (*why_not)(const conv_problem &p);
    std::unique_ptr<kernel> (*create)(const conv_problem &p);
};

/// Every implementation, in priority order; the reference is last.
const std::vector<impl_desc> &impl_list();
const impl_desc &reference_impl();

struct dispatch_result {
    const impl_desc *impl = nullptr;
    std::unique_ptr<kernel> k;
    std::vector<std::string> refusals;  // "name: reason" of every implementation passed over
};

/// The first implementation whose features are `available` that accepts the problem.
dispatch_result dispatch(const conv_problem &p, cpu_features available, bool reference_only);

}  // namespace convgrad::detail
