// The normalized problem: every one of the six ops, whatever its layouts and family, is one of
// three core computations on a canonical convolution. "src" is the big side (the forward
// convolution's input), "dst" the small side, weights are [G*OCg][ICg][K...]. Tensors stay in
// the user's memory: each is described by element strides along the canonical axes.
#pragma once

#include <string>

#include "convgrad/types.hpp"

namespace convgrad::detail {

enum class conv_direction { fwd, bwd_data, bwd_weights };
const char *to_string(conv_direction d);

inline constexpr int max_spatial = 3;

/// Strides (in elements) of a data tensor along n, c, and the spatial axes d, h, w. Spatial axes
/// the problem does not have are size 1 with stride 0. Missing tensors have all zeros.
struct data_layout {
    dim_t n = 0, c = 0;
    dim_t sp[max_spatial] = {0, 0, 0};
};

/// Strides of the weights along oc (the full G*OCg axis), icg and kd, kh, kw.
struct weights_layout {
    dim_t oc = 0, ic = 0;
    dim_t sp[max_spatial] = {0, 0, 0};
};

struct conv_problem {
    conv_direction dir = conv_direction::fwd;
    data_type dt = data_type::f32;  // of every float tensor
    // The type the inputs' values are rounded to before they are multiplied: dt itself, or, for
    // an f32 op under fpmath_mode bf16/f16, that type (rounded once; products exact; sums and
    // output f32). The bias is added, not multiplied: it is never rounded.
    data_type math_dt = data_type::f32;
    op_kind kind = op_kind::Convolution;  // the op it came from (for logs)

    int nsp = 2;  // 1, 2 or 3 spatial axes; arrays below are d, h, w with leading 1s
    dim_t mb = 1, g = 1, icg = 1, ocg = 1;
    dim_t i[max_spatial] = {1, 1, 1};   // src spatial
    dim_t o[max_spatial] = {1, 1, 1};   // dst spatial
    dim_t k[max_spatial] = {1, 1, 1};   // kernel
    dim_t s[max_spatial] = {1, 1, 1};   // strides
    dim_t dl[max_spatial] = {1, 1, 1};  // dilations, 1 = dense
    dim_t pb[max_spatial] = {0, 0, 0};  // pads begin
    dim_t pe[max_spatial] = {0, 0, 0};  // pads end

    data_layout src, dst;
    weights_layout wei;
    // Bias (forward ops): added to dst channels for fwd (Convolution), to src channels for
    // bwd_data (ConvTranspose, whose output is the mirror convolution's src).
    bool with_bias = false;
    dim_t bias_stride = 1;

    dim_t ic() const { return g * icg; }
    dim_t oc() const { return g * ocg; }
    dim_t isp() const { return i[0] * i[1] * i[2]; }
    dim_t osp() const { return o[0] * o[1] * o[2]; }
    dim_t ksp() const { return k[0] * k[1] * k[2]; }
    /// Some (output, tap) pair reads padding, or for bwd_data some (src pixel, tap) pair falls
    /// outside diff_dst: the reference leaves those taps out (an infinite weight there must not
    /// meet a zero, dispatch/padded_tap_guard.hpp).
    bool reads_padding() const;
    /// Few input channels (the first layer of a network: 3; up to 31, and 128 values a
    /// window): the direct kernels' forward may make the kernel width and the channels together
    /// the reduced axis, contiguous in a copy of src padded along w. The widest of the kernels'
    /// rules (kernels/common/direct_plan.hpp, direct_flattens_w), here because the scratch bound
    /// counts that copy.
    bool flattens_w() const;
    /// Whether tap k of axis x (0 = d, 1 = h, 2 = w) joins any output pixel to an input pixel.
    /// A kernel much larger than its input (with the padding to match) has taps that read
    /// padding for every output: their weights multiply nothing, so the kernels neither pack
    /// them nor visit them (a 3-D kernel of 11 x 13 taps over a 1 x 12 input spent 96% of its
    /// time packing weights that no product reads). Every pair (output o, input i) of the
    /// relation i = o * s + k * dl - pb is read by both fwd and bwd_data, so one test serves
    /// both.
    bool tap_reads_input(int x, dim_t k) const;
    /// Multiply-adds of the computation (the same for all three directions).
    double macs() const;
    /// Upper bound (bytes) of the scratch memory any implementation allocates in one execution
    /// on `nthr` threads: f32 copies of the data and weights, per-thread partial sums and
    /// accumulators. In double: it must not overflow whatever the sizes.
    double scratch_bound(int nthr) const;
    /// Reads src only where some window does (fwd, bwd_weights): along an axis where a 1x1
    /// kernel steps s > 1 pixels with every window inside src (no begin padding), src becomes
    /// the view of every s-th pixel, and the stride 1. The same convolution, whose kernels copy
    /// or pack 1/s of src: ResNet's 1x1 stride-2 projections read a quarter of their input, and
    /// f16 or bf16 copied all of it. Not along the axis of src's unit stride (NCX's w, whose
    /// runs the packers transpose), nor for bwd_data, whose output is src: it writes every pixel.
    void read_only_windowed_pixels();
    /// Along an axis where the stride is at least the image plus a window (pads as long: a
    /// stride of 2^62 with begin pads of 2^62, from fuzz_op), at most one output pixel's window
    /// reaches src: the stride becomes the image plus a window and the pads follow, so that
    /// each output pixel reads the same src pixels as before, or only padding as before. The
    /// same convolution, with steps and padded copies that the kernels can address (stepping
    /// from window to window by 2^62 times a pixel stride overflowed, in several kernels).
    void shorten_strides_past_image();
    /// benchdnn-style descriptor of the canonical convolution, e.g. "g1mb2ic32ih28oc128oh14kh2sh2ph0".
    std::string desc() const;
};

/// The math type of an op of type `dt` under fpmath_mode `mode` (see conv_problem::math_dt).
/// `any` picks the fastest allowed: bf16 when `bf16_faster` (this machine multiplies bf16 faster
/// than f32: AMX tiles), else f32. tf32 allows only tf32 and f32; convgrad has no tf32 kernels,
/// so it computes in f32, which every mode allows.
data_type math_type(fpmath_mode mode, data_type dt, bool bf16_faster);

/// Where each tensor of a core computation lives for one execution.
struct conv_args {
    const void *src = nullptr;  // read for fwd and bwd_weights
    const void *wei = nullptr;  // read for fwd and bwd_data
    const void *dst = nullptr;  // read for bwd_data and bwd_weights
    const void *bias = nullptr;
    void *out = nullptr;  // dst for fwd, src for bwd_data, weights for bwd_weights
};

}  // namespace convgrad::detail
