// The grouped kernel on vdpbf16ps as an inventory row (the row is in kernels/inventory.cpp).
#include "kernels/grouped_pairs_kernels.hpp"

#include "dispatch/cpu_features.hpp"
#include "threading/parallel.hpp"

namespace convgrad::detail {
namespace {

class grouped_pairs_kernel final : public kernel {
  public:
    grouped_pairs_kernel(const direct_plan &pl, direct_run_fn run) : pl_(pl), run_(run) {}
    void execute(const conv_args &args) const override { run_(pl_, args); }
    std::string describe() const override {
        const conv_problem &p = pl_.p;
        const bool fwd = p.dir == conv_direction::fwd;
        const data_layout &in = fwd ? p.src : p.dst;
        const int cg = int(p.icg), tile = grouped_pairs_tile(cg);
        return "vdpbf16ps lanes=16 channel pairs (" + std::to_string(32 / cg) + " groups of " +
               std::to_string(cg) + "), tile=" + std::to_string(tile) + " pixels; input " +
               (p.dt == data_type::bf16 && in.c == 1 ? "the user's tensor" : "a bf16 copy") +
               "; output " + (pl_.out_rounded_in_kernel ? "rounded in place" : "via f32") +
               "; threads=" + std::to_string(pl_.nthr);
    }
    // The weights and an f32 input are rounded to bf16 on the way (fpmath_mode bf16).
    bool rounds_to_math_type() const override { return true; }

  private:
    direct_plan pl_;
    direct_run_fn run_;
};

}  // namespace

std::string grouped_pairs_cannot(const conv_problem &p) {
    if (p.dt != data_type::bf16 && !(p.dt == data_type::f32 && p.math_dt == data_type::bf16))
        return std::string(
                   "multiplies bf16: takes bf16 tensors, or f32 under fpmath_mode bf16, not ") +
               to_string(p.dt) + (p.dt == data_type::f32 ? " (strict)" : "");
    if (p.dir == conv_direction::bwd_weights) return "fwd and bwd_data only";
    if (p.g == 1) return "not grouped";
    if (p.icg != p.ocg) return "channels per group differ between src and dst";
    if (p.icg != 2 && p.icg != 4 && p.icg != 8)
        return "channels per group not 2, 4 or 8 (pairs of a group within a vector of 32)";
    // A bf16 copy of the input side unless it is bf16 with contiguous channels; an f32 copy of
    // the output unless it is rounded in place or f32 with contiguous channels.
    const bool fwd = p.dir == conv_direction::fwd;
    const data_layout &in = fwd ? p.src : p.dst, &out = fwd ? p.dst : p.src;
    const double in_px = double(p.mb) * double(fwd ? p.isp() : p.osp());
    const double out_px = double(p.mb) * double(fwd ? p.osp() : p.isp());
    const double C = double(p.g) * double(p.icg);
    double bytes = 2.0 * double(p.ksp()) * C * double(p.icg) + 4.0 * (C + 32);
    if (!(p.dt == data_type::bf16 && in.c == 1)) bytes += 2.0 * in_px * C;
    if (out.c != 1) bytes += 4.0 * out_px * C;
    const int nthr = threads_for(p.macs());
    if (bytes > p.scratch_bound(nthr))
        return "its scratch (copies of strided tensors) exceeds the problem's bound";
    return {};
}

std::string grouped_pairs_why_not(const conv_problem &p) {
    std::string why = grouped_pairs_cannot(p);
    if (!why.empty()) return why;
    if (!fast_bf16_dot()) return fast_bf16_dot_reason();
    return {};
}

std::unique_ptr<kernel> make_grouped_pairs_kernel(const conv_problem &p, register_tile t,
                                                  direct_run_fn run) {
    return std::make_unique<grouped_pairs_kernel>(
        make_direct_plan(p, t.vlen, t.nregs, machine_caches(), true), run);
}

}  // namespace convgrad::detail
