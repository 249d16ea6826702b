// The depthwise kernel as inventory entries (the rows are in kernels/inventory.cpp).
#include "kernels/dw_kernels.hpp"

#include <algorithm>
#include <cmath>

#include "kernels/plan/cache_sizes.hpp"
#include "threading/parallel.hpp"

namespace convgrad::detail {
namespace {

class dw_kernel final : public kernel {
  public:
    dw_kernel(const dw_plan &pl, dw_run_fn run) : pl_(pl), run_(run) {}
    void execute(const conv_args &args) const override { run_(pl_, args); }
    std::string describe() const override {
        const bool bwd_data = pl_.p.dir == conv_direction::bwd_data;
        return "depthwise channels=" + std::to_string(pl_.lanes) +
               " tile=" + std::to_string(pl_.ur) + "x" + std::to_string(2 * pl_.vlen) +
               (pl_.copies ? " planes=" + std::to_string(pl_.planes) + " via " +
                                 (bwd_data ? "dst" : "src") + " copies of " +
                                 std::to_string(pl_.chunk) + " images"
                           : "") +
               (pl_.native ? " in place"
                           : " via f32 channels-last copies of " + std::to_string(pl_.ncx_chunk) +
                                 " images") +
               (pl_.stream_output ? " output streamed past the caches" : "") +
               (pl_.fetch_to_l2 ? " next rows fetched into L2" : "") +
               " threads=" + std::to_string(pl_.nthr);
    }

  private:
    dw_plan pl_;
    dw_run_fn run_;
};

}  // namespace

// Bytes of one image's planes (the input side expanded to lanes x planes), or of the input
// itself without copies; in double (extreme sizes).
static double dw_plane_bytes(const conv_problem &p, bool f32) {
    const bool bwd_data = p.dir == conv_direction::bwd_data;
    const dim_t *sp = bwd_data ? p.o : p.i;
    return double(sp[0]) * double(sp[1]) * double(sp[2]) * double(p.g) * double(p.icg) *
           double(p.ocg) * (f32 ? 4.0 : 2.0);
}

std::string dw_why_not(const conv_problem &p, int vlen) {
    const std::string cpg =
        std::to_string(p.icg) + " src and " + std::to_string(p.ocg) + " dst channels per group";
    if (p.icg != 1 || p.ocg != 1) {
        // Planes multiply the input side by the other side's channels per group: a few only.
        if (p.g == 1) return "not grouped: " + cpg + " (planes need groups)";
        if (p.icg > 8 || p.ocg > 8) return "not depthwise: " + cpg + " (planes take up to 8 and 8)";
        if (p.icg == p.ocg && vlen % p.icg == 0)
            return "not depthwise: " + cpg + " dividing the vector width (grouped_lanes takes it)";
        // The planes are a copy of the input side as large as its channels times the other
        // side's, read by each tap: one tap does not pay for it. (64 groups of 1 -> 6 channels,
        // 1x1, 18 x 1471 pixels, 2 threads: the copy by vector gathers took most of 9.4, 13.2 and
        // 10.3 ms for the forward, data and weight gradients; the direct kernel 5.8, 5.1, 3.7.
        // bf16 and f16 1.2-2.2x faster there too, but for bf16's weight gradient, whose
        // direct_bf16dot packing of one input channel per group made it 4.7-4.9 -> 6.1-6.3 ms.)
        const bool bf16_weights = p.dt == data_type::bf16 && p.dir == conv_direction::bwd_weights;
        if (p.ksp() == 1 && !bf16_weights)
            return "a 1x1 kernel with " + cpg + ": its plane copies cost more than its one tap";
        // One image's planes are one chunk: they must fit well within 64-bit sizes.
        if (dw_plane_bytes(p, true) > 0x1p40) return "the plane copies of one image exceed 1 TiB";
    }
    return dw_stride_why_not(p);
}

std::string dw_stride_why_not(const conv_problem &p) {
    for (int x = 0; x < 3; ++x)
        if (double(p.s[x]) > double(p.i[x]) + double(p.pb[x]) + double(p.pe[x]))
            return "a stride (" + std::to_string(p.s[x]) +
                   ") beyond the padded input: one output pixel along that axis";
    return {};
}

// The bytes of input rows that a line reads and the line before it did not, per multiply-add
// of the line, for one channel (the channels scale both alike). fwd: a line is an output row,
// and the next one's taps reach min(stride, kernel) new src rows along h. bwd_data: a line is a
// src row; a dst row serves the stride's src rows, and each src pixel takes 1/(stride_h *
// stride_w) of the taps. bwd_weights: an output row, with the src rows of fwd and a dst row.
// (In double: the extents may be huge.)
double dw_new_row_bytes_per_mac(const conv_problem &p) {
    const double e = double(element_size(p.dt)), taps = double(p.ksp());
    const double sh = double(p.s[1]), sw = double(p.s[2]);
    const double src_rows = double(std::min(p.s[1], p.k[1])) * double(p.i[2]);
    double bytes = 0, macs = 0;
    switch (p.dir) {
        case conv_direction::fwd:
            bytes = src_rows;
            macs = double(p.o[2]) * taps;
            break;
        case conv_direction::bwd_data:
            bytes = double(p.o[2]) / sh;
            macs = double(p.i[2]) * taps / (sh * sw);
            break;
        default:
            bytes = src_rows + double(p.o[2]);
            macs = double(p.o[2]) * taps;
            break;
    }
    return macs > 0 ? e * bytes / macs : 0.0;
}

dw_plan make_dw_plan(const conv_problem &p, register_tile t) {
    dw_plan pl{};
    pl.p = p;
    pl.vlen = t.vlen;
    // Accumulators of ur pixels x 2 vectors, the 2 weight vectors and a conversion temporary
    // within the register file: 8 of 32 zmm (18 used), 6 of 16 ymm (15 used).
    pl.ur = t.nregs >= 32 ? 8 : 6;
    // One channel: only lane 0 is read, whatever the channel stride.
    pl.native = p.g == 1 || (p.src.c == 1 && p.dst.c == 1);
    pl.nthr = threads_for(p.macs());
    const bool bwd_data = p.dir == conv_direction::bwd_data;
    pl.lanes = p.g * (bwd_data ? p.icg : p.ocg);
    pl.planes = int(bwd_data ? p.ocg : p.icg);
    pl.copies = p.icg != 1 || p.ocg != 1;
    // Chunks of about 1 MB of planes (NCX: planes of the f32 copies), at least one image: the
    // lines read them from L2 (4 MB measured no faster, within the noise of a loaded machine).
    const double image = dw_plane_bytes(p, !pl.native || p.dt == data_type::f32);
    const double mb = double(std::max<dim_t>(p.mb, 1));
    const double fit = image > 0 ? std::floor(double(1 << 20) / image) : mb;
    pl.chunk = pl.copies ? dim_t(std::max(1.0, std::min(mb, fit))) : dim_t(mb);
    // NCX copies of one chunk (both data tensors, f32) within half the threads' L2, in chunks
    // of equal size. Whole-batch copies made MobileNetV2's depthwise 3x3 three to four times
    // slower in NCX than in NXC: each copy went to memory and was read back.
    const double copies = (double(p.i[0]) * double(p.i[1]) * double(p.i[2]) * double(p.ic()) +
                           double(p.o[0]) * double(p.o[1]) * double(p.o[2]) * double(p.oc())) *
                          4.0;
    pl.ncx_chunk =
        pl.native ? dim_t(mb) : images_within_l2(copies, dim_t(mb), pl.nthr, machine_caches());
    // The direct kernels' rule (output_streams_past_caches). A line's blocks store whole
    // vectors, 2 per pixel and channel block: whole cache lines where the tensor is aligned
    // (bf16/f16: a block of two vectors is one line, stored as one; dw_block).
    const dim_t *out_sp = bwd_data ? p.i : p.o;
    const dim_t elem = dim_t(element_size(p.dt));
    const double out_bytes = double(elem) * mb * double(out_sp[0]) * double(out_sp[1]) *
                             double(out_sp[2]) * double(bwd_data ? p.ic() : p.oc());
    // bf16/f16 only where a pixel's channels are whole lines (a multiple of 32): else the
    // pixels alternate between aligned (streamed) and not (stored plainly), and the lines they
    // share are written both ways. (MobileNetV2's 144 channels, Zen 4, 2 threads, 5 alternated
    // runs each way: no difference beyond this host's noise; left plain.)
    const bool whole_lines =
        p.dt == data_type::f32 || (bwd_data ? p.ic() : p.oc()) % (64 / elem) == 0;
    pl.stream_output = p.dir != conv_direction::bwd_weights && pl.native && whole_lines &&
                       output_streams_past_caches(out_bytes, pl.nthr, machine_caches());
    pl.fetch_to_l2 =
        pl.native && !pl.copies && dw_new_row_bytes_per_mac(p) > dw_fetch_to_l2_bytes_per_mac;
    return pl;
}

std::unique_ptr<kernel> make_dw_kernel(const conv_problem &p, register_tile t, dw_run_fn run) {
    return std::make_unique<dw_kernel>(make_dw_plan(p, t), run);
}

}  // namespace convgrad::detail
