// The direct convolution on vdpbf16ps as an inventory row (the row is in kernels/inventory.cpp).
#include "kernels/bf16dot_kernels.hpp"

#include <algorithm>

#include "threading/parallel.hpp"

namespace convgrad::detail {
namespace {

class bf16dot_kernel final : public kernel {
  public:
    bf16dot_kernel(const direct_plan &pl, direct_run_fn run) : pl_(pl), run_(run) {}
    void execute(const conv_args &args) const override { run_(pl_, args); }
    std::string describe() const override {
        const conv_problem &p = pl_.p;
        std::string s = "vdpbf16ps ";
        if (p.dir == conv_direction::bwd_weights) {
            s += "K=pixel pairs: src transposed per w phase, diff_dst packed in pixel pairs; ";
        } else {
            // The reduced side's tensor is read in place when its channel pairs are (see
            // pairs_operand in kernels/common/bf16dot_conv_impl.hpp).
            const bool fwd = p.dir == conv_direction::fwd;
            const data_layout &l = fwd ? p.src : p.dst;
            const dim_t cg = fwd ? p.icg : p.ocg;
            const bool in_place = p.dt == data_type::bf16 && l.c == 1 && cg % 2 == 0;
            if (direct_flattens_w(pl_))
                s += "K=kernel width x channel pairs from a copy padded along w; ";
            else
                s += std::string("K=channel pairs from ") +
                     (in_place ? "the user's tensor" : "a padded bf16 copy") + "; ";
        }
        return s + detail::describe(pl_) + " (src/dst: the f32 kernel's flags)";
    }
    // Its packers round f32 inputs to bf16 on the way (fpmath_mode bf16).
    bool rounds_to_math_type() const override { return true; }

  private:
    direct_plan pl_;
    direct_run_fn run_;
};

}  // namespace

double bf16dot_scratch_bytes(const conv_problem &p, int nthr) {
    auto d = [](dim_t v) { return double(v); };
    // (The flattened forward's copy is padded along w: pads and windows' overhang, and one
    // column past the last window, flat_padded_w.)
    const bool flat = p.dir == conv_direction::fwd && direct_flattens_w(p, true);
    const double src_w = flat ? std::max(d(p.i[2]) + d(p.pb[2]) + d(p.pe[2]),
                                         d(p.o[2] - 1) * d(p.s[2]) + d(p.k[2]) + 1)
                              : d(p.i[2]);
    const double src = d(p.mb) * d(p.i[0]) * d(p.i[1]) * src_w * d(p.g) * d(p.icg + 1);
    const double dst = d(p.mb) * d(p.osp()) * d(p.g) * d(p.ocg + 1);
    const double wei = d(p.g) * d(p.ksp()) * (d(p.icg) + 16) * (d(p.ocg) + 16);
    // (bwd_data with its stride phases along w merged: a panel of one kernel column per thread
    // too, direct_merges_w_phases.)
    const double column = p.dir == conv_direction::bwd_data ? d(nthr) * d(p.ocg + 1) * d(p.icg) : 0;
    if (p.dir != conv_direction::bwd_weights)  // bf16 copy of A, f32 copy of C, packed weights
        return 2 * (src + dst) + 4 * (src + dst) + 2 * (wei + column);
    // Transposed src rows: one column per pixel and stride phase, plus margins for the taps.
    const double s = d(p.s[2]), ke = d(p.o[2] + 1);
    const double cols = ke + (d(p.pb[2]) + d(p.k[2] - 1) * d(p.dl[2])) / s + 2;
    const double srcT = d(p.mb) * d(p.i[0]) * d(p.i[1]) * d(p.g) * s * d(p.icg) * cols;
    return 2 * srcT + 2 * dst + 4 * (1 + nthr) * wei;
}

std::string bf16dot_cannot(const conv_problem &p) {
    if (p.dt != data_type::bf16 && !(p.dt == data_type::f32 && p.math_dt == data_type::bf16))
        return std::string(
                   "multiplies bf16: takes bf16 tensors, or f32 under fpmath_mode bf16, not ") +
               to_string(p.dt) + (p.dt == data_type::f32 ? " (strict)" : "");
    const int nthr = threads_for(p.macs());
    if (bf16dot_scratch_bytes(p, nthr) > p.scratch_bound(nthr))
        return "its scratch (pads, dilation or strides large against the tensors) exceeds the "
               "problem's bound";
    return {};
}

std::string bf16dot_why_not(const conv_problem &p) {
    std::string why = bf16dot_cannot(p);
    if (!why.empty()) return why;
    if (!fast_bf16_dot()) return fast_bf16_dot_reason();
    // fwd and bwd_data reduce over the channels of a group in pairs: with 1-5 of them, 1-3
    // pairs per broadcast leave the kernel bound by its gather, and the f32 kernels (a
    // few-channel path, on converted data) were faster on Zen 4: 3 channels 1.2-1.5x (ResNet-50's
    // stem, 4x4 s2), 5 channels 1.3-1.7x, 6 and 8 channels slower. The forward that flattens
    // the kernel width into K (direct_flattens_w) has KW times as many pairs per broadcast.
    const dim_t reduced = p.dir == conv_direction::fwd ? p.icg : p.ocg;
    const bool flat = p.dir == conv_direction::fwd && direct_flattens_w(p, true);
    if (p.dir != conv_direction::bwd_weights && !flat && reduced < min_reduced_channels)
        return "fwd/bwd_data with " + std::to_string(reduced) + " reduced channels per group (< " +
               std::to_string(min_reduced_channels) +
               "): too few channel pairs per broadcast, the f32 kernels are faster";
    // bwd_weights reduces over the pixel pairs of one diff_dst row per batch element: rows of
    // 2-5 pixels give 1-2 pairs a row, and each row's pointers, each tap's pass and the src
    // transposed per w phase cost more than its products. Zen 4, 2 threads, against the f32
    // kernels on converted rows: 2 pixels (a 3-D layer, kernel 10x1x3) 2.5x slower, 4 pixels
    // (kernel 7, stride 7) 2.3x, 5 and 3 pixels 1.25x and 1.4x, 4 pixels of 512 channels even;
    // 6 pixels 1.14x faster, 7 (ResNet-50's res5) 1.05-1.17x, 8 (DCGAN's first
    // ConvTranspose's weight gradient) 1.34x.
    if (p.dir == conv_direction::bwd_weights && p.o[2] < min_bwd_weights_row_pixels)
        return "bwd_weights over rows of " + std::to_string(p.o[2]) + " output pixels (< " +
               std::to_string(min_bwd_weights_row_pixels) +
               "): too few pixel pairs per row, the f32 kernels are faster";
    // bwd_weights whose taps along d and h the f32 direct kernel puts in its tiles (few input
    // channels: direct_bwd_w_shares_hd) is left to it: this kernel's tiles have the input
    // channels alone as rows (a 3-D first layer: 1 row), and the GEMM kernel declines such
    // problems on the f32 kernel's estimate of the shared tiles.
    if (p.dir == conv_direction::bwd_weights &&
        direct_bwd_w_shares_hd(make_direct_plan(p, 16, 32, machine_caches(), true, true, true)))
        return "bwd_weights with " + std::to_string(p.icg) +
               " input channels per group: the f32 direct kernel's tiles share the taps "
               "along d and h (rows (kd, kh, kw, channel)), this kernel's would have " +
               std::to_string(p.icg) + " rows";
    return {};
}

std::unique_ptr<kernel> make_bf16dot_kernel(const conv_problem &p, register_tile t,
                                            direct_run_fn run) {
    // A bf16 output with contiguous channels is rounded in place by the microkernel, not
    // written as f32 and converted after (the f32 copy of ResNet-50's 1x1 64 -> 256 forward
    // is 103 MB, written and read back), where its rows fill their vectors: channels per group
    // a multiple of the vector, or at least 4 vectors (the tail under a quarter). Row by row,
    // a short or ragged row is narrowed with masked loads and stores, while the copy's pass
    // converts whole vectors across pixels. Zen 4, 2 threads, alternated runs: the 1x1 layers
    // (64-512 channels) 1.2-1.4x faster in place; FCN's 21-channel x2 ConvTranspose 1.15-1.4x
    // slower. A data gradient whose stride phases along w merge into the channels
    // (direct_merges_w_phases; in place only with src's pixels dense along w) rounds in place
    // too: its stores are whole runs of a row. Zen 5, 2 threads, 3 alternated rounds, fastest of
    // 100 executions: FCN's x2 ConvTranspose 0.55-0.71 -> 0.37-0.50 ms, its x8 2.5-3.4 ->
    // 1.7-2.2 ms (merged through the f32 copy, against in place).
    const dim_t out_chan = p.dir == conv_direction::bwd_data ? p.icg : p.ocg;
    const bool merged = direct_merges_w_phases(p, t.vlen) && direct_src_dense_along_w(p);
    const bool fills_vectors = out_chan % t.vlen == 0 || out_chan >= 4 * t.vlen || merged;
    return std::make_unique<bf16dot_kernel>(
        make_direct_plan(p, t.vlen, t.nregs, machine_caches(), fills_vectors, true, true), run);
}

}  // namespace convgrad::detail
