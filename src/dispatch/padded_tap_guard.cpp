#include "dispatch/padded_tap_guard.hpp"

#include <cstdint>
#include <cstring>

#include "ref/ref_conv.hpp"

namespace convgrad::detail {
namespace {

// The exponent bits of the type: all set means infinite or NaN.
template <class Bits>
bool run_finite(const void *base, dim_t offset, dim_t n, dim_t stride, Bits exp_mask) {
    const Bits *v = static_cast<const Bits *>(base) + offset;
    Bits any = 0;  // (an OR of the masked comparisons, so that a dense run vectorizes)
    if (stride == 1)
        for (dim_t x = 0; x < n; ++x) any |= Bits((v[x] & exp_mask) == exp_mask);
    else
        for (dim_t x = 0; x < n; ++x) any |= Bits((v[x * stride] & exp_mask) == exp_mask);
    return any == 0;
}

class padded_tap_guard final : public kernel {
  public:
    padded_tap_guard(const conv_problem &p, std::unique_ptr<kernel> inner)
        : p_(p), inner_(std::move(inner)) {}
    void execute(const conv_args &args) const override {
        if (weights_all_finite(p_, args.wei))
            inner_->execute(args);
        else
            ref_conv_execute(p_, args);
    }
    std::string describe() const override { return inner_->describe(); }
    bool rounds_to_math_type() const override { return inner_->rounds_to_math_type(); }

  private:
    conv_problem p_;
    std::unique_ptr<kernel> inner_;
};

}  // namespace

bool reads_padding(const conv_problem &p) {
    for (int x = 0; x < 3; ++x) {
        const dim_t reach = (p.o[x] - 1) * p.s[x] + (p.k[x] - 1) * p.dl[x];  // last tap read
        if (p.pb[x] > 0 || reach >= p.i[x]) return true;
        // bwd_data: the last src pixel's tap 0 lands past the last diff_dst position.
        if (p.dir == conv_direction::bwd_data && p.i[x] - 1 > (p.o[x] - 1) * p.s[x]) return true;
    }
    return false;
}

bool weights_all_finite(const conv_problem &p, const void *wei) {
    // The innermost run: along whichever of ic, oc and kw has the smallest stride.
    const dim_t taps = p.ksp();
    bool ok = true;
    for (dim_t g = 0; g < p.g && ok; ++g)
        for (dim_t oc = 0; oc < p.ocg && ok; ++oc)
            for (dim_t t = 0; t < taps && ok; ++t) {
                const dim_t kd = t / (p.k[1] * p.k[2]), kh = (t / p.k[2]) % p.k[1],
                            kw = t % p.k[2];
                const dim_t off = (g * p.ocg + oc) * p.wei.oc + kd * p.wei.sp[0] +
                                  kh * p.wei.sp[1] + kw * p.wei.sp[2];
                ok = p.dt == data_type::f32
                         ? run_finite<uint32_t>(wei, off, p.icg, p.wei.ic, 0x7f800000u)
                     : p.dt == data_type::bf16
                         ? run_finite<uint16_t>(wei, off, p.icg, p.wei.ic, uint16_t(0x7f80))
                         : run_finite<uint16_t>(wei, off, p.icg, p.wei.ic, uint16_t(0x7c00));
            }
    return ok;
}

std::unique_ptr<kernel> guard_padded_taps(const conv_problem &p, std::unique_ptr<kernel> inner) {
    if (p.dir == conv_direction::bwd_weights || !reads_padding(p)) return inner;
    return std::make_unique<padded_tap_guard>(p, std::move(inner));
}

}  // namespace convgrad::detail
