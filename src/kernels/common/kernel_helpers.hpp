// Helpers shared by the kernels of one instruction-set unit (index arithmetic, element
// loads/stores of any float type, scratch memory, channels-last views). Included inside the
// ISA namespace, like the rest of the kernel code (see kernels/ukernel/brgemm_impl.hpp).

using V = vt::V;
using mask_t = vt::mask_t;
constexpr int W = vt::W;
constexpr int max_rows = ukernel_max_rows;

static inline dim_t imin(dim_t a, dim_t b) {
    return a < b ? a : b;
}
static inline dim_t imax(dim_t a, dim_t b) {
    return a > b ? a : b;
}
// Without `a + b - 1`: a stride near INT64_MAX must not overflow (b > 0, a > INT64_MIN).
static inline dim_t div_up(dim_t a, dim_t b) {
    return a / b + (a % b != 0);
}
static inline dim_t floor_div(dim_t a, dim_t b) {
    return a >= 0 ? a / b : -((-a) / b + ((-a) % b != 0));
}
static inline dim_t ceil_div(dim_t a, dim_t b) {
    return -floor_div(-a, b);
}
// Whether x is a multiple of the stride s, and its floor quotient q: a division only for strides
// above 1 (the grouped kernels' bwd_data ask per tap, tile and block: idiv was 7% of ResNeXt's
// time).
static inline bool stride_quotient(dim_t x, dim_t s, dim_t &q) {
    if (s == 1) {
        q = x;
        return true;
    }
    q = floor_div(x, s);
    return q * s == x;
}

static inline void split(dim_t n, int nthr, int ithr, dim_t &s, dim_t &e) {
    balance211(n, nthr, ithr, s, e);
}

// (F16C's scalar widening comes from widen_scalar, convert_scalar.hpp.)
static inline float load_elem(data_type dt, const void *base, dim_t off) {
    if (dt != data_type::bf16 && dt != data_type::f16) return static_cast<const float *>(base)[off];
    float y;
    widen_scalar(dt, static_cast<const uint16_t *>(base) + off, &y, 1);
    return y;
}
static inline void store_elem(data_type dt, void *base, dim_t off, float v) {
    switch (dt) {
        case data_type::bf16:
            static_cast<uint16_t *>(base)[off] = float_to_bf16(v);
            break;
        case data_type::f16:
            static_cast<uint16_t *>(base)[off] = float_to_f16(v);
            break;
        default:
            static_cast<float *>(base)[off] = v;
            break;
    }
}

// One vector of W elements of type DT at x (bf16/f16 as their bits), widened to f32; the tail
// form reads only the first n lanes (mk: their mask, used for f32). (T: looked up where used,
// so that the units whose traits have no 16-bit loads, SSE2's, still compile this header.)
template <data_type DT, typename T = vt>
static inline V load_widened(const float *x) {
    return T::load(x);
}
template <data_type DT, typename T = vt>
static inline V load_widened(const uint16_t *x) {
    if constexpr (DT == data_type::bf16)
        return T::load_bf16(x);
    else
        return T::load_f16(x);
}
template <data_type DT, typename T = vt>
static inline V load_widened_tail(const float *x, int, mask_t mk) {
    return T::load_mask(x, mk);
}
template <data_type DT, typename T = vt>
static inline V load_widened_tail(const uint16_t *x, int n, mask_t) {
    return T::load_half_tail(DT, x, n);
}

// n contiguous elements of a user tensor at element offset `off`, as f32 (bf16/f16 widened
// exactly by vectors), and back (rounded once to nearest-even).
static inline void load_run(data_type dt, const void *base, dim_t off, float *out, dim_t n) {
    if (dt == data_type::f32)
        std::memcpy(out, static_cast<const float *>(base) + off, size_t(n) * sizeof(float));
    else
        vt::widen(dt, static_cast<const uint16_t *>(base) + off, out, n);
}
static inline void store_run(data_type dt, void *base, dim_t off, const float *in, dim_t n) {
    if (dt == data_type::f32)
        std::memcpy(static_cast<float *>(base) + off, in, size_t(n) * sizeof(float));
    else
        vt::narrow(dt, in, static_cast<uint16_t *>(base) + off, n);
}

// The outputs ow in [lo, hi) whose tap kw reads a src pixel inside the row (none when
// hi <= lo); returns the tap's offset along w (src column = ow * s + offset).
static inline dim_t tap_w_range(const conv_problem &p, dim_t kw, dim_t &lo, dim_t &hi) {
    const dim_t off = kw * p.dl[2] - p.pb[2];
    lo = imax(0, ceil_div(-off, p.s[2]));
    hi = imin(p.o[2], floor_div(p.i[2] - 1 - off, p.s[2]) + 1);
    return off;
}

// (conv_problem::tap_reads_input: whether tap k of axis x reads any input pixel.)
static inline bool tap_reads_input(const conv_problem &p, int x, dim_t k) {
    return p.tap_reads_input(x, k);
}
// Whether tap t (flattened (kd, kh, kw)) is read; along w only when `check_w` (a kernel that
// reads whole windows of w taps at once needs all of them).
static inline bool tap_is_read(const conv_problem &p, dim_t t, bool check_w = true) {
    const dim_t kw = t % p.k[2], kh = (t / p.k[2]) % p.k[1], kd = t / (p.k[2] * p.k[1]);
    return tap_reads_input(p, 0, kd) && tap_reads_input(p, 1, kh) &&
           (!check_w || tap_reads_input(p, 2, kw));
}

// No float of v[0, n) is infinite or NaN (bits_finite, core/float_convert.hpp).
static inline bool floats_finite(const float *v, dim_t n) {
    return bits_finite<uint32_t>(v, n, 1, 0x7f800000u);
}
// The same for K rows of N floats, ldn apart.
static inline bool panel_finite(const float *v, dim_t K, dim_t N, dim_t ldn) {
    bool ok = true;
    for (dim_t k = 0; k < K; ++k) ok = ok && floats_finite(v + k * ldn, N);
    return ok;
}

// Scratch memory of one execution, 64-byte aligned, returned to the thread's cache at scope
// exit (src/threading/scratch_cache.hpp).
struct scratch {
    float *p = nullptr;
    size_t cap = 0;
    explicit scratch(dim_t floats) {
        p = static_cast<float *>(scratch_acquire(size_t(imax(floats, 1)) * sizeof(float), &cap));
    }
    ~scratch() { scratch_release(p, cap); }
    scratch(const scratch &) = delete;
    scratch &operator=(const scratch &) = delete;
};

// A channels-last tensor of elements E (f32; bf16 bits for the vdpbf16ps kernel, bf16/f16 bits
// of an output rounded in place): element strides of n, d, h, w; channels contiguous.
template <typename E>
struct tview {
    E *p;
    dim_t n, d, h, w;
    E *at(dim_t in, dim_t id, dim_t ih, dim_t iw) const {
        return p + in * n + id * d + ih * h + iw * w;
    }
};
using fview = tview<float>;

template <typename E = float>
static tview<E> user_view(const void *ptr, const data_layout &l) {
    return {static_cast<E *>(const_cast<void *>(ptr)), l.n, l.sp[0], l.sp[1], l.sp[2]};
}
static fview dense_view(float *p, dim_t C, const dim_t *sp) {
    return {p, sp[0] * sp[1] * sp[2] * C, sp[1] * sp[2] * C, sp[2] * C, C};
}
