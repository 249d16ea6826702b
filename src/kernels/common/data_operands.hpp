// The user's data tensors as every kernel of an ISA unit sees them (the direct, grouped,
// depthwise and vdpbf16ps kernels): an image's address, a chunk of images' plan, a bf16
// element, a dense channels-last f32 operand (or the user's memory in place), and the bias as a
// padded f32 row. Included inside the unit's ISA namespace after `struct vt` and the packers
// (pack_channels_last, unpack_channels_last): by every part of a unit (unit_parts.hpp), and by
// the sse2 unit, which lists its kernel source itself.

// The element `off` elements into a user tensor (strides may be negative: the C++ API accepts
// any).
static const void *elem_at(const void *user, data_type dt, dim_t off) {
    const std::ptrdiff_t bytes = dt == data_type::f32 ? 4 : 2;
    return static_cast<const char *>(user) + std::ptrdiff_t(off) * bytes;
}
// Image n0 of a user tensor.
static const void *image_at(const void *user, const data_layout &l, data_type dt, dim_t n0) {
    return elem_at(user, dt, n0 * l.n);
}

// The plan of images [n0, n0 + plan.images_per_chunk) of the batch: the same problem at a
// smaller batch (the gather reads the batch size from the plan).
static direct_plan chunk_plan(const direct_plan &pl, dim_t n0) {
    direct_plan c = pl;
    c.p.mb = imin(pl.images_per_chunk, pl.p.mb - n0);
    return c;
}

using bf16_t = uint16_t;

// The element of a user tensor of type dt (bf16, or f32 rounded once to nearest even).
static inline bf16_t bf16_at(data_type dt, const void *base, dim_t off) {
    if (dt == data_type::bf16) return static_cast<const bf16_t *>(base)[off];
    return float_to_bf16(load_elem(dt, base, off));
}

// Images [n0, n0 + nb) of a data tensor as the kernels see them: the user's memory when it is
// f32 with contiguous channels, else a dense channels-last f32 copy of those images, filled from
// the user's tensor when it is read and written back (rounded once) by store() when it is the
// output. nb < 0: the whole batch.
struct data_operand {
    const conv_problem &p;
    bool direct;
    void *user;
    const data_layout &l;
    dim_t C, nb;
    const dim_t *sp;
    scratch copy;
    fview v;
    data_operand(const conv_problem &p_, int nthr, bool direct_, const void *user_,
                 const data_layout &l_, dim_t C_, const dim_t *sp_, bool read, dim_t n0 = 0,
                 dim_t nb_ = -1)
        : p(p_),
          direct(direct_),
          user(const_cast<void *>(image_at(user_, l_, p_.dt, n0))),
          l(l_),
          C(C_),
          nb(nb_ < 0 ? p_.mb : nb_),
          sp(sp_),
          copy(direct_ ? 0 : nb * sp_[0] * sp_[1] * sp_[2] * C_) {
        v = direct ? user_view(user, l) : dense_view(copy.p, C, sp);
        if (!direct && read) pack_channels_last(p.dt, nb, nthr, user, l, C, sp, copy.p);
    }
    // `stream`: an NCX f32 output past the caches (direct_plan::stream_copied_output).
    void store(int nthr, bool stream = false) const {
        if (!direct) unpack_channels_last(p.dt, nb, nthr, copy.p, user, l, C, sp, stream);
    }
};

// The bias of C channels as floats, `copies` times one after the other (a gather whose C pixel
// is several pixels: direct_plan::merge_w_phases), then a vector of zeros.
static void pack_bias(const conv_problem &p, const void *user, dim_t C, float *out,
                      dim_t copies = 1) {
    for (dim_t c = 0; c < C; ++c) out[c] = user ? load_elem(p.dt, user, c * p.bias_stride) : 0.f;
    for (dim_t r = 1; r < copies; ++r) std::copy_n(out, C, out + r * C);
    for (dim_t c = copies * C; c < copies * C + W; ++c) out[c] = 0.f;
}
