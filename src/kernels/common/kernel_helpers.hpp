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
static inline void split(dim_t n, int nthr, int ithr, dim_t &s, dim_t &e) {
    balance211(n, nthr, ithr, s, e);
}

static inline float load_elem(data_type dt, const void *base, dim_t off) {
    switch (dt) {
        case data_type::bf16:
            return bf16_to_float(static_cast<const uint16_t *>(base)[off]);
        case data_type::f16:
#ifdef __F16C__
            // One vcvtph2ps instead of the portable bit manipulation: the strided operand paths
            // (bwd_weights' src^T, NCX rows) load element by element, and the portable
            // conversion made f16 4x slower than bf16 there. Widening is exact either way.
            return _cvtsh_ss(static_cast<const uint16_t *>(base)[off]);
#else
            return f16_to_float(static_cast<const uint16_t *>(base)[off]);
#endif
        default:
            return static_cast<const float *>(base)[off];
    }
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

// A channels-last tensor of elements E (f32; bf16 bits for the vdpbf16ps kernel): element
// strides of n, d, h, w; channels contiguous.
template <typename E>
struct tview {
    E *p;
    dim_t n, d, h, w;
    E *at(dim_t in, dim_t id, dim_t ih, dim_t iw) const {
        return p + in * n + id * d + ih * h + iw * w;
    }
};
using fview = tview<float>;

static fview user_view(const void *ptr, const data_layout &l) {
    return {static_cast<float *>(const_cast<void *>(ptr)), l.n, l.sp[0], l.sp[1], l.sp[2]};
}
static fview dense_view(float *p, dim_t C, const dim_t *sp) {
    return {p, sp[0] * sp[1] * sp[2] * C, sp[1] * sp[2] * C, sp[2] * C, C};
}
