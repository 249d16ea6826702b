// Planes of the depthwise kernel (kernels/dw_kernels.hpp) for grouped layers with a few
// channels per group: the lanes are the channels of the output side (fwd, bwd_weights: dst's
// G*ocg; bwd_data: src's G*icg), and each lane sums over the `planes` channels of its group on
// the input side. Plane p holds, at lane g*b + q, input channel g*a + p (a input, b output
// channels per group): a permuted copy, in the tensor's own element type, of a chunk of
// images, stored [image][pixel][plane][lane] so the planes of one pixel are neighbours.
// With one channel per group the only plane is the tensor itself (no copy).
// Also what every direction's driver walks the planes' rows with: the rows an output row reads
// (dw_input_rows) and the fetch of the next one's new rows (dw_ahead).
// Included inside an ISA's namespace after dw_elements.hpp.

// The (kd, kh) row walks of the drivers: the input coordinate along axis `a` (0: d, 1: h) that
// tap k reaches from output coordinate x, or -1 where it reaches none. fwd and bwd_weights:
static inline dim_t dw_fwd_reach(const conv_problem &p, int a, dim_t x, dim_t k) {
    const dim_t i = x * p.s[a] + k * p.dl[a] - p.pb[a];
    return i >= 0 && i < p.i[a] ? i : -1;
}
// bwd_data (x a src coordinate, the result a dst one):
static inline dim_t dw_bwd_reach(const conv_problem &p, int a, dim_t x, dim_t k) {
    const dim_t t = x + p.pb[a] - k * p.dl[a];
    return t >= 0 && t % p.s[a] == 0 && t / p.s[a] < p.o[a] ? t / p.s[a] : -1;
}

// The input rows that the thread's next line reads and its current line does not, fetched a
// slice per step of the current line (a channel group of a block of outputs), so that they come
// from memory while the current line computes. Without it, each block's loads of a new row
// missed in turn: a block reads one cache line of each of its pixels per channel group, a
// pattern of strided lines that the hardware prefetchers did not follow, and MobileNetV2's 3x3
// depthwise forward (NXC, f32, 2 threads, Zen 3) spent most of its time waiting on those loads.
// A slice per block instead (about 50 lines at once there) stalled on the prefetches
// themselves, the core's outstanding misses being full: spread over the channel groups, that
// forward and its data gradient ran 1.5x faster.
template <typename T>
struct dw_ahead {
    const T *const *rows = nullptr;
    int nrows = 0;
    dim_t bytes = 0;     // of each row (its pixels' span, plus a line for a misaligned start)
    dim_t per_step = 0;  // bytes of each row per step: whole cache lines
    dim_t done = 0;
    bool l2 = false;  // into L2 only (dw_plan::fetch_to_l2), else into L1
    void step() {
        if (done >= bytes) return;
        const dim_t end = imin(bytes, done + per_step);
        for (int r = 0; r < nrows; ++r) {
            const char *q = reinterpret_cast<const char *>(rows[r]);
            if (l2)
                for (dim_t b = done; b < end; b += 64) __builtin_prefetch(q + b, 0, 2);
            else
                for (dim_t b = done; b < end; b += 64) __builtin_prefetch(q + b, 0, 3);
        }
        done = end;
    }
};

// The input side of the lines: a channels-last view whose plane p starts p * pstride elements
// after the view's channel 0.
template <typename T>
struct dw_planes_view {
    dw_view<const T> v;
    dim_t pstride;
    int planes;
};

// The input rows that output row (n, od, oh) reads through `reach` (dw_fwd_reach or
// dw_bwd_reach), every plane of each, planes innermost (the planes of a pixel are neighbours
// in memory), each at pixel 0; and the index of each row's first tap (kw = 0) in the weights
// [plane][tap]. Returns how many (up to k[0] * k[1] * planes).
template <auto reach, typename T>
static int dw_input_rows(const conv_problem &p, const dw_planes_view<T> &in, dim_t n, dim_t od,
                         dim_t oh, const T **rows, dim_t *wrows) {
    int nr = 0;
    for (dim_t kd = 0; kd < p.k[0]; ++kd) {
        const dim_t id = reach(p, 0, od, kd);
        if (id < 0) continue;
        for (dim_t kh = 0; kh < p.k[1]; ++kh) {
            const dim_t ih = reach(p, 1, oh, kh);
            if (ih < 0) continue;
            for (int pp = 0; pp < in.planes; ++pp) {
                rows[nr] = in.v.at(n, id, ih, 0) + pp * in.pstride;
                wrows[nr++] = pp * p.ksp() + (kd * p.k[1] + kh) * p.k[2];
            }
        }
    }
    return nr;
}

// Planes of images [n0, n0 + nb) of x (G*a channels, spatial extents sp) into out (dense).
template <typename T>
static dw_planes_view<T> dw_build_planes(int nthr, const dw_view<const T> &x, const dim_t *sp,
                                         dim_t n0, dim_t nb, dim_t G, dim_t a, dim_t b, T *out) {
    const dim_t lanes = G * b, ps = a * lanes;  // pixel stride of the planes
    // Where each element of a pixel's planes comes from in the pixel's channels: one flat
    // indexed copy per pixel (the loops over planes, groups and lanes cost more than the copy).
    std::vector<dim_t> from(static_cast<size_t>(ps));
    for (dim_t p = 0; p < a; ++p)
        for (dim_t c = 0; c < lanes; ++c) from[size_t(p * lanes + c)] = (c / b) * a + p;
    // f32: whole vectors of the pixel's planes by the vector gather instruction (the scalar
    // indexed copy ran at about one element per cycle: half the time of a depthwise 1x1 layer
    // with 6 output channels per group), the last ps % W elements one by one.
    std::vector<int32_t> from32;
    const bool vector_gather = std::is_same_v<T, float> && G * a <= INT32_MAX;
    if (vector_gather) from32.assign(from.begin(), from.end());
    const dim_t vec_end = vector_gather ? ps / W * W : 0;
    const dim_t rows = nb * sp[0] * sp[1];
    parallel(nthr, [&](int ithr, int nt) {
        const dim_t *__restrict idx = from.data();
        dim_t s, e;
        split(rows, nt, ithr, s, e);
        for (dim_t r = s; r < e; ++r) {
            const dim_t h = r % sp[1], d = (r / sp[1]) % sp[0], n = r / (sp[1] * sp[0]);
            const T *in = x.at(n0 + n, d, h, 0);
            T *o = out + r * sp[2] * ps;
            for (dim_t w = 0; w < sp[2]; ++w, in += x.w, o += ps) {
                const T *__restrict src = in;
                T *__restrict os = o;
                if constexpr (std::is_same_v<T, float>)
                    for (dim_t k = 0; k < vec_end; k += W)
                        vt::store(os + k, vt::gather(src, from32.data() + k));
                for (dim_t k = vec_end; k < ps; ++k) os[k] = src[idx[k]];
            }
        }
    });
    const dim_t wst = ps, hst = sp[2] * wst, dst = sp[1] * hst;
    return {{out, sp[0] * dst, dst, hst, wst}, lanes, int(a)};
}

// Scratch for the planes of one chunk (none without copies, nor for an empty batch), allocated
// outside any parallel region and reused by every chunk.
template <typename T>
struct dw_plane_room {
    scratch mem;
    explicit dw_plane_room(const dw_plan &pl, const dim_t *sp)
        : mem(pl.copies ? div_up(imin(pl.chunk, pl.p.mb) * sp[0] * sp[1] * sp[2] * pl.planes *
                                     pl.lanes * dim_t(sizeof(T)),
                                 dim_t(sizeof(float)))
                        : 0) {}
    T *p() const { return reinterpret_cast<T *>(mem.p); }
};

// The input side of images [n0, n0 + nb): the tensor itself (its image n0 first) without
// copies, else the chunk's planes built from x (channels G*a per pixel).
template <typename T>
static dw_planes_view<T> dw_chunk_planes(const dw_plan &pl, const dw_view<const T> &x,
                                         const dim_t *sp, dim_t n0, dim_t nb,
                                         const dw_plane_room<T> &room) {
    if (!pl.copies) return {{x.p + n0 * x.n, x.n, x.d, x.h, x.w}, 0, 1};
    const conv_problem &p = pl.p;
    const dim_t b = pl.lanes / p.g;
    return dw_build_planes(pl.nthr, x, sp, n0, nb, p.g, dim_t(pl.planes), b, room.p());
}

// Offset in the user's weights of (lane c, plane pp): fwd and bwd_weights have lane
// c = g*ocg + j and plane i; bwd_data lane c = g*icg + i and plane j.
static inline dim_t dw_weight_offset(const conv_problem &p, dim_t c, dim_t pp) {
    const weights_layout &l = p.wei;
    if (p.dir != conv_direction::bwd_data) return c * l.oc + pp * l.ic;
    return ((c / p.icg) * p.ocg + pp) * l.oc + (c % p.icg) * l.ic;
}
