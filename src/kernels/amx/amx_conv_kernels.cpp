#include "kernels/amx/amx_conv_kernels.hpp"

#include "kernels/amx/amx_bwd_data.hpp"
#include "kernels/amx/amx_bwd_weights.hpp"
#include "kernels/amx/amx_fwd.hpp"

namespace convgrad::detail::amx {
namespace {

class bwd_weights_kernel : public kernel {
  public:
    explicit bwd_weights_kernel(bwd_weights_plan pl) : pl_(std::move(pl)) {}
    void execute(const conv_args &args) const override { run_bwd_weights(pl_, args); }
    // The packers round f32 inputs to the tile type (math_dt) on the way.
    bool rounds_to_math_type() const override { return true; }
    std::string describe() const override {
        const std::string head =
            std::string("amx bwd_weights ") + to_string(pl_.dot) + " " + to_string(pl_.backend);
        const std::string tail = std::to_string(pl_.nthr) + " thread(s)";
        if (pl_.folded)
            return head + ": " + std::to_string(pl_.kq) + " w taps x " + std::to_string(pl_.p.icg) +
                   " channels folded into the columns (" + std::to_string(pl_.njg) +
                   " group(s)), K chunk " + std::to_string(pl_.rchunk) + " rows of " +
                   std::to_string(pl_.owp) + " x " + std::to_string(pl_.rnchunks) + ", " +
                   std::to_string(pl_.rslices) + " slice(s), " + tail;
        return head + ": K chunk " + std::to_string(pl_.chunk) + " pixels x " +
               std::to_string(pl_.nchunks) + ", " + std::to_string(pl_.slices) + " slice(s), " +
               tail;
    }

  private:
    bwd_weights_plan pl_;
};

class bwd_data_kernel : public kernel {
  public:
    explicit bwd_data_kernel(bwd_data_plan pl) : pl_(std::move(pl)) {}
    void execute(const conv_args &args) const override { run_bwd_data(pl_, args); }
    // The packers round f32 inputs to the tile type (math_dt) on the way.
    bool rounds_to_math_type() const override { return true; }
    std::string describe() const override {
        return std::string("amx bwd_data ") + to_string(pl_.dot) + " " + to_string(pl_.backend) +
               ": " + std::to_string(pl_.p.s[2]) + " w phase(s) x " + std::to_string(pl_.wruns) +
               " run(s) of <= 32 pixels, " + (pl_.blocks_outer ? "ic blocks outside, " : "") +
               std::to_string(pl_.nthr) + " thread(s)";
    }

  private:
    bwd_data_plan pl_;
};

class fwd_kernel : public kernel {
  public:
    explicit fwd_kernel(fwd_plan pl) : pl_(std::move(pl)) {}
    void execute(const conv_args &args) const override { run_fwd(pl_, args); }
    // The packers round f32 inputs to the tile type (math_dt) on the way.
    bool rounds_to_math_type() const override { return true; }
    std::string describe() const override {
        return std::string("amx fwd ") + to_string(pl_.dot) + " " + to_string(pl_.backend) + ": " +
               std::to_string(pl_.wruns) + " w run(s) of <= 32 pixels, " +
               (pl_.fold > 1 ? std::to_string(pl_.fold) + " w taps folded into K, " : "") +
               (pl_.blocks_outer ? "oc blocks outside, " : "") + std::to_string(pl_.nthr) +
               " thread(s)";
    }

  private:
    fwd_plan pl_;
};

}  // namespace

std::string why_not_conv(const conv_problem &p, amx_backend backend) {
    amx_dot dot;
    std::string why = amx_dot_of(p, dot);
    if (!why.empty()) return why;
    if (backend == amx_backend::native && !native_usable(dot))
        return std::string("AMX not granted: ") + native_unusable_reason(dot);
    return {};
}

std::string why_not_dispatch(const conv_problem &p, amx_backend backend) {
    std::string why = why_not_conv(p, backend);
    if (!why.empty()) return why;
    double bytes = 0;
    int nthr = 1;
    if (p.dir == conv_direction::fwd) {
        const fwd_plan pl = plan_fwd(p, backend);
        bytes = pl.scratch_bytes(), nthr = pl.nthr;
    } else if (p.dir == conv_direction::bwd_data) {
        const bwd_data_plan pl = plan_bwd_data(p, backend);
        bytes = pl.scratch_bytes(), nthr = pl.nthr;
    } else {
        const bwd_weights_plan pl = plan_bwd_weights(p, backend);
        bytes = pl.scratch_bytes(), nthr = pl.nthr;
    }
    if (bytes > p.scratch_bound(nthr))
        return "its scratch (" + std::to_string(bytes) +
               " bytes: pads or slices large against the tensors) exceeds the problem's bound";
    return {};
}

std::unique_ptr<kernel> make_conv_kernel(const conv_problem &p, amx_backend backend,
                                         int64_t chunk_pixels) {
    const std::string why = why_not_conv(p, backend);
    if (!why.empty()) throw error(status::unimplemented, "AMX convolution: " + why);
    if (p.dir == conv_direction::fwd) return std::make_unique<fwd_kernel>(plan_fwd(p, backend));
    if (p.dir == conv_direction::bwd_data)
        return std::make_unique<bwd_data_kernel>(plan_bwd_data(p, backend));
    return std::make_unique<bwd_weights_kernel>(plan_bwd_weights(p, backend, chunk_pixels));
}

double conv_tile_fill(const conv_problem &p) {
    if (p.dir == conv_direction::fwd) {  // rows: output pixels along w; K: icg; columns: ocg
        const fwd_plan pl = plan_fwd(p, amx_backend::emulated);  // K: the folded w taps too
        return step_fill(std::min<int64_t>(p.o[2], 32), 16) * step_fill(pl.fold * pl.icp, k_step) *
               step_fill(p.ocg, 16);
    }
    if (p.dir == conv_direction::bwd_data)  // rows: src pixels of a w phase; K: ocg; cols: icg
        return step_fill(std::min<int64_t>((p.i[2] + p.s[2] - 1) / p.s[2], 32), 16) *
               step_fill(padded_k(p.ocg), k_step) * step_fill(p.icg, 16);
    const bwd_weights_plan pl = plan_bwd_weights(p, amx_backend::emulated);
    if (pl.folded)  // columns: kq w taps of icg channels; K: output rows, up to tile steps
        return step_fill(p.ocg, 16) * step_fill(pl.kq * p.icg, 16) * double(p.o[2]) /
               double(pl.owp);
    return step_fill(p.ocg, 16) * step_fill(p.icg, 16);  // K: the pixels (long)
}

namespace {

// The fill below which the f32 kernels win, from 400 random problems (`convgrad bench
// --random=200 --dt=bf16`, seeds 7 and 11, Xeon with AMX, 2 threads): the gathers (fwd,
// bwd_data) at fills of 10-25% ran 1.5x faster on AMX (geomean of 40, 29 faster, 0.24-6.9x);
// below 10% they lost (0.51x geomean of 18). The weight gradient, which also packs every pixel
// twice, lost at half its problems between 10% and 25% (0.32-0.87x).
double min_tile_fill(conv_direction dir) {
    return dir == conv_direction::bwd_weights ? 0.25 : 0.10;
}

}  // namespace

std::string cannot_conv(const conv_problem &p) {
    return why_not_dispatch(p, amx_backend::emulated);
}
std::string why_not_native(const conv_problem &p) {
    std::string why = why_not_dispatch(p, amx_backend::native);
    if (!why.empty()) return why;
    const double f = conv_tile_fill(p);
    if (f < min_tile_fill(p.dir))
        return "its tiles would be " + std::to_string(int(f * 100)) +
               "% full (rows x K x columns; few channels or pixels), below " +
               std::to_string(int(min_tile_fill(p.dir) * 100)) + "%";
    return {};
}
std::string cannot_natively(const conv_problem &p) {
    amx_dot dot;
    if (!amx_dot_of(p, dot).empty()) return {};  // cannot_conv's reason, not this machine's
    return native_unusable_reason(dot);
}
std::unique_ptr<kernel> create_native(const conv_problem &p) {
    return make_conv_kernel(p, amx_backend::native);
}
std::unique_ptr<kernel> create_emulated(const conv_problem &p) {
    return make_conv_kernel(p, amx_backend::emulated);
}

}  // namespace convgrad::detail::amx
