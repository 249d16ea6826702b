// Reference convolution. The user's tensors are first gathered into dense canonical float
// arrays (exact: bf16/f16/f32 all widen exactly to float); each output element is then
// accumulated in double by exactly one thread and rounded once into the user's layout.
// Loops run over whole output rows with the valid index range computed once per row, so the
// inner loop is a plain multiply-add that streams memory.
#include "ref/ref_conv.hpp"

#include <algorithm>
#include <vector>

#include "core/float_convert.hpp"
#include "threading/parallel.hpp"

namespace convgrad::detail {
namespace {

// Small problems run on the calling thread (the library's one rule, threading/parallel.hpp).
// Each output element is computed by exactly one thread: results do not depend on the count.
int ref_threads(const conv_problem &p) { return threads_for(p.macs()); }

// Without `a + b - 1`: a stride near INT64_MAX must not overflow (b > 0, a > INT64_MIN).
dim_t div_floor(dim_t a, dim_t b) { return a >= 0 ? a / b : -((-a) / b + ((-a) % b != 0)); }
dim_t div_ceil(dim_t a, dim_t b) { return a >= 0 ? a / b + (a % b != 0) : -((-a) / b); }

// Range [lo, hi) of small-side positions o whose big-side position o*s + k*dl - pb is in [0, I).
struct range {
    dim_t lo, hi;
};
range valid_range(dim_t O, dim_t I, dim_t s, dim_t kdl, dim_t pb) {
    const dim_t lo = std::max<dim_t>(0, div_ceil(pb - kdl, s));
    const dim_t hi = std::min<dim_t>(O, div_floor(I - 1 + pb - kdl, s) + 1);
    return {lo, std::max(lo, hi)};
}

float load(data_type dt, const void *base, dim_t off) {
    switch (dt) {
        case data_type::f32: return static_cast<const float *>(base)[off];
        case data_type::bf16: return bf16_to_float(static_cast<const uint16_t *>(base)[off]);
        case data_type::f16: return f16_to_float(static_cast<const uint16_t *>(base)[off]);
        default: return 0.f;
    }
}

void store(data_type dt, void *base, dim_t off, double v) {
    switch (dt) {
        case data_type::f32: static_cast<float *>(base)[off] = float(v); break;
        case data_type::bf16: static_cast<uint16_t *>(base)[off] = double_to_bf16(v); break;
        case data_type::f16: static_cast<uint16_t *>(base)[off] = double_to_f16(v); break;
        default: break;
    }
}

// Dense canonical copies: data [n][c][d][h][w], weights [oc][icg][kd][kh][kw].
std::vector<float> gather_data(const conv_problem &p, const void *base, const data_layout &l,
                               dim_t C, const dim_t *sp) {
    const dim_t plane = sp[0] * sp[1] * sp[2];
    std::vector<float> out(size_t(p.mb * C * plane));
    parallel(ref_threads(p), [&](int ithr, int nthr) {
        dim_t s, e;
        balance211(p.mb * C, nthr, ithr, s, e);
        for (dim_t nc = s; nc < e; ++nc) {
            const dim_t n = nc / C, c = nc % C;
            float *o = out.data() + nc * plane;
            for (dim_t d = 0; d < sp[0]; ++d)
                for (dim_t h = 0; h < sp[1]; ++h)
                    for (dim_t w = 0; w < sp[2]; ++w)
                        *o++ = load(p.dt, base,
                                    n * l.n + c * l.c + d * l.sp[0] + h * l.sp[1] + w * l.sp[2]);
        }
    });
    return out;
}

std::vector<float> gather_weights(const conv_problem &p, const void *base) {
    const weights_layout &l = p.wei;
    std::vector<float> out(size_t(p.oc() * p.icg * p.ksp()));
    float *o = out.data();
    for (dim_t oc = 0; oc < p.oc(); ++oc)
        for (dim_t ic = 0; ic < p.icg; ++ic)
            for (dim_t d = 0; d < p.k[0]; ++d)
                for (dim_t h = 0; h < p.k[1]; ++h)
                    for (dim_t w = 0; w < p.k[2]; ++w)
                        *o++ = load(p.dt, base,
                                    oc * l.oc + ic * l.ic + d * l.sp[0] + h * l.sp[1] + w * l.sp[2]);
    return out;
}

void scatter_plane(const conv_problem &p, void *base, const data_layout &l, dim_t n, dim_t c,
                   const dim_t *sp, const double *plane) {
    for (dim_t d = 0; d < sp[0]; ++d)
        for (dim_t h = 0; h < sp[1]; ++h)
            for (dim_t w = 0; w < sp[2]; ++w)
                store(p.dt, base, n * l.n + c * l.c + d * l.sp[0] + h * l.sp[1] + w * l.sp[2],
                      *plane++);
}

// acc[small plane] += w * big[...] over the valid part, for one kernel tap (fwd), or the
// transposed update big[...] += w * small[...] (bwd_data). `tap` is the kernel index.
template <bool to_big>
void tap_update(const conv_problem &p, const dim_t *tap, double w, const float *big, double *acc_big,
                const float *small, double *acc_small) {
    range r[3];
    for (int a = 0; a < 3; ++a) r[a] = valid_range(p.o[a], p.i[a], p.s[a], tap[a] * p.dl[a], p.pb[a]);
    for (dim_t od = r[0].lo; od < r[0].hi; ++od) {
        const dim_t id = od * p.s[0] + tap[0] * p.dl[0] - p.pb[0];
        for (dim_t oh = r[1].lo; oh < r[1].hi; ++oh) {
            const dim_t ih = oh * p.s[1] + tap[1] * p.dl[1] - p.pb[1];
            const dim_t orow = (od * p.o[1] + oh) * p.o[2];
            const dim_t irow = (id * p.i[1] + ih) * p.i[2] + tap[2] * p.dl[2] - p.pb[2];
            const dim_t s = p.s[2];
            if constexpr (to_big) {
                for (dim_t ow = r[2].lo; ow < r[2].hi; ++ow)
                    acc_big[irow + ow * s] += w * double(small[orow + ow]);
            } else {
                for (dim_t ow = r[2].lo; ow < r[2].hi; ++ow)
                    acc_small[orow + ow] += w * double(big[irow + ow * s]);
            }
        }
    }
}

void ref_fwd(const conv_problem &p, const conv_args &a) {
    const auto src = gather_data(p, a.src, p.src, p.ic(), p.i);
    const auto wei = gather_weights(p, a.wei);
    const dim_t isp = p.isp(), osp = p.osp(), ksp = p.ksp();
    parallel(ref_threads(p), [&](int ithr, int nthr) {
        std::vector<double> acc(static_cast<size_t>(osp));  // bad_alloc: caught by parallel()
        dim_t first, last;
        balance211(p.mb * p.oc(), nthr, ithr, first, last);
        for (dim_t noc = first; noc < last; ++noc) {
            const dim_t n = noc / p.oc(), oc = noc % p.oc();
            const dim_t g = oc / p.ocg;
            const double b = p.with_bias ? load(p.dt, a.bias, oc * p.bias_stride) : 0.0;
            std::fill(acc.begin(), acc.end(), b);
            for (dim_t ic = 0; ic < p.icg; ++ic) {
                const float *s = src.data() + (n * p.ic() + g * p.icg + ic) * isp;
                const float *w = wei.data() + (oc * p.icg + ic) * ksp;
                dim_t tap[3];
                for (tap[0] = 0; tap[0] < p.k[0]; ++tap[0])
                    for (tap[1] = 0; tap[1] < p.k[1]; ++tap[1])
                        for (tap[2] = 0; tap[2] < p.k[2]; ++tap[2])
                            tap_update<false>(p, tap, *w++, s, nullptr, nullptr, acc.data());
            }
            scatter_plane(p, a.out, p.dst, n, oc, p.o, acc.data());
        }
    });
}

void ref_bwd_data(const conv_problem &p, const conv_args &a) {
    const auto dst = gather_data(p, a.dst, p.dst, p.oc(), p.o);
    const auto wei = gather_weights(p, a.wei);
    const dim_t isp = p.isp(), osp = p.osp(), ksp = p.ksp();
    parallel(ref_threads(p), [&](int ithr, int nthr) {
        std::vector<double> acc(static_cast<size_t>(isp));  // bad_alloc: caught by parallel()
        dim_t first, last;
        balance211(p.mb * p.ic(), nthr, ithr, first, last);
        for (dim_t nic = first; nic < last; ++nic) {
            const dim_t n = nic / p.ic(), ic = nic % p.ic();
            const dim_t g = ic / p.icg, icl = ic % p.icg;
            const double b = p.with_bias ? load(p.dt, a.bias, ic * p.bias_stride) : 0.0;
            std::fill(acc.begin(), acc.end(), b);
            for (dim_t ocl = 0; ocl < p.ocg; ++ocl) {
                const dim_t oc = g * p.ocg + ocl;
                const float *d = dst.data() + (n * p.oc() + oc) * osp;
                const float *w = wei.data() + (oc * p.icg + icl) * ksp;
                dim_t tap[3];
                for (tap[0] = 0; tap[0] < p.k[0]; ++tap[0])
                    for (tap[1] = 0; tap[1] < p.k[1]; ++tap[1])
                        for (tap[2] = 0; tap[2] < p.k[2]; ++tap[2])
                            tap_update<true>(p, tap, *w++, nullptr, acc.data(), d, nullptr);
            }
            scatter_plane(p, a.out, p.src, n, ic, p.i, acc.data());
        }
    });
}

void ref_bwd_weights(const conv_problem &p, const conv_args &a) {
    const auto src = gather_data(p, a.src, p.src, p.ic(), p.i);
    const auto dst = gather_data(p, a.dst, p.dst, p.oc(), p.o);
    const dim_t isp = p.isp(), osp = p.osp();
    const weights_layout &l = p.wei;
    parallel(ref_threads(p), [&](int ithr, int nthr) {
        dim_t s0, e0;
        balance211(p.oc() * p.icg, nthr, ithr, s0, e0);
        for (dim_t x = s0; x < e0; ++x) {
            const dim_t oc = x / p.icg, ic = x % p.icg;
            const dim_t g = oc / p.ocg;
            dim_t tap[3];
            for (tap[0] = 0; tap[0] < p.k[0]; ++tap[0])
                for (tap[1] = 0; tap[1] < p.k[1]; ++tap[1])
                    for (tap[2] = 0; tap[2] < p.k[2]; ++tap[2]) {
                        // One weight: sum over n and the dst plane of dst * src at the tap.
                        double acc = 0.0;
                        range r[3];
                        for (int x = 0; x < 3; ++x)
                            r[x] = valid_range(p.o[x], p.i[x], p.s[x], tap[x] * p.dl[x], p.pb[x]);
                        for (dim_t n = 0; n < p.mb; ++n) {
                            const float *s = src.data() + (n * p.ic() + g * p.icg + ic) * isp;
                            const float *d = dst.data() + (n * p.oc() + oc) * osp;
                            for (dim_t od = r[0].lo; od < r[0].hi; ++od) {
                                const dim_t id = od * p.s[0] + tap[0] * p.dl[0] - p.pb[0];
                                for (dim_t oh = r[1].lo; oh < r[1].hi; ++oh) {
                                    const dim_t ih = oh * p.s[1] + tap[1] * p.dl[1] - p.pb[1];
                                    const float *drow = d + (od * p.o[1] + oh) * p.o[2];
                                    // (An index, not a pointer: for a tap that reads only
                                    // padding, w offset - pads may lie far outside src.)
                                    const dim_t srow = (id * p.i[1] + ih) * p.i[2] +
                                                       tap[2] * p.dl[2] - p.pb[2];
                                    for (dim_t ow = r[2].lo; ow < r[2].hi; ++ow)
                                        acc += double(drow[ow]) * double(s[srow + ow * p.s[2]]);
                                }
                            }
                        }
                        store(p.dt, a.out,
                              oc * l.oc + ic * l.ic + tap[0] * l.sp[0] + tap[1] * l.sp[1] +
                                  tap[2] * l.sp[2],
                              acc);
                    }
        }
    });
}

}  // namespace

void ref_conv_execute(const conv_problem &p, const conv_args &args) {
    switch (p.dir) {
        case conv_direction::fwd: ref_fwd(p, args); break;
        case conv_direction::bwd_data: ref_bwd_data(p, args); break;
        case conv_direction::bwd_weights: ref_bwd_weights(p, args); break;
    }
}

}  // namespace convgrad::detail
