// The NCX depthwise kernel as inventory entries (the rows are in kernels/inventory.cpp).
#include "kernels/dw_ncx_kernels.hpp"

#include <algorithm>
#include <cmath>

#include "kernels/dw_kernels.hpp"
#include "threading/parallel.hpp"

namespace convgrad::detail {
namespace {

class dw_ncx_kernel final : public kernel {
  public:
    dw_ncx_kernel(const dw_ncx_plan &pl, dw_ncx_run_fn run) : pl_(pl), run_(run) {}
    void execute(const conv_args &args) const override { run_(pl_, args); }
    std::string describe() const override {
        const conv_problem &p = pl_.p;
        return "depthwise NCX planes=" + std::to_string(p.mb * p.g) + " pixels on " +
               std::to_string(pl_.vlen) + " lanes" +
               (pl_.staged
                    ? ", inputs read from f32 plane copies" +
                          (p.dir != conv_direction::bwd_data && p.s[2] > 1
                               ? " (src split into " + std::to_string(p.s[2]) + " stride phases)"
                               : std::string())
                : p.dir != conv_direction::bwd_data && p.s[2] == 2
                    ? ", in place, stride 2 as even elements of vector pairs"
                    : ", in place") +
               ", threads=" + std::to_string(pl_.nthr);
    }

  private:
    dw_ncx_plan pl_;
    dw_ncx_run_fn run_;
};

// The outputs of one line along w: fwd and bwd_weights the dst row, bwd_data one stride phase
// of the src row.
dim_t lane_outputs(const conv_problem &p) {
    return p.dir == conv_direction::bwd_data ? p.i[2] / p.s[2] + (p.i[2] % p.s[2] != 0) : p.o[2];
}

// Bytes of the f32 copy of one src plane split by stride phase, in double (extreme sizes).
double staged_plane_bytes(const conv_problem &p) {
    const double phase = std::ceil(double(p.i[2]) / double(p.s[2]));
    return double(p.i[0]) * double(p.i[1]) * double(p.s[2]) * phase * 4.0;
}

// fwd and bwd_weights read src from f32 copies split by stride phase unless it is f32 read
// whole (stride 1) or as pairs (stride 2); bf16 and f16 inputs are widened into copies too
// (bwd_data's dst, bwd_weights' dst).
bool src_is_staged(const conv_problem &p) {
    return p.dir != conv_direction::bwd_data &&
           (p.dt != data_type::f32 || dw_ncx_src_phases(p) > 1);
}

}  // namespace

std::string dw_ncx_why_not(const conv_problem &p, int vlen) {
    if (p.icg != 1 || p.ocg != 1)
        return "not depthwise: " + std::to_string(p.icg) + " src and " + std::to_string(p.ocg) +
               " dst channels per group";
    if (p.g == 1) return "one channel: NCX and NXC are the same layout (depthwise takes it)";
    // Along an axis of one element the stride is never used.
    auto w_contiguous = [](const data_layout &l, dim_t extent) {
        return extent == 1 || l.sp[2] == 1;
    };
    if (!w_contiguous(p.src, p.i[2]) || !w_contiguous(p.dst, p.o[2]))
        return "w not contiguous in src or dst (pixels on the lanes need it)";
    if (p.src.c == 1 && p.dst.c == 1)
        return "channels contiguous (NXC): depthwise puts them on the lanes";
    // Lanes past the end of a line are wasted: a short line fills few of them, and the
    // channels-last kernel, at the price of its copies, fills all.
    const dim_t q = lane_outputs(p), filled = (q + vlen - 1) / vlen * vlen;
    if (2 * q < filled)
        return "lines of " + std::to_string(q) + " outputs along w fill less than half of " +
               std::to_string(filled / vlen) + " vectors of " + std::to_string(vlen) + " lanes";
    if (std::string why = dw_stride_why_not(p); !why.empty()) return why;
    // Each thread holds one plane's copies.
    const double copies =
        (src_is_staged(p) ? staged_plane_bytes(p) : 0.0) +
        (p.dt != data_type::f32 ? double(p.o[0]) * double(p.o[1]) * double(p.o[2]) * 4.0 : 0.0);
    if (copies > double(64 << 20)) return "the f32 copies of one plane exceed 64 MiB";
    return {};
}

std::unique_ptr<kernel> make_dw_ncx_kernel(const conv_problem &p, register_tile t,
                                           dw_ncx_run_fn run) {
    dw_ncx_plan pl{};
    pl.p = p;
    pl.vlen = t.vlen;
    // The planes are the units of work: no more threads than planes.
    const dim_t planes = std::max<dim_t>(p.mb * p.g, 1);
    pl.nthr = int(std::min<dim_t>(threads_for(p.macs()), planes));
    pl.staged = src_is_staged(p) || p.dt != data_type::f32;
    return std::make_unique<dw_ncx_kernel>(pl, run);
}

}  // namespace convgrad::detail
