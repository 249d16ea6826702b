// Element access of the depthwise kernel: one vector of channels of a tensor of type DT
// (f32, bf16 or f16), widened to f32 on load and rounded once on store. The channel tail (the
// last vector of a pixel's channels, n < W lanes) is masked for f32 and, on AVX-512, for
// 16-bit types (vt::load_half_tail); on AVX2, which has no masked 16-bit load, they go through
// a small buffer, which only the tail vector pays.
// Included inside an ISA's namespace after kernel_helpers.hpp.

enum dw_type : int { dw_f32 = 0, dw_bf16 = 1, dw_f16 = 2 };

constexpr int dw_nv_max = 2;  // channel vectors per register tile

template <int DT>
struct dw_elem {
    using T = uint16_t;
    static constexpr data_type dt = DT == dw_bf16 ? data_type::bf16 : data_type::f16;
};
template <>
struct dw_elem<dw_f32> {
    using T = float;
    static constexpr data_type dt = data_type::f32;
};

// A channels-last tensor of element type T: element strides of n, d, h, w; channels contiguous.
template <typename T>
struct dw_view {
    T *p;
    dim_t n, d, h, w;
    T *at(dim_t in, dim_t id, dim_t ih, dim_t iw) const {
        return p + in * n + id * d + ih * h + iw * w;
    }
};

// f32 vectors shifted onto whole vectors of memory. A tensor whose channel 0 lies `shift`
// elements past a vector boundary (glibc's malloc puts a large buffer 16 bytes past a line, so
// std::vector and NumPy data do) has its vectors split across two lines (every one of them on
// AVX-512), and its outputs cannot be streamed: MobileNetV2's 3x3 depthwise forward ran 2.3x
// slower (1 thread, 1.7x on 2; stride 2 and bwd_data up to 4x). Its vectors start `shift` lanes
// before channel 0 instead, the first masked (dw_head_mask), where every pixel has the same
// phase (its strides whole vectors) and has W channels or more (so that its first vector is
// never its last). 16-bit types keep their vectors at channel 0.
template <typename T>
static inline int dw_lane_shift(const dw_view<T> &v, dim_t C) {
    if constexpr (!std::is_same_v<std::remove_const_t<T>, float>) {
        return 0;
    } else {
        const uintptr_t a = reinterpret_cast<uintptr_t>(v.p);
        if (a % sizeof(float) != 0 || C < W) return 0;
        for (const dim_t st : {v.n, v.d, v.h, v.w})
            if (st % W != 0) return 0;
        return int(a / sizeof(float) % W);
    }
}

// The lanes [shift, W) of a shifted first vector.
static inline mask_t dw_head_mask(int shift) {
    return vt::mask_bits(((1u << W) - 1u) & ~((1u << shift) - 1u));
}

// Vector v of NV: the last one of a tile with a channel tail is partial. With HEAD (f32 only),
// the first one starts before the pixel's channel 0 (dw_lane_shift): the lanes of mh are the
// pixel's, the others are neither read nor written.
template <int DT, int NV, bool TAIL, bool HEAD = false>
static inline V dw_load_v(const typename dw_elem<DT>::T *p, int v, int n, mask_t mk,
                          mask_t mh = mask_t()) {
    static_assert(!HEAD || DT == dw_f32, "only f32 vectors are shifted onto whole lines");
    if constexpr (HEAD) {
        if (v == 0) return vt::load_mask(p, mh);
    }
    constexpr data_type dt = dw_elem<DT>::dt;
    return TAIL && v == NV - 1 ? load_widened_tail<dt>(p, n, mk) : load_widened<dt>(p);
}

// bf16 blocks of two whole vectors are split by channel parity: lane l of the block's first
// vector holds its channel 2l, of the second channel 2l + 1. One load and one integer op widen
// each vector (vt::load_bf16_split), where load_bf16 takes a widening load and a shift per
// vector: the depthwise forward and data gradient read each input vector once per tap, and
// widening took two vector ops per multiply-add (MobileNetV2's 3x3 forward in bf16, Zen 4, 1
// thread: 1.13x; the limit was the loads, one 64-byte load per multiply-add in f32: see
// dw_rows_of_three). The
// packed weights and bias are in the same order (dw_split_lanes), and the stores
// interleave the channels back (vt::store_bf16_merge): each lane sums the same products in
// the same order, so the results are the same bits.
template <int DT, int NV, bool TAIL>
constexpr bool dw_split_block = (DT == dw_bf16 && NV == 2 && !TAIL);

// A packed row of C lanes (weights of one tap, or the bias) in the order of the split blocks:
// the blocks of two whole vectors, at multiples of 2W lanes (dw_line's blocks).
static inline void dw_split_lanes(float *row, dim_t C) {
    float tmp[2 * W];
    for (dim_t c0 = 0; c0 + 2 * W <= C; c0 += 2 * W) {
        for (int i = 0; i < 2 * W; ++i) tmp[(i % 2) * W + i / 2] = row[c0 + i];
        std::memcpy(row + c0, tmp, sizeof tmp);
    }
}

template <int DT, int NV, bool TAIL, bool HEAD = false>
static inline void dw_store_v(typename dw_elem<DT>::T *p, V x, int v, int n, mask_t mk,
                              mask_t mh = mask_t()) {
    static_assert(!HEAD || DT == dw_f32, "only f32 vectors are shifted onto whole lines");
    if constexpr (DT == dw_f32) {
        if (HEAD && v == 0)
            vt::store_mask(p, x, mh);
        else if (TAIL && v == NV - 1)
            vt::store_mask(p, x, mk);
        else
            vt::store(p, x);
    } else {
        if (TAIL && v == NV - 1) {
            alignas(64) float tmp[W];
            vt::store(tmp, x);
            vt::narrow(dw_elem<DT>::dt, tmp, p, n);
        } else if constexpr (DT == dw_bf16) {
            vt::store_bf16(p, x);
        } else {
            vt::store_f16(p, x);
        }
    }
}
