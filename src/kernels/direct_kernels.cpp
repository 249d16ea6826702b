// The direct (brgemm-style) kernels as inventory entries (the rows are in kernels/inventory.cpp).
#include "kernels/direct_kernels.hpp"

namespace convgrad::detail {
namespace {

class direct_kernel final : public kernel {
  public:
    direct_kernel(const direct_plan &pl, direct_run_fn run) : pl_(pl), run_(run) {}
    void execute(const conv_args &args) const override { run_(pl_, args); }
    std::string describe() const override { return detail::describe(pl_); }

  private:
    direct_plan pl_;
    direct_run_fn run_;
};

}  // namespace

std::string direct_why_not(const conv_problem &) {
    return {};
}

std::string grouped_why_not(const conv_problem &p, int vlen) {
    if (p.g == 1) return "not grouped";
    if (p.icg != p.ocg) return "channels per group differ between src and dst";
    if (p.icg >= vlen) return "channels per group fill a vector: the direct kernel is better";
    if (vlen % p.icg != 0) return "channels per group do not divide the vector width";
    return {};
}

std::unique_ptr<kernel> make_direct_kernel(const conv_problem &p, register_tile t,
                                           direct_run_fn run, bool split_weights) {
    return std::make_unique<direct_kernel>(
        make_direct_plan(p, t.vlen, t.nregs, machine_caches(), true, split_weights), run);
}

}  // namespace convgrad::detail
