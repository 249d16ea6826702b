// The depthwise kernel as inventory entries (the rows are in kernels/inventory.cpp).
#include "kernels/dw_kernels.hpp"

#include "threading/parallel.hpp"

namespace convgrad::detail {
namespace {

class dw_kernel final : public kernel {
  public:
    dw_kernel(const dw_plan &pl, dw_run_fn run) : pl_(pl), run_(run) {}
    void execute(const conv_args &args) const override { run_(pl_, args); }
    std::string describe() const override {
        return "depthwise channels=" + std::to_string(pl_.p.g) + " tile=" + std::to_string(pl_.ur) +
               "x" + std::to_string(2 * pl_.vlen) +
               (pl_.native ? " in place" : " via f32 channels-last copies") +
               " threads=" + std::to_string(pl_.nthr);
    }

  private:
    dw_plan pl_;
    dw_run_fn run_;
};

}  // namespace

std::string dw_why_not(const conv_problem &p) {
    if (p.icg != 1 || p.ocg != 1)
        return "not depthwise: " + std::to_string(p.icg) + " src and " + std::to_string(p.ocg) +
               " dst channels per group (needs 1 and 1)";
    // Its pixel steps are stride x pixel stride in elements; a stride beyond the padded input
    // (one output pixel along that axis, nothing to block) may make that overflow 64 bits.
    for (int x = 0; x < 3; ++x)
        if (double(p.s[x]) > double(p.i[x]) + double(p.pb[x]) + double(p.pe[x]))
            return "a stride (" + std::to_string(p.s[x]) +
                   ") beyond the padded input: one output pixel along that axis";
    return {};
}

std::unique_ptr<kernel> make_dw_kernel(const conv_problem &p, register_tile t, dw_run_fn run) {
    dw_plan pl{};
    pl.p = p;
    pl.vlen = t.vlen;
    // Accumulators of ur pixels x 2 vectors, the 2 weight vectors and a conversion temporary
    // within the register file: 8 of 32 zmm (18 used), 6 of 16 ymm (15 used).
    pl.ur = t.nregs >= 32 ? 8 : 6;
    // One channel: only lane 0 is read, whatever the channel stride.
    pl.native = p.g == 1 || (p.src.c == 1 && p.dst.c == 1);
    pl.nthr = threads_for(p.macs());
    return std::make_unique<dw_kernel>(pl, run);
}

}  // namespace convgrad::detail
