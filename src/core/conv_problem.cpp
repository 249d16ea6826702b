#include "core/conv_problem.hpp"

#include <algorithm>
#include <sstream>

namespace convgrad::detail {

const char *to_string(conv_direction d) {
    switch (d) {
        case conv_direction::fwd: return "fwd";
        case conv_direction::bwd_data: return "bwd_data";
        case conv_direction::bwd_weights: return "bwd_weights";
    }
    return "?";
}

data_type math_type(fpmath_mode mode, data_type dt, bool bf16_faster) {
    if (dt != data_type::f32) return dt;  // bf16 and f16 ops already multiply in their type
    switch (mode) {
        case fpmath_mode::bf16: return data_type::bf16;
        case fpmath_mode::f16: return data_type::f16;
        case fpmath_mode::any: return bf16_faster ? data_type::bf16 : data_type::f32;
        case fpmath_mode::strict:
        case fpmath_mode::tf32: break;
    }
    return data_type::f32;
}

double conv_problem::macs() const {
    return double(mb) * double(g) * double(ocg) * double(icg) * double(osp()) * double(ksp());
}

bool conv_problem::flattens_w() const {
    return g == 1 && dl[2] == 1 && k[2] > 1 && icg < 32 && icg * k[2] <= 128;
}

bool conv_problem::tap_reads_input(int x, dim_t kx) const {
    const dim_t off = kx * dl[x] - pb[x];  // input coordinate of output 0
    // The first output reaching input 0: ceil(-off / s) for off < 0 (without -off + s - 1,
    // which may overflow for the extreme pads the fuzzers build).
    const dim_t first = off >= 0 ? 0 : (-off) / s[x] + ((-off) % s[x] != 0);
    return first < o[x] && i[x] - off > first * s[x];  // it exists and first*s + off < I
}

double conv_problem::scratch_bound(int nthr) const {
    auto d = [](dim_t v) { return double(v); };
    // Padded src row of the few-channel forward kernel: every window of the kernel lies inside.
    // Only the forward that flattens the kernel width copies it: counted for others, huge pads
    // made the bound of a tiny weight gradient pass the API's limit and let kernels size copies
    // by the pads.
    const bool few_channels = dir == conv_direction::fwd && flattens_w();
    const double wpad = few_channels ? std::max(d(i[2]) + d(pb[2]) + d(pe[2]), (d(o[2]) - 1) * d(s[2]) + d(k[2]))
                                     : d(i[2]);
    const double src_f32 = 4 * d(mb) * d(ic()) * d(i[0]) * d(i[1]) * wpad;
    const double dst_f32 = 4 * d(mb) * d(oc()) * d(osp());
    const double wei_f32 = 4 * d(g) * d(ksp()) * (d(icg) + 16) * (d(ocg) + 16);  // padded to vectors
    const double kernels = 2 * src_f32 + dst_f32 + (1 + nthr) * wei_f32;       // copies, partials
    const double ref = src_f32 + dst_f32 + wei_f32 + 8 * nthr * std::max(d(isp()), d(osp()));
    // fpmath_mode bf16/f16 on an f32 op: rounded copies of the inputs (api/execute.cpp).
    const double rounded = math_dt != dt ? src_f32 + dst_f32 + wei_f32 : 0;
    return kernels + ref + rounded;
}

std::string conv_problem::desc() const {
    // benchdnn's conv descriptor: only the spatial axes the problem has, dilation 0-based.
    std::ostringstream os;
    const char *names[3] = {"d", "h", "w"};
    auto axes = [&](const char *prefix, const dim_t *v, dim_t bias) {
        for (int a = max_spatial - nsp; a < max_spatial; ++a) os << prefix << names[a] << v[a] - bias;
    };
    os << "g" << g << "mb" << mb << "ic" << ic();
    axes("i", i, 0);
    os << "oc" << oc();
    axes("o", o, 0);
    axes("k", k, 0);
    axes("s", s, 0);
    axes("p", pb, 0);
    bool any_pe = false, any_dl = false;
    for (int a = 0; a < max_spatial; ++a) {
        any_dl |= dl[a] != 1;
        any_pe |= pe[a] != pb[a];
    }
    if (any_dl) axes("d", dl, 1);
    if (any_pe) {
        for (int a = max_spatial - nsp; a < max_spatial; ++a) os << "_pe" << names[a] << pe[a];
    }
    return os.str();
}

void conv_problem::shorten_strides_past_image() {
    using wide = __int128;  // the stride and pads may be near 2^63
    for (int x = 0; x < max_spatial; ++x) {
        const wide ke = wide(k[x] - 1) * dl[x] + 1, shorter = i[x] + ke;
        if (o[x] < 2 || s[x] <= shorter) continue;
        // The output pixel whose window starts at t in [1 - ke, i - 1], reaching src: the
        // first with ow * s >= pb + 1 - ke. (At most one: windows are s >= i + ke apart.)
        const wide lo = wide(pb[x]) + 1 - ke;
        const wide ow = lo <= 0 ? 0 : (lo + s[x] - 1) / s[x];
        const wide t = ow * s[x] - pb[x];
        // Its window stays where it is; with none, pixel 0's ends just before src (and pixel
        // 1's starts just after it).
        const wide pbn = ow < o[x] && t <= i[x] - 1 ? ow * shorter - t : ke;
        // The end pads that keep o output pixels (the least, or 0: fewer than `shorter` more).
        const wide pen = std::max<wide>(0, wide(o[x] - 1) * shorter + ke - i[x] - pbn);
        s[x] = dim_t(shorter);
        pb[x] = dim_t(pbn);
        pe[x] = dim_t(pen);
    }
}

void conv_problem::read_only_windowed_pixels() {
    if (dir == conv_direction::bwd_data) return;
    for (int x = 0; x < max_spatial; ++x) {
        if (k[x] != 1 || s[x] == 1 || pb[x] != 0 || src.sp[x] == 1 || src.sp[x] == -1) continue;
        // Every window inside src: (o - 1) * s < i, in double (the stride may be near 2^63).
        if (double(o[x] - 1) * double(s[x]) >= double(i[x])) continue;
        dim_t step = src.sp[x];
        if (o[x] > 1 && __builtin_mul_overflow(src.sp[x], s[x], &step)) continue;
        src.sp[x] = step;
        i[x] = o[x];
        s[x] = 1;
        dl[x] = 1;
        pe[x] = 0;
    }
}

bool conv_problem::reads_padding() const {
    for (int x = 0; x < 3; ++x) {
        const dim_t reach = (o[x] - 1) * s[x] + (k[x] - 1) * dl[x];  // last tap read
        if (pb[x] > 0 || reach >= i[x]) return true;
        // bwd_data: the last src pixel's tap 0 lands past the last diff_dst position.
        if (dir == conv_direction::bwd_data && i[x] - 1 > (o[x] - 1) * s[x]) return true;
    }
    return false;
}

}  // namespace convgrad::detail
