#include "dispatch/padded_tap_guard.hpp"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>

#include "core/float_convert.hpp"
#include "ref/ref_conv.hpp"
#include "threading/parallel.hpp"

namespace convgrad::detail {
namespace {

// No value of the run of n at `offset` (`stride` apart) in a tensor of type dt is infinite or
// NaN.
bool run_finite(data_type dt, const void *base, dim_t offset, dim_t n, dim_t stride) {
    switch (dt) {
        case data_type::f32:
            return bits_finite<uint32_t>(static_cast<const uint32_t *>(base) + offset, n, stride,
                                         0x7f800000u);
        case data_type::bf16:
            return bits_finite<uint16_t>(static_cast<const uint16_t *>(base) + offset, n, stride,
                                         uint16_t(0x7f80));
        default:
            return bits_finite<uint16_t>(static_cast<const uint16_t *>(base) + offset, n, stride,
                                         uint16_t(0x7c00));
    }
}

class padded_tap_guard final : public kernel {
  public:
    padded_tap_guard(const conv_problem &p, std::unique_ptr<kernel> inner)
        : p_(p), inner_(std::move(inner)) {}
    void execute(const conv_args &args) const override {
        const bool finite = p_.dir == conv_direction::bwd_weights
                                ? border_diff_dst_finite(p_, args.dst)
                                : weights_all_finite(p_, args.wei);
        if (finite)
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

bool weights_all_finite(const conv_problem &p, const void *wei) {
    // The five axes of the weights (oc over all groups, ic, kd, kh, kw), walked with the one of
    // the smallest stride innermost (a walk along ic in XIO weights, oc apart, read every line
    // of DCGAN's 8 MB of weights 16 times: 4x its ConvTransposeBackwardData).
    struct axis {
        dim_t n, stride;
    };
    axis ax[5] = {{p.g * p.ocg, p.wei.oc},
                  {p.icg, p.wei.ic},
                  {p.k[0], p.wei.sp[0]},
                  {p.k[1], p.wei.sp[1]},
                  {p.k[2], p.wei.sp[2]}};
    std::sort(ax, ax + 5, [](const axis &a, const axis &b) {
        return (a.n > 1 ? a.stride : INT64_MAX) > (b.n > 1 ? b.stride : INT64_MAX);
    });
    const dim_t runs = ax[0].n * ax[1].n * ax[2].n * ax[3].n;
    std::atomic<bool> ok{true};
    parallel(threads_for(double(runs * ax[4].n)), [&](int ithr, int nthr) {
        int64_t r0, r1;
        balance211(runs, nthr, ithr, r0, r1);
        for (int64_t r = r0; r < r1 && ok.load(std::memory_order_relaxed); ++r) {
            dim_t off = 0, rest = r;
            for (int a = 3; a >= 0; --a) off += rest % ax[a].n * ax[a].stride, rest /= ax[a].n;
            const bool f = run_finite(p.dt, wei, off, ax[4].n, ax[4].stride);
            if (!f) ok.store(false, std::memory_order_relaxed);
        }
    });
    return ok.load();
}

bool border_diff_dst_finite(const conv_problem &p, const void *dst) {
    // Per axis, the positions [lo, hi) whose windows lie inside src; the others are the border.
    dim_t lo[3], hi[3];
    for (int x = 0; x < 3; ++x) {
        lo[x] = std::min<dim_t>(p.o[x], (p.pb[x] + p.s[x] - 1) / p.s[x]);
        const dim_t last = p.i[x] - 1 + p.pb[x] - (p.k[x] - 1) * p.dl[x];  // o * s <= last
        hi[x] = last < 0 ? lo[x] : std::max(lo[x], std::min<dim_t>(p.o[x], last / p.s[x] + 1));
    }
    const dim_t channels = p.g * p.ocg, rows = p.mb * p.o[0] * p.o[1];
    std::atomic<bool> ok{true};
    auto check = [&](dim_t off, dim_t n, dim_t stride) {
        const bool f = run_finite(p.dt, dst, off, n, stride);
        if (!f) ok.store(false, std::memory_order_relaxed);
    };
    // Channels further apart than pixels (NCX): each channel's border pixels, runs along w
    // (per border pixel, a run over the channels read a line per channel, planes apart: DCGAN's
    // 128 -> 3 ConvTranspose weight gradient in NCX, 4 KB planes, spent 12% of its time here).
    if (channels > 1 && std::abs(p.dst.c) > std::abs(p.dst.sp[2])) {
        const dim_t planes = p.mb * channels;
        parallel(threads_for(double(rows * p.o[2] * channels)), [&](int ithr, int nthr) {
            int64_t q0, q1;
            balance211(planes, nthr, ithr, q0, q1);
            for (int64_t q = q0; q < q1 && ok.load(std::memory_order_relaxed); ++q) {
                const dim_t n = q / channels, c = q % channels;
                for (dim_t od = 0; od < p.o[0]; ++od)
                    for (dim_t oh = 0; oh < p.o[1]; ++oh) {
                        const dim_t row =
                            n * p.dst.n + c * p.dst.c + od * p.dst.sp[0] + oh * p.dst.sp[1];
                        if (od < lo[0] || od >= hi[0] || oh < lo[1] || oh >= hi[1]) {
                            check(row, p.o[2], p.dst.sp[2]);
                        } else {
                            check(row, lo[2], p.dst.sp[2]);
                            check(row + hi[2] * p.dst.sp[2], p.o[2] - hi[2], p.dst.sp[2]);
                        }
                    }
            }
        });
        return ok.load();
    }
    parallel(threads_for(double(rows * p.o[2] * channels)), [&](int ithr, int nthr) {
        int64_t r0, r1;
        balance211(rows, nthr, ithr, r0, r1);
        for (int64_t r = r0; r < r1 && ok.load(std::memory_order_relaxed); ++r) {
            const dim_t oh = r % p.o[1], od = (r / p.o[1]) % p.o[0], n = r / (p.o[1] * p.o[0]);
            const dim_t row = n * p.dst.n + od * p.dst.sp[0] + oh * p.dst.sp[1];
            const bool whole = od < lo[0] || od >= hi[0] || oh < lo[1] || oh >= hi[1];
            for (dim_t ow = 0; ow < p.o[2]; ++ow) {
                if (!whole && ow == lo[2]) ow = hi[2];  // (the inside of the row)
                if (ow >= p.o[2]) break;
                check(row + ow * p.dst.sp[2], channels, p.dst.c);
            }
        }
    });
    return ok.load();
}

std::unique_ptr<kernel> guard_padded_taps(const conv_problem &p, std::unique_ptr<kernel> inner) {
    if (!p.reads_padding()) return inner;
    return std::make_unique<padded_tap_guard>(p, std::move(inner));
}

}  // namespace convgrad::detail
