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
    // Its weight gradient copies, per diff_dst row, the src box the taps span (and scans it):
    // with pads and dilations large against the input, that box is mostly padding and can pass
    // any memory. (A long row is fine: a 1-D row of 20000 pixels has a box of 1.25 MiB.)
    if (p.dir != conv_direction::bwd_weights) return {};
    const double box = grouped_box_bytes(p, 1, vlen), l2 = double(machine_caches().l2);
    const double image = double(p.i[0]) * double(p.i[1]) * double(p.i[2]) * vlen * sizeof(float);
    if (box > l2 && box > 4 * image)
        return "the src box one diff_dst row's taps span (" + std::to_string(box / 1024.0) +
               " KiB per block of channels) outgrows L2 and 4 times the src image: pads and "
               "dilations large against the input";
    return {};
}

double grouped_box_bytes(const conv_problem &p, dim_t nr, int vlen) {
    const double bd = double(p.k[0] - 1) * double(p.dl[0]) + 1;
    const double bh = double(nr - 1) * double(p.s[1]) + double(p.k[1] - 1) * double(p.dl[1]) + 1;
    const double wp =
        double(p.o[2] - 1) * double(p.s[2]) + double(p.k[2] - 1) * double(p.dl[2]) + 1;
    return bd * bh * wp * double(vlen) * double(sizeof(float));
}

std::unique_ptr<kernel> make_direct_kernel(const conv_problem &p, register_tile t,
                                           direct_run_fn run, bool split_weights) {
    direct_plan pl = make_direct_plan(p, t.vlen, t.nregs, machine_caches(), true, split_weights);
    // (run_grouped, which does not split the weights, has a bwd_weights schedule of its own.)
    if (!split_weights) pl.bwd_w_group_copies = false;
    return std::make_unique<direct_kernel>(pl, run);
}

}  // namespace convgrad::detail
