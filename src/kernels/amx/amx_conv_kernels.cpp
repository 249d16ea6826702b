#include "kernels/amx/amx_conv_kernels.hpp"

#include "kernels/amx/amx_bwd_weights.hpp"
#include "kernels/amx/amx_fwd.hpp"

namespace convgrad::detail::amx {
namespace {

class bwd_weights_kernel : public kernel {
  public:
    explicit bwd_weights_kernel(bwd_weights_plan pl) : pl_(std::move(pl)) {}
    void execute(const conv_args &args) const override { run_bwd_weights(pl_, args); }
    std::string describe() const override {
        return std::string("amx bwd_weights ") + to_string(pl_.dot) + " " + to_string(pl_.backend) +
               ": K chunk " + std::to_string(pl_.chunk) + " pixels x " +
               std::to_string(pl_.nchunks) + ", " + std::to_string(pl_.slices) + " slice(s), " +
               std::to_string(pl_.nthr) + " thread(s)";
    }

  private:
    bwd_weights_plan pl_;
};

class fwd_kernel : public kernel {
  public:
    explicit fwd_kernel(fwd_plan pl) : pl_(std::move(pl)) {}
    void execute(const conv_args &args) const override { run_fwd(pl_, args); }
    std::string describe() const override {
        return std::string("amx fwd ") + to_string(pl_.dot) + " " + to_string(pl_.backend) + ": " +
               std::to_string(pl_.wruns) + " w run(s) of <= 32 pixels, " +
               std::to_string(pl_.nthr) + " thread(s)";
    }

  private:
    fwd_plan pl_;
};

}  // namespace

std::string why_not_conv(const conv_problem &p, amx_backend backend) {
    amx_dot dot;
    std::string why = amx_dot_of(p, dot);
    if (!why.empty()) return why;
    if (p.dir == conv_direction::bwd_data)
        return std::string("no AMX kernel for ") + to_string(p.dir) + " yet";
    if (backend == amx_backend::native && !native_usable(dot))
        return std::string("AMX not granted: ") + native_unusable_reason(dot);
    return {};
}

std::unique_ptr<kernel> make_conv_kernel(const conv_problem &p, amx_backend backend,
                                         int64_t chunk_pixels) {
    const std::string why = why_not_conv(p, backend);
    if (!why.empty()) throw error(status::unimplemented, "AMX convolution: " + why);
    if (p.dir == conv_direction::fwd) return std::make_unique<fwd_kernel>(plan_fwd(p, backend));
    return std::make_unique<bwd_weights_kernel>(plan_bwd_weights(p, backend, chunk_pixels));
}

}  // namespace convgrad::detail::amx

namespace convgrad::detail {

std::vector<impl_desc> amx_impls() {
    return {
        {"amx:bwd_weights", cpu_isa::amx,
         [](const conv_problem &p) { return amx::why_not_conv(p, amx::amx_backend::native); },
         [](const conv_problem &p) { return amx::make_conv_kernel(p, amx::amx_backend::native); }}};
}

}  // namespace convgrad::detail
