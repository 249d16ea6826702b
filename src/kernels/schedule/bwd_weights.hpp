// The bwd_weights schedule: the weights' f32 sums are reduced through the microkernel over the
// rows (n, d, h) of src and diff_dst, one (group, tap) at a time, split over the threads one of
// two ways (direct_plan::weights_split; fixed by the plan, so the bits of the result never
// depend on timing):
//   - by rows: each thread reduces its rows into its own f32 partial weights, which are then
//     summed in thread order and rounded once into the user's weights;
//   - by weights, where the weights have contiguous output channels and are big next to the
//     rows: each thread reduces every row into its units of the weights (group, tap, block of
//     output channels), split by their products, so its sums are final and go into the user's
//     weights in place (bf16/f16: f32 sums of its own units, which the microkernel rounds into
//     the weights in the last chunk of rows that reaches their tap). No thread holds, zeroes
//     or reads back a copy of all the weights.
// Included inside an ISA namespace.
//
//   for each chunk of rows (L2 budget, plan.rows_per_chunk), group g, tap t (a pass):
//     batch = the chunk's rows whose src row exists for this tap
//     for each of the thread's blocks of oc vectors, each tile of ic rows:
//       C[ic x oc] of (g, t) (+)= sum over batch of src^T[ic x ow] * diff_dst[ow x oc]
//   (with few input channels, several taps along w share a tile: rows (tap, ic); with fewer
//   still, the taps along d and h too, over the rows where they all read a src row)
//   (the first chunk that reaches a block starts its C at zero; blocks that no row reaches are
//   zeroed at the end)

// The rows (n, d, h) of a data tensor as the schedule reads them: in the user's memory (f32
// with contiguous channels), or converted chunk by chunk into the thread's scratch (NCX,
// bf16/f16), so that no whole-tensor copy exists and the converted rows are read from cache.
// The scratch rows are dense channels-last, like the user's NXC rows, so the microkernel runs
// the same calls on the same values either way (bit-identical results).
struct row_source {
    bool direct;
    fview v;  // direct: the user's tensor
    const void *user;
    const data_layout *l;
    data_type dt;
    dim_t C;
    const dim_t *sp;
    float *buf = nullptr;  // converted rows [lo, ...) of the current chunk
    dim_t lo = 0;
    // Converted by window (convert_window): pixels [w_lo, w_lo + w_n) of each row; w_n < 0: whole
    // rows.
    dim_t w_lo = 0, w_n = -1;
    dim_t pixel_stride() const { return direct ? v.w : C; }
    // (Pixel 0 of the row: with a window, before the buffer; only its pixels are read.)
    const float *row(dim_t n, dim_t d, dim_t h) const {
        if (direct) return v.at(n, d, h, 0);
        const dim_t width = w_n < 0 ? sp[2] : w_n;
        return buf + (((n * sp[0] + d) * sp[1] + h - lo) * width - w_lo) * C;
    }
    // Row r of the flattened (n, d, h).
    const float *flat_row(dim_t r) const {
        return row(r / (sp[1] * sp[0]), r / sp[1] % sp[0], r % sp[1]);
    }
    void convert(dim_t a, dim_t b) {
        lo = a, w_lo = 0, w_n = -1;
        if (!direct && b > a) pack_rows_channels_last(dt, user, *l, C, sp, a, b, buf);
    }
    // Pixels [wa, wb) of rows [a, b) (none when wb <= wa).
    void convert_window(dim_t a, dim_t b, dim_t wa, dim_t wb) {
        lo = a, w_lo = wa, w_n = imax(wb - wa, 0);
        if (!direct && b > a && w_n > 0)
            pack_row_window_channels_last(dt, user, *l, C, sp, a, b, wa, w_n, buf);
    }
};

// diff_dst row `row` (flattened n, od, oh) and the src row (n, id, ih) its tap (kd, kh) reads,
// which may fall in the padding (!valid).
struct tap_row {
    dim_t n, od, oh, id, ih;
    bool valid;
    dim_t src_row(const conv_problem &p) const { return (n * p.i[0] + id) * p.i[1] + ih; }
};
static inline tap_row tap_row_of(const conv_problem &p, dim_t row, dim_t kd, dim_t kh) {
    tap_row r;
    r.oh = row % p.o[1], r.od = (row / p.o[1]) % p.o[0], r.n = row / (p.o[1] * p.o[0]);
    r.id = r.od * p.s[0] + kd * p.dl[0] - p.pb[0];
    r.ih = r.oh * p.s[1] + kh * p.dl[1] - p.pb[1];
    r.valid = r.id >= 0 && r.id < p.i[0] && r.ih >= 0 && r.ih < p.i[1];
    return r;
}

// The src rows (flattened n, id, ih) the diff_dst rows [c, ce) read through any tap: [a, b).
static void src_rows_of(const conv_problem &p, dim_t c, dim_t ce, dim_t &a, dim_t &b) {
    a = p.mb * p.i[0] * p.i[1], b = 0;
    for (dim_t row = c; row < ce; ++row)
        for (dim_t kd = 0; kd < p.k[0]; ++kd)
            for (dim_t kh = 0; kh < p.k[1]; ++kh) {
                const tap_row tr = tap_row_of(p, row, kd, kh);
                if (!tr.valid) continue;
                a = imin(a, tr.src_row(p)), b = imax(b, tr.src_row(p) + 1);
            }
    if (b <= a) a = b = 0;
}

// The most src rows the diff_dst rows of one chunk read (chunks of `chunk` rows of [r0, r1)).
static dim_t most_src_rows(const conv_problem &p, dim_t r0, dim_t r1, dim_t chunk) {
    dim_t most = 0;
    for (dim_t c = r0; c < r1; c += chunk) {
        dim_t a, b;
        src_rows_of(p, c, imin(c + chunk, r1), a, b);
        most = imax(most, b - a);
    }
    return most;
}

// One thread's scratch for converting its rows [r0, r1) of diff_dst, in chunks of `chunk`, and
// the src rows they read; attached to the thread's copies of the row sources.
struct row_buffers {
    scratch s, d;
    // `wc` > 0: rows converted by windows of wc output pixels (convert_window).
    static dim_t src_floats(const conv_problem &p, const row_source &src, dim_t r0, dim_t r1,
                            dim_t chunk, dim_t wc) {
        const dim_t most = src.direct ? 0 : most_src_rows(p, r0, r1, chunk);
        const dim_t width =
            wc > 0 ? imin(p.i[2], (wc - 1) * p.s[2] + (p.k[2] - 1) * p.dl[2] + 1) : p.i[2];
        return most * width * p.ic();
    }
    row_buffers(const conv_problem &p, row_source &src, row_source &dst, dim_t r0, dim_t r1,
                dim_t chunk, dim_t wc = 0)
        : s(src_floats(p, src, r0, r1, chunk, wc)),
          d(dst.direct
                ? 0
                : imax(1, imin(chunk, r1 - r0)) * (wc > 0 ? imin(wc, p.o[2]) : p.o[2]) * p.oc()) {
        src.buf = s.p;
        dst.buf = d.p;
    }
    // Converts the diff_dst rows [c, ce) and the src rows they read.
    static void convert(const conv_problem &p, row_source &src, row_source &dst, dim_t c,
                        dim_t ce) {
        dst.convert(c, ce);
        if (src.direct) return;
        dim_t a, b;
        src_rows_of(p, c, ce, a, b);
        src.convert(a, b);
    }
    // The same for output pixels [w0, w1) of those rows and the src pixels their taps read.
    static void convert_window(const conv_problem &p, row_source &src, row_source &dst, dim_t c,
                               dim_t ce, dim_t w0, dim_t w1) {
        dst.convert_window(c, ce, w0, w1);
        if (src.direct) return;
        dim_t a, b;
        src_rows_of(p, c, ce, a, b);
        const dim_t first = w0 * p.s[2] - p.pb[2];
        const dim_t last = (w1 - 1) * p.s[2] - p.pb[2] + (p.k[2] - 1) * p.dl[2];
        src.convert_window(a, b, imax(first, 0), imin(last + 1, p.i[2]));
    }
};

// A chunk's rows with each group's channels dense (direct_plan::bwd_w_group_copies): rows
// [lo, hi) of `from` (G groups of cg channels a pixel) into `to` as [group][row][pixel][cg],
// each group's slice read back through a row_source of cg channels (group_rows). The user's
// rows are read once, in order, a row at a time group by group: the row's lines stay in L1/L2
// over its groups, each group's copy is written in one run, and the next row's lines are
// prefetched a share before each group. (ResNeXt's weight gradient, Zen 3, 5 alternated runs:
// 6.48-6.99 -> 5.87-6.04 ms on 2 threads, 9.34-9.52 -> 8.64-9.19 on one, against pixel by
// pixel, all the groups of a pixel at once with the lines 4 KB ahead prefetched, which
// wrote 32 groups' copies at once. Without any prefetch that order had waited on the lines:
// 8.28 ms against 5.72-5.75, session 73. Copying a few groups of whole chunks at a time read
// each line in parts and was slower: 6 groups, 8.63 ms in that run.) Every (pass, tap) of a
// group then reads its slice from L1.
// Where copy_group_rows puts a row's pixels: pixel w at pixel `lead + w` of a copied row of
// `pitch` pixels, the others zeros, and `slack` zero rows after each group's rows; and the
// pixels [check[0], check[1]) and [check[2], check[3]) whose values it checks are finite.
// (Dense: pitch = the row's pixels, nothing else.)
struct group_copy_layout {
    dim_t pitch, lead = 0, slack = 0;
    dim_t check[4] = {0, 0, 0, 0};
};
// Rows not in place are converted a row at a time: NCX rows transposed into each group's copy,
// channels-last bf16/f16 rows into `row_scratch` (a row of channels-last f32, from.C channels
// a pixel), read from L1 by the copy. (Converted by chunks, they were copied from L2 again.)
// Returns whether every checked value is finite.
static bool copy_group_rows(const row_source &from, dim_t lo, dim_t hi, dim_t G, dim_t cg,
                            const group_copy_layout &lay, float *to, float *row_scratch) {
    const dim_t *sp = from.sp, ps = from.pixel_stride(), pitch = lay.pitch;
    const dim_t slice = (hi - lo + lay.slack) * pitch * cg;
    bool finite = true;
    auto zeros = [&](float *t, dim_t n) {
        for (dim_t x = 0; x < n; ++x) t[x] = 0.f;
    };
    // NCX with its pixels contiguous along w: each group's channels of a row transposed
    // straight into its copy (transpose_run_block), no channels-last row between.
    const bool ncx = !from.direct && ncx_runs_of(*from.l, sp).ok;
    for (dim_t r = lo; r < hi; ++r) {
        const dim_t h = r % sp[1], d = r / sp[1] % sp[0], n = r / (sp[1] * sp[0]);
        float *row = to + (r - lo) * pitch * cg;
        if (pitch != sp[2])
            for (dim_t g = 0; g < G; ++g) {
                zeros(row + g * slice, lay.lead * cg);
                zeros(row + g * slice + (lay.lead + sp[2]) * cg, (pitch - lay.lead - sp[2]) * cg);
            }
        // (Checked in the copies, after them.)
        auto check_copies = [&] {
            for (dim_t w = 0; w < sp[2]; ++w)
                if ((w >= lay.check[0] && w < lay.check[1]) ||
                    (w >= lay.check[2] && w < lay.check[3]))
                    for (dim_t g = 0; g < G; ++g)
                        finite = finite && floats_finite(row + g * slice + (lay.lead + w) * cg, cg);
        };
        if (ncx) {
            const data_layout &l = *from.l;
            const dim_t base = n * l.n + d * l.sp[0] + h * l.sp[1];
            for (dim_t g = 0; g < G; ++g)
                for (dim_t c0 = 0; c0 < cg; c0 += W)
                    transpose_run_block(from.dt, true, const_cast<void *>(from.user),
                                        base + g * cg * l.c, l.c, row + g * slice + lay.lead * cg,
                                        cg, c0, sp[2]);
            check_copies();
            continue;
        }
        const float *f = row_scratch;
        if (from.direct)
            f = from.row(n, d, h);
        else
            pack_rows_channels_last(from.dt, from.user, *from.l, from.C, sp, r, r + 1, row_scratch);
        // The next row's lines (in the user's memory), a share before each group.
        const float *next = nullptr;
        if (from.direct && r + 1 < hi) next = from.flat_row(r + 1);
        const dim_t per_line = 64 / dim_t(sizeof(float)), lines = div_up(sp[2] * ps, per_line),
                    lines_per_group = div_up(lines, G);
        for (dim_t g = 0; g < G; ++g) {
            if (next)
                for (dim_t l = g * lines_per_group; l < imin(lines, (g + 1) * lines_per_group); ++l)
                    __builtin_prefetch(next + l * per_line);
            const float *s = f + g * cg;
            float *t = row + g * slice + lay.lead * cg;
            for (dim_t w = 0; w < sp[2]; ++w, s += ps, t += cg) {
                dim_t c = 0;
                for (; c + W <= cg; c += W) vt::store(t + c, vt::load(s + c));
                for (; c < cg; ++c) t[c] = s[c];  // (masked stores are slow on AMD)
            }
        }
        check_copies();
    }
    for (dim_t g = 0; g < G; ++g)
        zeros(to + g * slice + (hi - lo) * pitch * cg, lay.slack * pitch * cg);
    return finite;
}
// Group g's slice of copy_group_rows' copy `buf` of rows [lo, hi) of `of`.
static row_source group_rows(const row_source &of, float *buf, dim_t lo, dim_t hi, dim_t g,
                             dim_t cg) {
    row_source r = of;
    r.direct = false, r.buf = buf + g * (hi - lo) * of.sp[2] * cg;
    r.lo = lo, r.w_lo = 0, r.w_n = -1, r.C = cg;
    return r;
}
// The offset in the user's weights of output channel 0 of row (g, tap, icl) of the sums.
static inline dim_t weight_row_offset(const conv_problem &p, dim_t g, dim_t t, dim_t icl) {
    const weights_layout &l = p.wei;
    const dim_t kw = t % p.k[2], kh = (t / p.k[2]) % p.k[1], kd = t / (p.k[2] * p.k[1]);
    return icl * l.ic + kd * l.sp[0] + kh * l.sp[1] + kw * l.sp[2] + g * p.ocg * l.oc;
}

// Where a thread's f32 sums go: element (g, tap, icl, output channel oc of the group) of
//   - rows split: the thread's own partial weights [g][tap][icg][ldn];
//   - weights split, f32: the user's weights (output channels contiguous);
//   - weights split, bf16/f16: the thread's f32 sums of its own units (per run (g, tap) of
//     blocks [s, e): [icg][the run's channels from block s]) until the last chunk of rows that
//     reaches the tap, whose microkernel calls round them into the user's weights (at16).
struct weight_rows {
    float *base;  // partials or private sums (null: the user's f32 weights)
    dim_t ldn;    // partials: row length
    void *user;   // the user's weights (weights split)
    // Private sums: per run (g, tap), the offset of channel 0 and the row length.
    const dim_t *run_at = nullptr, *run_ld = nullptr;
    float *at(const conv_problem &p, dim_t g, dim_t t, dim_t icl, dim_t oc) const {
        const dim_t x = g * p.ksp() + t;
        if (run_at) return base + (run_at[x] + icl * run_ld[x] + oc);
        if (!base) return static_cast<float *>(user) + (weight_row_offset(p, g, t, icl) + oc);
        return base + ((x * p.icg + icl) * ldn + oc);
    }
    uint16_t *at16(const conv_problem &p, dim_t g, dim_t t, dim_t icl, dim_t oc) const {
        return static_cast<uint16_t *>(user) + (weight_row_offset(p, g, t, icl) + oc);
    }
};

// A (group, tap, block at output channel c0 of n channels) of the sums that no chunk has started
// (`started` clear) is zeroed, for a call that accumulates it with taps already begun; then
// marked started.
static void start_at_zero(const conv_problem &p, const weight_rows &sums, dim_t g, dim_t t,
                          dim_t c0, dim_t n, unsigned char &started) {
    for (dim_t icl = 0; icl < p.icg && !started; ++icl) {
        float *r = sums.at(p, g, t, icl, c0);
        for (dim_t x = 0; x < n; ++x) r[x] = 0.f;
    }
    started = 1;
}

// Lines fetched into L2 a slice at a time, a slice handed to each microkernel call, which
// issues it two lines per k step (brgemm_args::pf), so that the fetches overlap the products:
// issued all at once (2048 prefetches for a 128 KB chunk of wav2vec2's first layer's
// diff_dst), they filled the miss buffers and the loop issuing them waited on memory, a sixth
// of that weight gradient's samples on Zen 4; issued a slice before each call (250 lines),
// still a quarter of the kernel's samples there. The ranges added are spread over the `steps`
// calls start() is told of; finish() issues what the calls left and empties the list for the
// next chunk.
struct l2_ahead {
    struct range {
        const char *b, *e;
    };
    std::vector<range> ranges;
    size_t at = 0;
    dim_t per_step = 0;
    void add(const void *b, const void *e) {
        if (e > b) ranges.push_back({static_cast<const char *>(b), static_cast<const char *>(e)});
    }
    void start(dim_t steps) {
        dim_t lines = 0;
        for (const range &r : ranges) lines += (r.e - r.b + 63) / 64;
        per_step = imax(1, div_up(lines, imax(steps, 1)));
    }
    // The next call's share, for the microkernel to spread over its k steps (brgemm_args::pf):
    // up to per_step lines of the current range; what the range's end leaves short of
    // per_step is fetched here, from the next ranges.
    template <typename Args>
    void hand(Args &a) {
        a.pf_n = 0;
        if (at >= ranges.size()) return;
        range &r = ranges[at];
        const dim_t n = imin(per_step, dim_t((r.e - r.b + 63) / 64));
        a.pf = r.b, a.pf_n = n;
        r.b += n * 64;
        if (r.b >= r.e) ++at;
        fetch(per_step - n);
    }
    void finish() {
        while (at < ranges.size()) fetch(per_step);
        ranges.clear(), at = 0;
    }

  private:
    void fetch(dim_t lines) {
        for (dim_t n = 0; n < lines && at < ranges.size(); ++n) {
            range &r = ranges[at];
            __builtin_prefetch(r.b, 0, 2);
            r.b += 64;
            if (r.b >= r.e) ++at;
        }
    }
};

// Whether a block of nv vectors of diff_dst's channels, over nbat rows of K pixels `ldb` floats
// apart, is copied into a dense panel for the `nrows` rows of tiles of up to `mmax` that read
// it (direct_plan::bwd_w_b_panel): when at least two whole tiles do. (For one whole tile and a
// few rows more, the copy cost more than it saved: 7 input channels, one tap per tile of 6
// rows, kernel 192 along w, the panel copied for each tap and block, 36% of the samples.)
static inline bool b_panel_pays(const direct_plan &pl, int nv, int nbat, dim_t K, dim_t ldb,
                                dim_t nrows, int mmax) {
    const dim_t width = dim_t(nv) * W;
    return nrows >= 2 * dim_t(mmax) && ldb > width &&
           double(nbat) * double(K) * double(width) * sizeof(float) <= double(pl.bwd_w_b_panel);
}

// Block nb of the channels of rows[0 .. nbat) (K pixels each, `ldb` floats apart) into a
// panel [nbat][K][nb.nv * W]: the same values, lanes past the block's tail zero (never read
// into C: the microkernel masks its last vector). rows_out[x]: row x's first pixel.
static void pack_b_panel(const float *const *rows, int nbat, dim_t K, dim_t ldb, const nblock &nb,
                         float *panel, const float **rows_out) {
    const dim_t width = dim_t(nb.nv) * W;
    const mask_t last = vt::mask(nb.tail);
    for (int x = 0; x < nbat; ++x) {
        float *to = panel + dim_t(x) * K * width;
        rows_out[x] = to;
        const float *from = rows[x] + nb.c0;
        for (dim_t k = 0; k < K; ++k, from += ldb, to += width) {
            for (int j = 0; j + 1 < nb.nv; ++j) vt::store(to + j * W, vt::load(from + j * W));
            vt::store(to + (nb.nv - 1) * W, vt::load_mask(from + (nb.nv - 1) * W, last));
        }
    }
}

// Per tap, over the rows of one image (every image has the same): how many have a src row for
// it, and the last that does (-1: none).
struct tap_reach {
    dim_t rows, last;
};
static std::vector<tap_reach> tap_reach_of(const conv_problem &p) {
    const dim_t ksp = p.ksp(), per_image = p.o[0] * p.o[1];
    std::vector<tap_reach> r(size_t(ksp), tap_reach{0, -1});
    for (dim_t t = 0; t < ksp; ++t)
        for (dim_t row = 0; row < per_image; ++row)
            if (tap_row_of(p, row, t / (p.k[2] * p.k[1]), (t / p.k[2]) % p.k[1]).valid)
                ++r[size_t(t)].rows, r[size_t(t)].last = row;
    return r;
}

// The products of each tap over all the rows (its rows with a src row, times its valid
// pixels): the cost by which the weights split gives the threads their units. (Per image:
// only their proportions count.)
static std::vector<double> tap_products(const conv_problem &p) {
    const std::vector<tap_reach> reach = tap_reach_of(p);
    std::vector<double> w(reach.size(), 0.0);
    for (size_t t = 0; t < w.size(); ++t) {
        dim_t lo, hi;
        tap_w_range(p, dim_t(t) % p.k[2], lo, hi);
        if (lo < hi && p.mb > 0) w[t] = double(reach[t].rows) * double(hi - lo);
    }
    return w;
}

// Thread ithr's blocks [first, end) of output channels of each (g, tap), as pairs: all of them
// when the rows are split; its share of the products when the weights are.
static std::vector<dim_t> weight_units_of(const direct_plan &pl, dim_t nblocks, int ithr) {
    const conv_problem &p = pl.p;
    const dim_t runs = p.g * p.ksp();
    std::vector<dim_t> r(size_t(2 * runs));
    if (!pl.weights_split) {
        for (dim_t x = 0; x < runs; ++x) r[size_t(2 * x)] = 0, r[size_t(2 * x + 1)] = nblocks;
        return r;
    }
    // A block also stores its sums: about one product's time per weight.
    const std::vector<double> w = tap_products(p);
    double total = 0;
    for (double x : w) total += double(p.g) * double(nblocks) * (x + 1.0);
    weighted_share sh = weighted_share_of(total, pl.nthr, ithr);
    for (dim_t x = 0; x < runs; ++x) {
        int64_t s, e;
        weighted_next(sh, nblocks, w[size_t(x % p.ksp())] + 1.0, s, e);
        r[size_t(2 * x)] = s, r[size_t(2 * x + 1)] = e;
    }
    return r;
}

// Weights split, bf16/f16 weights: each thread's microkernel calls round its sums into the
// user's weights, in the last call of each unit's reduction.
static inline bool rounds_in_kernel(const direct_plan &pl) {
    return pl.weights_split && pl.p.dt != data_type::f32;
}

// With rounds_in_kernel, a thread's f32 sums of its own units until they are rounded: per run
// (g, tap) of blocks [s, e) of `unit` output channels, where its sums start (less channel s *
// unit: indexed by the group's channel) and its row length (weight_rows::run_at, run_ld); the
// floats they take; and per tap the last row that reaches it (-1: none), whose chunk rounds
// the tap's sums. (Otherwise empty.)
struct unit_sums {
    std::vector<dim_t> run_at, run_ld, last_row;
    dim_t floats = 0;
    unit_sums(const conv_problem &p, const std::vector<dim_t> &units, dim_t unit, bool rounds) {
        if (!rounds) return;
        for (dim_t x = 0; x < p.g * p.ksp(); ++x) {
            const dim_t s = units[size_t(2 * x)], e = units[size_t(2 * x + 1)];
            const dim_t ld = (e - s) * unit;
            run_at.push_back(floats - s * unit), run_ld.push_back(ld);
            floats += p.icg * ld;
        }
        // (In the last image: every image has the same rows.)
        for (const tap_reach &r : tap_reach_of(p))
            last_row.push_back(r.last < 0 || p.mb == 0 ? -1
                                                       : (p.mb - 1) * p.o[0] * p.o[1] + r.last);
    }
};

// (The chunks reduced as runs of rows, on the helpers above.)
#include "kernels/schedule/bwd_weights_runs.hpp"

// The f32 sums of thread ithr's units (weight_units_of) into `out`: rows split, its rows'
// sums; weights split, the final sums of its units (rounded, for bf16/f16 weights).
static void bwd_weights_sums(const direct_plan &pl, const row_source &src0, const row_source &dst0,
                             const weight_rows &out, int ithr, int nt) {
    const conv_problem &p = pl.p;
    const dim_t ksp = p.ksp();
    const dim_t rows = p.mb * p.o[0] * p.o[1];
    const dim_t blk = pl.max_nv, nblocks = div_up(p.ocg, blk * W);
    const dim_t chunk = pl.rows_per_chunk;
    const std::vector<dim_t> units = weight_units_of(pl, nblocks, ithr);
    // Whether a unit's C has been started (at zero) by an earlier chunk.
    std::vector<unsigned char> started(size_t(p.g * ksp * nblocks), 0);
    const bool rounds = rounds_in_kernel(pl);
    const unit_sums own(p, units, blk * W, rounds);
    const scratch private_sums(own.floats);
    const std::vector<dim_t> &last_row = own.last_row;
    weight_rows sums = out;
    if (rounds) sums = {private_sums.p, 0, out.user, own.run_at.data(), own.run_ld.data()};
    // Pointers: per batch element (a row of the chunk) its diff_dst row (D: channel 0 of the
    // group, pixel 0; its src rows, one per (kd, kh) of the pass, in SH below), B at a range's
    // first pixel, and the microkernel's row table of src^T: row m of batch element b at
    // Arows[b * M + m] (one tap: channel m, a_off adds the tile's first channel).
    dim_t r0 = 0, r1 = rows;
    if (!pl.weights_split) split(rows, nt, ithr, r0, r1);
    const dim_t nptr = imax(1, imin(chunk, r1 - r0));
    row_source src = src0, dst = dst0;
    const row_buffers bufs(p, src, dst, r0, r1, chunk, pl.pixels_per_chunk);
    // Each group's channels of a chunk's rows copied dense (direct_plan::bwd_w_group_copies).
    const bool by_group = pl.bwd_w_group_copies;
    // And reduced as runs of rows, when they serve (bwd_weights_runs.hpp): the copies padded.
    const bool by_runs = direct_bwd_w_group_runs(pl);
    const group_runs_layout runs_layout(p);
    const group_copy_layout src_layout = by_runs ? runs_layout.src : group_copy_layout{p.i[2]},
                            dst_layout = by_runs ? runs_layout.dst : group_copy_layout{p.o[2]};
    const scratch gsrc(by_group ? (most_src_rows(p, r0, r1, chunk) + src_layout.slack) *
                                      src_layout.pitch * p.ic()
                                : 0);
    const scratch gdst(by_group ? imin(chunk, r1 - r0) * dst_layout.pitch * p.oc() : 0);
    std::vector<dim_t> runs(by_runs ? size_t(3 * nptr) : 0);
    // Rows not in place are converted by the group copies a row at a time, here.
    const scratch row_scratch(
        by_group && (!src.direct || !dst.direct) ? imax(p.i[2] * p.ic(), p.o[2] * p.oc()) : 0);
    scratch ptrs(2 * (2 * nptr + nptr * max_rows + 2 * max_rows));
    const float **D = reinterpret_cast<const float **>(ptrs.p);
    const float **B = D + nptr;
    const float **Arows = B + nptr;
    float **C = const_cast<float **>(Arows + nptr * max_rows);
    uint16_t **C16 = reinterpret_cast<uint16_t **>(C + max_rows);
    // Few input channels (a first layer's 3): a tile of icg rows leaves the FMA pipes waiting on
    // its few accumulators (3 x 4 vectors: DCGAN 128 -> 3's weight gradient at 0.6x of oneDNN's
    // best). Taps along w then share tiles, rows (tap, channel), over the output pixels they all
    // reach; each tap's other pixels follow in tiles of its own. One tap per tile when the
    // weights are split (each tap has its own units) or its channels fill a tile.
    const dim_t taps_per_tile = imin(direct_bwd_w_taps_along_w(pl), dim_t(max_rows));
    brgemm_f32_args a{};
    a.A = Arows;
    a.C = C;
    a.C16 = C16;
    // (K is one pixel when a row has one output pixel: then the stride may be anything and
    // its product with the pixel stride overflow; it is not used.)
    // (B and its ldb: per block of output channels, in place or a dense panel.)
    // Few input channels and taps along d or h too (a 3-D first layer: 1 channel, 3x3x3): the
    // taps (kd, kh) share the tiles as well, rows (kd, kh, kw, channel), over the rows where
    // every one of them reads a src row; the rows at the borders go tap by tap. (Rows (kw,
    // channel) alone gave 3 accumulators per tile: 3-D U-Net's first layer, 1 -> 16 channels at
    // 96^3, went to the GEMM kernel, which copies src 27 times over, at 0.56-0.58x of oneDNN.)
    // A (kd, kh) that no row reads leaves no interior row: then every row goes tap by tap.
    const dim_t nhd = p.k[0] * p.k[1];
    const bool share_hd = direct_bwd_w_shares_hd(pl);
    // Passes over (kd, kh): [first, first + count) and which rows: all rows of the tap that
    // read a src row, or (sharing) the rows where all taps do / the other rows.
    enum class pass_rows { valid, interior, border };
    struct hd_pass {
        dim_t first, count;
        pass_rows rows;
    };
    std::vector<hd_pass> passes;
    if (share_hd) passes.push_back({0, nhd, pass_rows::interior});
    for (dim_t hd = 0; hd < nhd; ++hd)
        passes.push_back({hd, 1, share_hd ? pass_rows::border : pass_rows::valid});
    // Per batch element and (kd, kh) of the pass: its src row. Per row of the chunk: whether
    // every (kd, kh) reads a src row.
    std::vector<const float *> SH(size_t(nptr * (share_hd ? nhd : 1)));
    std::vector<unsigned char> reads_all(share_hd ? static_cast<size_t>(nptr) : 0);
    // A block of diff_dst's channels copied dense (direct_plan::bwd_w_b_panel): the panel and
    // its rows, one per batch element.
    const scratch panel(pl.bwd_w_b_panel / dim_t(sizeof(float)));
    std::vector<const float *> panel_rows(static_cast<size_t>(nptr));
    // Output pixels [w0, w1) of the chunk's rows at a time (direct_plan::pixels_per_chunk).
    const dim_t wc = pl.pixels_per_chunk > 0 ? pl.pixels_per_chunk : imax(p.o[2], 1);
    l2_ahead ahead;
    // In place, rows split: each chunk's calls fetch the next chunk's rows into L2 (below). Not
    // rows whose pixels are spread out by the user's strides: their lines would be mostly other
    // data.
    const bool dst_ahead = dst.direct && dst.pixel_stride() <= 2 * p.oc(),
               src_ahead = src.direct && src.pixel_stride() <= 2 * p.ic();
    const bool rows_ahead = pl.pixels_per_chunk == 0 && !by_group && (dst_ahead || src_ahead);
    std::vector<dim_t> next_src;  // (the next chunk's src rows, fetched ahead)
    next_src.reserve(size_t(nptr * nhd));
    // A row's pixels, from its first: the range fetched.
    auto fetch_row = [&](const row_source &rs, const float *row, dim_t width, dim_t channels) {
        ahead.add(row, row + (width - 1) * rs.pixel_stride() + channels);
    };
    for (dim_t c = r0; c < r1; c += chunk) {
        const dim_t ce = imin(c + chunk, r1);
        if (pl.pixels_per_chunk == 0 && !by_group) row_buffers::convert(p, src, dst, c, ce);
        for (dim_t row = c; row < ce && share_hd; ++row) {
            bool all = true;
            for (dim_t hd = 0; hd < nhd && all; ++hd)
                all = tap_row_of(p, row, hd / p.k[1], hd % p.k[1]).valid;
            reads_all[size_t(row - c)] = all;
        }
        for (dim_t w0 = 0; w0 < p.o[2]; w0 += wc) {
            // Converted operands (NCX, bf16/f16) a window of the rows at a time: a whole row of
            // wav2vec2's first layer's diff_dst is 33 MB of f32 (bf16: 0.67x its f32 time).
            if (pl.pixels_per_chunk > 0 && (!src.direct || !dst.direct))
                row_buffers::convert_window(p, src, dst, c, ce, w0, imin(w0 + wc, p.o[2]));
            // The next chunk's diff_dst pixels, fetched into L2 while this chunk's calls run
            // (l2_ahead): its blocks of output channels, read one after another, would each take
            // a few lines of every pixel from memory, a pattern the hardware prefetchers do not
            // follow (wav2vec2's first layer in chunks of 256 pixels, 2 threads: 9.4-10.0 -> 7.5
            // ms with the fetches issued at once, Xeon; one thread, memory-bound, unchanged).
            if (pl.pixels_per_chunk > 0 && dst.direct && w0 + wc < p.o[2]) {
                for (dim_t row = c; row < ce; ++row) {
                    const tap_row tr = tap_row_of(p, row, 0, 0);
                    const float *d = dst.row(tr.n, tr.od, tr.oh);
                    ahead.add(d + (w0 + wc) * dst.pixel_stride(),
                              d + imin(w0 + 2 * wc, p.o[2]) * dst.pixel_stride());
                }
                ahead.start(p.g * dim_t(passes.size()) * div_up(p.k[2], taps_per_tile) * nblocks);
            }
            // In place, rows split (rows_ahead): the next chunk's diff_dst rows and the src rows
            // they read, fetched into L2 the same way. The schedule reads a block of output
            // channels of every pixel at a time (pack_b_panel), a line 1 KB apart for 256 channels,
            // which the hardware prefetchers do not follow across pages. (ResNet-50's res2 1x1
            // weight gradient, Zen 3, 2 threads, 5 alternated runs: 13.8 -> 12.6 ms, pack_b_panel
            // 19% -> 8% of the samples; its 3x3 layers 1.00-1.04x.)
            if (rows_ahead && ce < r1) {
                const dim_t ne = imin(ce + chunk, r1);
                next_src.clear();
                for (dim_t row = ce; row < ne; ++row) {
                    const tap_row tr = tap_row_of(p, row, 0, 0);
                    if (dst_ahead) fetch_row(dst, dst.row(tr.n, tr.od, tr.oh), p.o[2], p.oc());
                    for (dim_t hd = 0; hd < nhd && src_ahead; ++hd) {
                        const tap_row ts = tap_row_of(p, row, hd / p.k[1], hd % p.k[1]);
                        if (ts.valid) next_src.push_back(ts.src_row(p));
                    }
                }
                std::sort(next_src.begin(), next_src.end());
                next_src.erase(std::unique(next_src.begin(), next_src.end()), next_src.end());
                for (const dim_t r : next_src) fetch_row(src, src.flat_row(r), p.i[2], p.ic());
                ahead.start(p.g * dim_t(passes.size()) * div_up(p.k[2], taps_per_tile) * nblocks *
                            div_up(p.icg * taps_per_tile, dim_t(pl.max_m[blk])));
            }
            dim_t sa = 0, sb = 0;  // the chunk's src rows
            bool copied = by_group;  // the groups' passes read the dense copies
            if (by_group) {
                src_rows_of(p, c, ce, sa, sb);
                const bool finite_src =
                    copy_group_rows(src, sa, sb, p.g, p.icg, src_layout, gsrc.p, row_scratch.p);
                const bool finite_dst =
                    copy_group_rows(dst, c, ce, p.g, p.ocg, dst_layout, gdst.p, row_scratch.p);
                if (by_runs && finite_src && finite_dst) {
                    reduce_group_runs(pl, gsrc.p, gdst.p, c, ce, sa, sb, sums, started.data(),
                                      runs.data(), C);
                    continue;
                }
                // (A value the runs' zeros would meet is not finite: tap by tap, in place, or
                // from the chunk's converted rows.)
                copied = !by_runs;
                if (by_runs) row_buffers::convert(p, src, dst, c, ce);
            }
            const dim_t src_ps = copied ? p.icg : src.pixel_stride();
            a.aks = p.o[2] > 1 ? p.s[2] * src_ps : src_ps;
            for (dim_t g = 0; g < p.g; ++g) {
                // Group g's rows: the user's (or the chunk's converted ones) at channel g * cg,
                // or its dense copies at channel 0.
                const row_source gs = copied ? group_rows(src, gsrc.p, sa, sb, g, p.icg) : src;
                const row_source gd = copied ? group_rows(dst, gdst.p, c, ce, g, p.ocg) : dst;
                const dim_t sg = copied ? 0 : g * p.icg, dg = copied ? 0 : g * p.ocg;
                for (const hd_pass &pass : passes) {
                    // The pass's rows, the same for all its taps along w: found at the first
                    // one that has units and pixels. (Found per tap, their tap_row_of divisions
                    // were much of this schedule's own 19% of the samples of ResNeXt's grouped
                    // 3x3 weight gradient, K = 28; 11-12% after.)
                    int nbat = -1;
                    for (dim_t kw = 0; kw < p.k[2];) {
                        const dim_t w1 = imin(w0 + wc, p.o[2]);
                        const dim_t t = pass.first * p.k[2] + kw;
                        const dim_t b0 = units[size_t(2 * (g * ksp + t))],
                                    b1 = units[size_t(2 * (g * ksp + t) + 1)];
                        // The taps kw .. kw + J - 1 along w (same rows) that share a tile, their
                        // first pixels in src and ranges of output pixels, and the range they all
                        // reach, [lo, hi).
                        dim_t J = 1, off[max_rows], tlo[max_rows], thi[max_rows];
                        off[0] = tap_w_range(p, kw, tlo[0], thi[0]);
                        dim_t lo = tlo[0], hi = thi[0];
                        while (J < taps_per_tile && kw + J < p.k[2]) {
                            off[J] = tap_w_range(p, kw + J, tlo[J], thi[J]);
                            if (imax(lo, tlo[J]) >= imin(hi, thi[J])) break;
                            lo = imax(lo, tlo[J]), hi = imin(hi, thi[J]), ++J;
                        }
                        const dim_t kw0 = kw;
                        kw += J;
                        if (b0 >= b1 || lo >= hi) continue;
                        if (nbat < 0) {
                            nbat = 0;
                            for (dim_t row = c; row < ce; ++row) {
                                if (pass.rows != pass_rows::valid &&
                                    bool(reads_all[size_t(row - c)]) !=
                                        (pass.rows == pass_rows::interior))
                                    continue;
                                const tap_row tr0 =
                                    tap_row_of(p, row, pass.first / p.k[1], pass.first % p.k[1]);
                                if (!tr0.valid) continue;
                                for (dim_t h = 0; h < pass.count; ++h) {
                                    const dim_t hd = pass.first + h;
                                    const tap_row tr = tap_row_of(p, row, hd / p.k[1], hd % p.k[1]);
                                    SH[size_t(nbat * pass.count + h)] =
                                        gs.row(tr.n, tr.id, tr.ih) + sg;
                                }
                                D[nbat++] = gd.row(tr0.n, tr0.od, tr0.oh) + dg;
                            }
                        }
                        if (nbat == 0) continue;
                        a.nbatch = nbat;
                        // The taps of rows (h, j, channel) of a tile: h of the pass, j of [j0, j1).
                        auto tap_of = [&](dim_t h, dim_t j) {
                            return (pass.first + h) * p.k[2] + kw0 + j;
                        };
                        // Over pixels [plo, phi) of the output rows, taps (h, j) for j in [j0, j1):
                        // tiles of rows (h, j, input channel) of the block's height; clipped to
                        // the pixel chunk [w0, w1). `end`: the last pixel of the taps' range.
                        auto reduce = [&](dim_t j0, dim_t j1, dim_t plo, dim_t phi) {
                            const dim_t end = phi;
                            plo = imax(plo, w0), phi = imin(phi, w1);
                            if (plo >= phi) return;
                            const dim_t ps = gs.pixel_stride(), per_h = (j1 - j0) * p.icg,
                                        nrows = pass.count * per_h;
                            for (int x = 0; x < nbat; ++x) B[x] = D[x] + plo * gd.pixel_stride();
                            a.K = phi - plo;
                            const bool one_tap = pass.count == 1 && j1 - j0 == 1;
                            // The tap's last chunk rounds its sums into the user's weights (weights
                            // split: one tap per tile), in the call that reaches its last pixel.
                            const bool final =
                                rounds && last_row[size_t(tap_of(0, j0))] < ce && phi == end;
                            a.narrow = final ? p.dt : data_type::f32;
                            // The tile Arows is laid out for: its height, and (several taps) its
                            // first row. (When several taps fit one tile, every block reuses it.)
                            int table_m = 0;
                            dim_t table_q0 = -1;
                            for (dim_t b = b0; b < b1; ++b) {
                                const nblock nb = block_of(p.ocg, blk, b);
                                const int mmax = pl.max_m[nb.nv];
                                a.tail = nb.tail;
                                const dim_t ldd = gd.pixel_stride();
                                if (b_panel_pays(pl, nb.nv, nbat, a.K, ldd, nrows, mmax)) {
                                    pack_b_panel(B, nbat, a.K, ldd, nb, panel.p, panel_rows.data());
                                    a.B = panel_rows.data(), a.ldb = nb.nv * W, a.b_off = 0;
                                } else {
                                    a.B = B, a.ldb = ldd, a.b_off = nb.c0;
                                }
                                // Every tap of the call starts at zero, or every one accumulates:
                                // the unstarted ones are zeroed first where they are mixed (taps
                                // (kd, kh) whose border rows came in an earlier chunk).
                                int nstarted = 0;
                                for (dim_t h = 0; h < pass.count; ++h)
                                    for (dim_t j = j0; j < j1; ++j)
                                        nstarted +=
                                            started[size_t((g * ksp + tap_of(h, j)) * nblocks + b)];
                                const dim_t ntaps_call = pass.count * (j1 - j0);
                                if (nstarted > 0 && nstarted < ntaps_call) {
                                    const dim_t n = dim_t(nb.nv - 1) * W + nb.tail;
                                    for (dim_t h = 0; h < pass.count; ++h)
                                        for (dim_t j = j0; j < j1; ++j)
                                            start_at_zero(
                                                p, sums, g, tap_of(h, j), nb.c0, n,
                                                started[size_t((g * ksp + tap_of(h, j)) * nblocks +
                                                               b)]);
                                    nstarted = int(ntaps_call);
                                }
                                a.init = nstarted ? ukernel_init::accumulate : ukernel_init::zero;
                                for (dim_t q0 = 0; q0 < nrows; q0 += mmax) {
                                    const int m = int(imin(mmax, nrows - q0));
                                    if (one_tap) {  // the table serves every tile of m
                                        if (m != table_m) {
                                            for (int x = 0; x < nbat; ++x)
                                                for (int r = 0; r < m; ++r)
                                                    Arows[x * m + r] =
                                                        SH[size_t(x)] +
                                                        (plo * p.s[2] + off[j0]) * ps + r;
                                            table_m = m;
                                        }
                                        a.a_off = q0;
                                    } else {  // rows (h, j, channel) from row q0 on
                                        if (m != table_m || q0 != table_q0) {
                                            for (int x = 0; x < nbat; ++x) {
                                                dim_t h = q0 / per_h, j = j0 + q0 % per_h / p.icg,
                                                      r = q0 % p.icg;
                                                for (int i = 0; i < m; ++i) {
                                                    Arows[x * m + i] =
                                                        SH[size_t(x * pass.count + h)] +
                                                        (plo * p.s[2] + off[j]) * ps + r;
                                                    if (++r == p.icg) r = 0, ++j;
                                                    if (j == j1) j = j0, ++h;
                                                }
                                            }
                                            table_m = m, table_q0 = q0;
                                        }
                                        a.a_off = 0;
                                    }
                                    // (Counted along, not divided out per row: a tile's rows
                                    // are set up for every call.)
                                    dim_t h = q0 / per_h, j = j0 + q0 % per_h / p.icg,
                                          icl = q0 % p.icg;
                                    for (int r = 0; r < m; ++r) {
                                        const dim_t tj = tap_of(h, j);
                                        C[r] = sums.at(p, g, tj, icl, nb.c0);
                                        if (final) C16[r] = sums.at16(p, g, tj, icl, nb.c0);
                                        if (++icl == p.icg) icl = 0, ++j;
                                        if (j == j1) j = j0, ++h;
                                    }
                                    ahead.hand(a);
                                    call_f32_ukernel(m, nb.nv, a);
                                }
                                for (dim_t h = 0; h < pass.count; ++h)
                                    for (dim_t j = j0; j < j1; ++j)
                                        started[size_t((g * ksp + tap_of(h, j)) * nblocks + b)] = 1;
                            }
                        };
                        reduce(0, J, lo, hi);
                        // Each tap's pixels beyond the shared range, after it.
                        for (dim_t j = 0; j < J && J > 1; ++j) {
                            if (tlo[j] < lo) reduce(j, j + 1, tlo[j], lo);
                            if (hi < thi[j]) reduce(j, j + 1, hi, thi[j]);
                        }
                    }
                }
            }
            ahead.finish();
        }
    }
    // The units no row reaches (taps only in the padding, or no rows): zero sums.
    for (dim_t g = 0; g < p.g; ++g)
        for (dim_t t = 0; t < ksp; ++t)
            for (dim_t b = units[size_t(2 * (g * ksp + t))];
                 b < units[size_t(2 * (g * ksp + t) + 1)]; ++b) {
                if (started[size_t((g * ksp + t) * nblocks + b)]) continue;
                const nblock nb = block_of(p.ocg, blk, b);
                const dim_t n = dim_t(nb.nv - 1) * W + nb.tail;
                for (dim_t icl = 0; icl < p.icg; ++icl) {
                    if (rounds) {
                        uint16_t *r = sums.at16(p, g, t, icl, nb.c0);
                        for (dim_t x = 0; x < n; ++x) r[x] = 0;  // +0 in bf16 and f16
                        continue;
                    }
                    float *r = sums.at(p, g, t, icl, nb.c0);
                    for (dim_t x = 0; x < n; ++x) r[x] = 0.f;
                }
            }
}

// OIX/IOX weights (PyTorch's) keep the taps contiguous: the sums of W taps x W output channels
// are written by a block transpose as W runs of taps, not element by element across the
// weights. The per-element sums are the same (from 0, threads in order), so the bits are too.
static bool weight_taps_contiguous(const conv_problem &p) {
    const weights_layout &l = p.wei;
    return p.ksp() > 1 && (p.k[2] == 1 || l.sp[2] == 1) && (p.k[1] == 1 || l.sp[1] == p.k[2]) &&
           (p.k[0] == 1 || l.sp[0] == p.k[1] * p.k[2]);
}

static void reduce_weight_partials_by_taps(const direct_plan &pl, const float *partials, dim_t part,
                                           dim_t ldn, void *out, int copies) {
    const conv_problem &p = pl.p;
    const weights_layout &l = p.wei;
    const dim_t ksp = p.ksp(), nob = div_up(p.ocg, W);
    parallel(pl.nthr, [&](int ithr, int nt) {
        alignas(64) float tile[W * W];
        dim_t offs[W];
        dim_t s, e;
        split(p.g * p.icg * nob, nt, ithr, s, e);
        for (dim_t u = s; u < e; ++u) {
            const dim_t g = u / (p.icg * nob), icl = (u / nob) % p.icg, oc0 = (u % nob) * W;
            const int nn = int(imin(W, p.ocg - oc0));
            const mask_t mk = vt::mask(nn);
            for (dim_t t0 = 0; t0 < ksp; t0 += W) {
                const int tn = int(imin(W, ksp - t0));
                for (int j = 0; j < tn; ++j) {
                    const float *x = partials + ((g * ksp + t0 + j) * p.icg + icl) * ldn + oc0;
                    V sum = vt::zero();
                    for (int q = 0; q < copies; ++q)
                        sum = vt::add(sum, vt::load_mask(x + q * part, mk));
                    vt::store(tile + j * W, sum);
                }
                for (int i = 0; i < nn; ++i)
                    offs[i] = (g * p.ocg + oc0 + i) * l.oc + icl * l.ic + t0;
                rows_to_runs(p.dt, tile, W, nn, tn, out, offs);
            }
        }
    });
}

// Row x = (g, tap, icl) of the partials ([g][tap][icg][ldn]): the offset in the user's weights
// of its output channel 0.
static inline dim_t partial_row_offset(const conv_problem &p, dim_t x) {
    const dim_t ksp = p.ksp();
    return weight_row_offset(p, x / (p.icg * ksp), (x / p.icg) % ksp, x % p.icg);
}

// Weights whose output channels are contiguous (XIO/XOI): a vector of output channels at a time,
// summed over the threads in order (the same sums as element by element: the bits too) and
// stored as one run. (Element by element, with a type switch per element, this pass took 4x
// the products' time on a 402 -> 715 channel, 9-tap layer with one 31-pixel row.)
static void reduce_weight_partials_by_channels(const direct_plan &pl, const float *partials,
                                               dim_t part, dim_t ldn, void *out, int copies) {
    const conv_problem &p = pl.p;
    const dim_t ksp = p.ksp();
    parallel(pl.nthr, [&](int ithr, int nt) {
        alignas(64) float sums[W];
        dim_t s, e;
        split(p.g * ksp * p.icg, nt, ithr, s, e);
        for (dim_t x = s; x < e; ++x) {
            const dim_t base = partial_row_offset(p, x);
            for (dim_t oc0 = 0; oc0 < p.ocg; oc0 += W) {
                const int nn = int(imin(W, p.ocg - oc0));
                const mask_t mk = vt::mask(nn);
                V sum = vt::zero();
                for (int q = 0; q < copies; ++q)
                    sum = vt::add(sum, vt::load_mask(partials + q * part + x * ldn + oc0, mk));
                vt::store(sums, sum);
                store_run(p.dt, out, base + oc0, sums, nn);
            }
        }
    });
}

// Sums the threads' partials in thread order into the user's weights (rounded once).
// `copies`: how many partial weights there are, `part` floats apart (the threads' own, in thread
// order; 1 when each thread summed its share of the weights into one copy).
static void reduce_weight_partials(const direct_plan &pl, const float *partials, dim_t part,
                                   dim_t ldn, void *out, int copies) {
    const conv_problem &p = pl.p;
    const dim_t ksp = p.ksp();
    if (weight_taps_contiguous(p))
        return reduce_weight_partials_by_taps(pl, partials, part, ldn, out, copies);
    if (p.wei.oc == 1)  // XIO/XOI: the output channels contiguous, like the partials' rows
        return reduce_weight_partials_by_channels(pl, partials, part, ldn, out, copies);
    parallel(pl.nthr, [&](int ithr, int nt) {
        // Fixed-order reduction of the partial sums into the user's weights.
        const weights_layout &l = p.wei;
        const dim_t nw = p.g * ksp * p.icg;
        dim_t s, e;
        split(nw, nt, ithr, s, e);
        for (dim_t x = s; x < e; ++x) {
            const dim_t base = partial_row_offset(p, x);
            for (dim_t ocl = 0; ocl < p.ocg; ++ocl) {
                float sum = 0.f;
                for (int q = 0; q < copies; ++q) sum += partials[q * part + x * ldn + ocl];
                store_elem(p.dt, out, base + ocl * l.oc, sum);
            }
        }
    });
}
