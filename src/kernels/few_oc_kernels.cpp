#include "kernels/few_oc_kernels.hpp"

#include <algorithm>
#include <cmath>

#include "threading/parallel.hpp"

namespace convgrad::detail {
namespace {

class few_oc_kernel final : public kernel {
  public:
    few_oc_kernel(const few_oc_plan &pl, few_oc_run_fn run) : pl_(pl), run_(run) {}
    void execute(const conv_args &args) const override { run_(pl_, args); }
    std::string describe() const override {
        const bool fwd = pl_.p.dir == conv_direction::fwd;
        const auto how = [&](bool direct) {
            return std::string(direct || pl_.native16 ? "in place" : "converted per chunk");
        };
        return std::string("src channels on the lanes, ") +
               (fwd ? std::to_string(pl_.pixels) + " pixels x " + std::to_string(pl_.p.ocg) +
                          " outputs a block, summed across lanes"
                    : "a register block of (kw, channel vector, output) sums a tap row") +
               " rows_per_chunk=" + std::to_string(pl_.rows_per_chunk) +
               " src=" + how(pl_.src_direct) + (fwd ? "" : " dst=" + how(pl_.dst_direct)) +
               (pl_.native16 ? " (widened in the loads)" : "") +
               " threads=" + std::to_string(pl_.nthr);
    }

  private:
    few_oc_plan pl_;
    few_oc_run_fn run_;
};

}  // namespace

std::string few_oc_why_not(const conv_problem &p, int vlen) {
    if (p.dir == conv_direction::bwd_data)
        return "only fwd and bwd_weights (a data gradient to few channels is col2im's)";
    if (p.ocg > 4)
        return "dst channels per group (" + std::to_string(p.ocg) +
               ") above 4: on the lanes they fill them";
    // The src channels on the lanes: at least half a vector of them, and over 4x the lanes the
    // dst channels would fill on the other kernels.
    if (2 * p.icg < vlen || p.icg <= 4 * p.ocg)
        return "src channels per group (" + std::to_string(p.icg) + ") fill less than half of " +
               std::to_string(vlen) + " lanes or not over 4x the " + std::to_string(p.ocg) +
               " dst channels'";
    if (p.math_dt != p.dt) return "inputs rounded to another type first (fpmath_mode)";
    // A 1x1 forward over channels that are not contiguous (NCX) is a matrix product that reads
    // src in place with the pixels on the lanes (the GEMM kernel): 0.94 ms against 1.55 here,
    // which copies src channels-last (64 -> 1 channel, 128x128, batch 8, 2 threads).
    bool unit_strides = true;
    for (int x = 0; x < max_spatial; ++x) unit_strides = unit_strides && p.s[x] == 1;
    if (p.dir == conv_direction::fwd && p.src.c != 1 && p.ksp() == 1 && unit_strides)
        return "1x1 forward over NCX src: a matrix product with the pixels on the lanes";
    return {};
}

std::unique_ptr<kernel> make_few_oc_kernel(const conv_problem &p, register_tile t,
                                           few_oc_run_fn run) {
    few_oc_plan pl{};
    pl.p = p;
    pl.vlen = t.vlen;
    pl.nregs = t.nregs;
    pl.cpad = (p.icg + t.vlen - 1) / t.vlen * t.vlen;
    pl.pixels = int(std::max<dim_t>(1, t.vlen / std::max<dim_t>(p.ocg, 1)));
    pl.src_direct = p.dt == data_type::f32 && p.src.c == 1;
    pl.dst_direct = p.dt == data_type::f32 && p.dst.c == 1;
    // bf16/f16 with contiguous channels: read in place, each load widened. Converted copies of
    // whole rows cost a quarter of the f16 weight gradient's time, more than the widening.
    // (Measured, 2 threads, Zen 5, alternated: HiFi-GAN's conv_post weight gradient, f16
    // 1.45-1.55 -> 1.04-1.08 ms, bf16 1.19-1.46 -> 0.88-1.21 (f32 1.08-1.20); its forward,
    // bf16 1.00-1.13 -> 0.64-0.98; ESRGAN's last conv, f16, weight gradient 10.1-12.7 ->
    // 9.3-10.4, forward 8.3-10.4 -> 6.1-7.2.)
    pl.native16 =
        p.dt != data_type::f32 && p.src.c == 1 && (p.dir == conv_direction::fwd || p.dst.c == 1);
    // Converted src rows of a chunk (each output row reads about s[1] new rows along h) within
    // 512 KB: they are read back from L2 by every tap row. In place, rows of the same size.
    const double row = std::max(1.0, double(p.i[2]) * double(p.ic()) * 4.0 * double(p.s[1]));
    pl.rows_per_chunk = dim_t(std::clamp(std::floor(double(512 * 1024) / row), 1.0, 4096.0));
    pl.nthr = threads_for(p.macs());
    return std::make_unique<few_oc_kernel>(pl, run);
}

}  // namespace convgrad::detail
