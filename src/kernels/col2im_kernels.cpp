#include "kernels/col2im_kernels.hpp"

#include <algorithm>

#include "kernels/ukernel/brgemm_args.hpp"  // (ukernel_rows_that_fit)
#include "threading/parallel.hpp"

namespace convgrad::detail {
namespace {

class col2im_kernel final : public kernel {
  public:
    col2im_kernel(const col2im_plan &pl, col2im_run_fn run) : pl_(pl), run_(run) {}
    void execute(const conv_args &args) const override { run_(pl_, args); }
    std::string describe() const override {
        return std::string(pl_.pairs ? "bf16 pairs " : "") + "G=dst*Wt N=" + std::to_string(pl_.N) +
               " (taps*icg) tile=" + std::to_string(pl_.mr) + "x" +
               std::to_string(pl_.nv * pl_.vlen) +
               " dst=" + (pl_.dst_direct ? "in place" : "copied per tile") +
               " threads=" + std::to_string(pl_.nthr);
    }

  private:
    col2im_plan pl_;
    col2im_run_fn run_;
};

}  // namespace

std::string col2im_why_not(const conv_problem &p, int vlen) {
    if (p.dir != conv_direction::bwd_data) return "only bwd_data";
    // With half a vector of channels or more, channels on the lanes (the direct kernel) waste
    // at most half of each vector and need no scatter.
    if (2 * p.icg >= vlen)
        return "channels per group (" + std::to_string(p.icg) + ") fill half a vector of " +
               std::to_string(vlen) + " or more: the direct kernel is better";
    // The product sums ocg terms per G entry and the scatter adds each entry once: with fewer
    // than 4 dst channels the scatter dominates and the direct kernel wins (ocg 1, icg 3, 3x3:
    // 1.58 ms against 1.33 ms on one thread, Intel Xeon VM; ocg 8 already 3.8x faster).
    if (p.ocg < 4)
        return "dst channels per group (" + std::to_string(p.ocg) +
               ") below 4: the scatter would cost more than the product saves";
    // A partial vector of channels x taps wastes lanes, but fewer than the direct kernel's
    // channels on the lanes waste: taken when it fills half a vector and more than four times
    // the lanes the channels fill. One channel (a ConvTranspose to mono audio, or a grayscale
    // image's data gradient), 2 threads, Xeon model 207: 1-D kernel 10, stride 5 (wav2vec2's
    // first layer), 10 lanes: 53 -> 7.4 ms; 3x3, 9 lanes: 1.4-2.7x faster. Three channels by
    // 3 taps (9 lanes) ran 0.88x, two by 2x2 (8 lanes) 0.93x: left to the direct kernel.
    const dim_t n = p.icg * p.ksp();
    if (n < vlen && (2 * n < vlen || n <= 4 * p.icg))
        return "channels x taps (" + std::to_string(n) + ") fill less than one vector of " +
               std::to_string(vlen) + " and not both half of it and over 4x the channels' " +
               std::to_string(p.icg) + " lanes";
    // Per-thread f32 accumulator of one image's src channels of a group, within the scratch
    // bound's copy of src (the unit count caps the threads); the weights panel, the G tile and
    // the copied dst tile within one padded weights copy each; in pairs, the panel's bf16 pairs
    // too, half a copy, within the bound's second copy of src that col2im does not make
    // (conv_problem::scratch_bound).
    return {};
}

std::string col2im_pairs_why_not(const conv_problem &p, int vlen) {
    if (p.dt != data_type::bf16)
        return std::string("multiplies bf16 pairs: takes bf16 tensors, not ") + to_string(p.dt);
    return col2im_why_not(p, vlen);
}

std::unique_ptr<kernel> make_col2im_kernel(const conv_problem &p, register_tile t,
                                           col2im_run_fn run, bool pairs) {
    col2im_plan pl{};
    pl.p = p;
    pl.vlen = t.vlen;
    pl.N = p.icg * p.ksp();
    pl.ldb = (pl.N + t.vlen - 1) / t.vlen * t.vlen;
    // The widest tile of at least 6 rows whose accumulators, vectors of B and one broadcast
    // register fit the register file: 6 x 4 with AVX-512's 32 registers, 6 x 2 with AVX2's 16.
    // (AVX2's 4-vector tile has 2 rows, 8 accumulators, too few to cover the FMA latency: the
    // ResNet-50 stem's data gradient, N = 147, Zen 3, 2 threads, alternated rounds, ran 1.20x
    // and 1.24x faster on 6 x 2 in f32 (1.08x in a third run), 1.45x and 1.20x in bf16, 1.41x
    // and 1.14x in f16; 4 x 3 was 0.94x of 6 x 2. The price: DCGAN 128 -> 3's ConvTranspose,
    // N = 48 and K = 128, three blocks of 2 vectors instead of 4 + 2, ran 0.94-0.98x.)
    pl.nv = int(std::min<dim_t>(4, pl.ldb / t.vlen));
    while (pl.nv > 1 && ukernel_rows_that_fit(t.nregs, pl.nv) < 6) --pl.nv;
    pl.mr = ukernel_rows_that_fit(t.nregs, pl.nv);
    // In pairs, the microkernel reads dst's channels as pairs: in place where they are
    // contiguous and every pair is whole.
    pl.pairs = pairs;
    pl.dst_direct = pairs ? p.dst.c == 1 && p.ocg % 2 == 0 : p.dt == data_type::f32;
    // Whole (image, group) units per thread: no more threads than units.
    pl.nthr = int(std::max<dim_t>(1, std::min<dim_t>(threads_for(p.macs()), p.mb * p.g)));
    return std::make_unique<col2im_kernel>(pl, run);
}

}  // namespace convgrad::detail
