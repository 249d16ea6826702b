#include "dispatch/registry.hpp"

#include <cstdlib>

#include "dispatch/padded_tap_guard.hpp"
#include "ref/ref_conv.hpp"

namespace convgrad::detail {
namespace {

class ref_kernel final : public kernel {
  public:
    explicit ref_kernel(const conv_problem &p) : p_(p) {}
    void execute(const conv_args &args) const override { ref_conv_execute(p_, args); }

  private:
    conv_problem p_;
};

std::string ref_accepts(const conv_problem &) {
    return {};
}
std::unique_ptr<kernel> ref_create(const conv_problem &p) {
    return std::make_unique<ref_kernel>(p);
}

// CONVGRAD_DISABLE: comma-separated kernel name prefixes ("gemm", "direct_brgemm:avx512") that
// dispatch passes over, to measure a problem with and without a kernel. Read at every dispatch
// (compile time), so a benchmark can compare both in one process.
bool listed_in_env(const char *var, const char *name) {
    const char *e = std::getenv(var);
    if (!e) return false;
    const std::string list = e, n = name;
    size_t start = 0;
    while (start <= list.size()) {
        size_t end = list.find(',', start);
        if (end == std::string::npos) end = list.size();
        const std::string prefix = list.substr(start, end - start);
        if (!prefix.empty() && n.compare(0, prefix.size(), prefix) == 0) return true;
        start = end + 1;
    }
    return false;
}
bool disabled_by_env(const char *name) {
    return listed_in_env("CONVGRAD_DISABLE", name);
}
// CONVGRAD_PREFER: the same kind of list; those rows are tried before all others and take every
// problem they can compute (`cannot`), their cost estimates and preferences ignored: to measure
// a kernel where dispatch would choose another (`convgrad bench --prefer`).
bool preferred_by_env(const char *name) {
    return listed_in_env("CONVGRAD_PREFER", name);
}

std::unique_ptr<kernel> create_guarded(const impl_desc &d, const conv_problem &p) {
    std::unique_ptr<kernel> k = d.create(p);
    return d.guards_padded_taps.has(p.dir) ? std::move(k) : guard_padded_taps(p, std::move(k));
}

}  // namespace

const impl_desc &reference_impl() {
    static const impl_desc ref{.name = "ref:any",
                               .directions = all_directions,
                               .dtypes = all_float_types,
                               .isa = cpu_isa::generic,
                               .tile = {1, 0},
                               .cannot = ref_accepts,
                               .why_not = ref_accepts,
                               .create = ref_create};
    return ref;
}

const std::vector<impl_desc> &impl_list() {
    static const std::vector<impl_desc> list = [] {
        std::vector<impl_desc> v = kernel_inventory();
        v.push_back(reference_impl());
        return v;
    }();
    return list;
}

dispatch_result dispatch(const conv_problem &p, cpu_features available, bool reference_only) {
    dispatch_result r;
    if (reference_only) {
        r.impl = &reference_impl();
        r.k = r.impl->create(p);
        return r;
    }
    if (std::getenv("CONVGRAD_PREFER"))
        for (const impl_desc &d : kernel_inventory()) {
            // (cannot_natively: a CPU with AMX under a build without the tile instructions)
            if (!preferred_by_env(d.name) || !available.contains(d.needs()) ||
                disabled_by_env(d.name) || !d.serves(p).empty() || !d.cannot(p).empty() ||
                (d.cannot_natively && !d.cannot_natively(p).empty()))
                continue;
            r.impl = &d;
            r.k = create_guarded(d, p);
            return r;
        }
    for (const impl_desc &d : impl_list()) {
        const cpu_features needs = d.needs();
        if (!available.contains(needs)) {
            r.refusals.push_back(std::string(d.name) + ": needs " + to_string(d.isa) +
                                 ", this CPU (or " + "CONVGRAD_MAX_ISA) lacks " +
                                 cpu_features::from_missing(needs, available).to_string());
            continue;
        }
        if (&d != &impl_list().back() && disabled_by_env(d.name)) {
            r.refusals.push_back(std::string(d.name) + ": disabled by CONVGRAD_DISABLE");
            continue;
        }
        std::string why = d.serves(p);
        if (why.empty()) why = d.why_not(p);
        if (!why.empty()) {
            r.refusals.push_back(std::string(d.name) + ": " + why);
            continue;
        }
        r.impl = &d;
        r.k = create_guarded(d, p);
        return r;
    }
    r.impl = &reference_impl();
    r.k = r.impl->create(p);
    return r;
}

}  // namespace convgrad::detail
