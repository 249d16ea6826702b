// The gather schedule of fwd and bwd_data (the stride phases of bwd_data are separate gathers
// run in one parallel region), one loop nest over the microkernel (kernels/ukernel/) and the
// packed weights (kernels/pack/). Included inside an ISA namespace after those parts.

// Channel blocking of one group's N channels: blocks of up to blk vectors (the gather's
// direct_block_nv, the plan's max_nv elsewhere).
struct nblock {
    dim_t c0;
    int nv, tail;
};
static inline nblock block_of(dim_t N, dim_t blk, dim_t b) {
    const dim_t c0 = b * blk * W, n = imin(blk * W, N - c0);
    const int nv = int(div_up(n, W));
    return {c0, nv, int(n - (nv - 1) * W)};
}

// Both are a gather: every C pixel (a dst pixel for fwd; a src pixel of one stride phase for
// bwd_data) sums, over a list of taps, one A pixel (src for fwd, dst for bwd_data) times that
// tap's weights. Register tiles take M consecutive C pixels in flattened (n, d, h, w) order, so
// tiles stay full even when rows are short (7x7 layers) and cross row ends. Per tile and tap
// the microkernel gets one A pointer per row; a tap that falls outside A (padding) reads a
// shared zero row instead of being special-cased. Tiles inside A for every tap share one set
// of row pointers, displaced per tap (gather_tables::shared_rows).

// Per spatial axis: C pixel of local index t is c_base + c_mul*t; the A pixel of a tap is
// a_base + a_mul*t + a_off[tap], valid in [0, a_size); a_mul >= 1 (gather_run relies on it).
struct gather_axis {
    dim_t T, c_base, c_mul, a_mul, a_size;
    dim_t a_base = 0;
};

// Restricts a gather along axis x to its C pixels in [c0, c1), for a C buffer that holds only
// those (its pixel c0 first): the rows of one chunk of a big image.
static inline void restrict_c_rows(gather_axis &ax, dim_t c0, dim_t c1) {
    const dim_t t0 = imax(0, ceil_div(c0 - ax.c_base, ax.c_mul));
    const dim_t t1 = imin(ax.T, ceil_div(c1 - ax.c_base, ax.c_mul));
    ax.T = imax(0, t1 - t0);
    ax.a_base += ax.a_mul * t0;
    ax.c_base += ax.c_mul * t0 - c0;
}
struct gather_tap {
    dim_t a_off[3];
    dim_t w;  // tap index into the packed weights
};

// E is the element type of A and the packed weights: f32 (K packing 1), or bf16 bits in
// channel pairs (K packing 2, the vdpbf16ps kernel: K and a_chan even, weights VNNI pairs).
// CE is C's: f32, or the bf16/f16 bits of the user's output (the plan's
// out_rounded_in_kernel), rounded once by the microkernel from the f32 sums: straight away when
// all of K is one chunk, else after the earlier chunks accumulated in the unit's f32 tiles
// (gather_tables::acc), by the last chunk's call.
template <typename E, typename CE = float>
struct gather_job {
    const direct_plan *pl;
    tview<CE> cv;          // C tensor (channels contiguous)
    tview<E> av;           // A tensor (channels contiguous)
    dim_t c_chan, a_chan;  // channels per group on the C side and the A side (K)
    gather_axis ax[3];
    const gather_tap *taps;
    int ntaps;
    // Packed weights [g][wblocks][tap][K][ldn] (pairs: [g][wblocks][tap][K/2][ldn][2]): a
    // group's C channels in wblocks column blocks of ldn, each block's panel contiguous
    // (gather_weights_at). One block of all the channels, or (f32 past one register-tile block)
    // blocks as wide as the tiles', whose k rows then follow each other: rows of all the
    // channels, 2 KiB apart and more from 512 of them, each tile streamed from L2 at a stride
    // the L1 prefetcher does not follow.
    const E *w;
    dim_t ldn, ksp;
    dim_t wblocks = 1;
    dim_t K;  // reduced length per tap (channels, or kernel width x channels when flattened)
    const float *bias;  // per C channel, or null
    const E *zeros;     // K zeros
};

template <typename E>
constexpr int k_packing = sizeof(E) == 2 ? 2 : 1;

// Start of the panel of group g, column block b and tap t in packed weights laid out
// [g][wblocks][tap][K][ldn] (pairs: [K/2][ldn][2], the same K * ldn elements a panel): the one
// formula of the packer (direct_conv_impl.hpp: weight_blocks) and the gather.
static inline dim_t weights_panel_at(dim_t wblocks, dim_t ksp, dim_t K, dim_t ldn, dim_t g, dim_t b,
                                     dim_t t) {
    return ((g * wblocks + b) * ksp + t) * K * ldn;
}

// Offset in j.w of the packed weights of group g, tap `tap` (an index into the packed taps), k
// 0 and C channel c0 (a multiple of the vector width, inside one block).
template <typename E, typename CE>
static inline dim_t gather_weights_at(const gather_job<E, CE> &j, dim_t g, dim_t tap, dim_t c0) {
    return weights_panel_at(j.wblocks, j.ksp, j.K, j.ldn, g, c0 / j.ldn, tap) +
           c0 % j.ldn * k_packing<E>;
}

// Bytes of one group's packed weights for the job's taps, all its column blocks.
template <typename E, typename CE>
static inline double gather_group_bytes(const gather_job<E, CE> &j) {
    return double(j.ntaps) * double(j.K) * double(j.ldn) * double(j.wblocks) * sizeof(E);
}

// Row length (ldn) of packed weights in one block of all N channels (the vdpbf16ps gather's; the
// f32 gather's when N fits one tile block, at most 256 bytes, so never padded): N rounded up to
// whole vectors, plus one vector when rows would be a multiple of 512 bytes apart. The
// microkernel reads one block of a row per k, and a K chunk's blocks at such a stride fall
// into a fraction of L1's sets (a quarter at 1 KiB: 256 channels), where they evict each other
// and the chunk is read from L2 by every tile.
static inline dim_t panel_ld(dim_t N) {
    const dim_t ld = div_up(N, W) * W;
    return ld * dim_t(sizeof(float)) % 512 == 0 ? ld + W : ld;
}

static inline void call_ukernel(int m, int nv, const brgemm_f32_args &a) {
    call_f32_ukernel(m, nv, a);
}
#ifdef CONVGRAD_UKERNEL_BF16
static inline void call_ukernel(int m, int nv, const brgemm_bf16_args &a) {
    call_bf16_ukernel(m, nv, a);
}
#endif

// Tiles are handled in groups of `tiles_per_unit`. When a tap-by-K panel of packed weights
// would not stay in L1, K is cut into chunks that do (`kc`): each chunk runs over every tile of
// the group, accumulating in C, so the chunk of weights is reused from L1 by all those tiles.
constexpr int tiles_per_unit = gather_tiles_per_unit;  // (declared in direct_plan.hpp)

// The fewest channels of a K chunk of the gather (gather_share): two cache lines of an A row,
// 32 f32 channels or 64 bf16 ones. (In channels, 32 for both, bf16 chunks of 32 channels read
// one line of each row per tap and call. Zen 5, bf16, 2 threads, min of 3 alternated runs:
// ResNet-50's stride-2 3x3 forward 3.85 -> 2.64 ms, its res4 3x3 forward and data gradient
// 2.70 -> 2.34 and 2.71 -> 2.38, DeepLab's ASPP 1.64 -> 1.45 and 1.67 -> 1.45; whole K now,
// its 147 KB panel read from L2. The other 3x3 and 4x4 layers within 1%.)
template <typename E>
constexpr dim_t gather_min_chunk = 128 / dim_t(sizeof(E));

// One microkernel call of a tile on spaced rows (gather_tables::calls): C rows [r0, r1) and
// the taps in slots [s0, s1), which read A inside for exactly those rows.
struct gather_call {
    int r0, r1, s0, s1;
};
// At most this many calls a tile (row ranges of its taps): a 7-wide kernel's 4 at a border.
// A tile whose taps read more ranges uses the tables of row pointers.
constexpr int gather_max_calls = 4;

template <typename E, typename CE>
struct gather_tables {
    const E **A;  // [tile][slot][M] row pointers of the tile's valid taps, compacted
    const E **B;  // [tile][slot]
    CE **C;       // [tile][M]
    int *nbat;    // [tile]
    // Tiles whose rows stay inside A for every tap (all but the borders): their A table is M
    // row pointers (at the first tap), which every tap displaces by its boff, the
    // same for all rows (brgemm_args::a_boff). Building nbatch x M pointers per tile cost the
    // ResNet-50 stem's forward (K = 21, 7 taps) a tenth of its time.
    bool *shared_rows;  // [tile]
    dim_t *boff;        // [tap] of the job
    // Tiles along one line of pixels, for the tall one-vector tiles (gather_spaced_rows): each
    // tap's rows are equally spaced (brgemm_args::lda), so its A slot is one pointer, at the
    // first row it reads inside A. The taps are grouped by the rows they read (all of them, or
    // all but the first or last few at the borders along w), one call per group, the one of
    // all the rows first; their slots follow each other in that order. 0 calls: the tables
    // above.
    int *ncalls;         // [tile]
    gather_call *calls;  // [tile][gather_max_calls]
    // A bf16/f16 C reduced in several K chunks: the chunks accumulate in f32 rows of a block's
    // width (in L1, [tile][M] row pointers into the thread's buffer); the last one's results
    // are rounded into C.
    float **acc;
};

// Register-tile rows of a gather whose C side has `c_chan` channels per group: the rows the
// plan allows for the block width actually used (16 rows of one vector for 16 channels, not
// the 6 rows of a 4-vector tile, which leave the FMA pipes waiting on 6 accumulators).
static inline int gather_rows(const direct_plan &pl, dim_t c_chan) {
    return pl.max_m[imax(1, imin(direct_block_nv(pl, c_chan), div_up(c_chan, W)))];
}

// Whether a gather gives its tiles along one line of pixels as spaced rows (gather_tables::
// calls): where its register tiles are the tall one-vector ones, which take spaced rows
// without a table of row pointers (brgemm_impl.hpp, brgemm_ukernel_spaced): one whole vector
// of C channels per group (ResNeXt's groups of 8 on AVX2, 16 on AVX-512), more than 8 rows,
// and an f32 C (a bf16/f16 C is rounded by the call that ends its sums, and a tile split over
// calls by row ranges has no one such call).
template <typename E, typename CE>
static inline bool gather_spaced_rows(const gather_job<E, CE> &j) {
    return sizeof(CE) == sizeof(float) && j.c_chan == W && gather_rows(*j.pl, j.c_chan) > 8;
}

// How a gather's work is split into items: gather_split (kernels/plan/gather_split.hpp).
struct gather_item {
    dim_t unit, g0, g1, block0, block1;
};
static inline gather_item gather_item_of(dim_t w, const gather_split &sp, dim_t G) {
    if (sp.gs > 0) {
        const dim_t g0 = (w / sp.nunits) * sp.gs;
        return {w % sp.nunits, g0, imin(G, g0 + sp.gs), 0, sp.nblocks};
    }
    const dim_t per_group = sp.nunits * sp.nblocks, g = w / per_group, i = w % per_group;
    // Every band before the last is full, so the band of item i is a plain division.
    const dim_t band = i / (sp.band * sp.nblocks), r = i - band * sp.band * sp.nblocks;
    const dim_t units = imin(sp.band, sp.nunits - band * sp.band);
    const dim_t b = r / units;
    return {band * sp.band + r % units, g, g + 1, b, b + 1};
}
// Zeros a gather reads for taps in the padding: with groups inner the microkernel reaches a
// group's channels through its A offset, so the zero row must be as long as all the groups'
// channels plus K (in elements of E; the callers allocate floats, at least as many).
static inline dim_t gather_zeros_len(dim_t G, dim_t a_chan, dim_t K) {
    return G * a_chan + K + W;
}

template <typename E, typename CE>
static void gather_run(const gather_job<E, CE> &j, dim_t s, dim_t e, const gather_split &sp,
                       dim_t kc, bool stream, const gather_tables<E, CE> &tb) {
    constexpr int P = k_packing<E>;
    const conv_problem &p = j.pl->p;
    const dim_t blk = direct_block_nv(*j.pl, j.c_chan);
    const int mt = gather_rows(*j.pl, j.c_chan);
    const dim_t T0 = j.ax[0].T, T1 = j.ax[1].T, T2 = j.ax[2].T, Q = p.mb * T0 * T1 * T2;
    const dim_t ntiles = div_up(Q, mt);
    const dim_t K = j.K;
    brgemm_args<E> a{};
    a.aks = P;  // channels are contiguous: pair k/2 is P elements further
    a.ldb = j.ldn * P;
    a.stream = stream;  // (the caller's choice: all of K in one chunk, C written once)
    // The job's fields in locals: the compiler cannot tell the tables written below from them,
    // and would reload them for every row and tap.
    const gather_axis ax0 = j.ax[0], ax1 = j.ax[1], ax2 = j.ax[2];
    const tview<E> av = j.av;
    // Spaced rows: consecutive rows of a line, so a real distance in A wherever a call has two
    // rows or more. (Unsigned: with one pixel a line the product of a huge stride may not fit,
    // and is never used.)
    const dim_t lda = dim_t(uint64_t(ax2.a_mul) * uint64_t(av.w));
    const E *const zeros = j.zeros;
    const gather_tap *const taps = j.taps;
    const int ntaps = j.ntaps;
    // Per tile row: its A pixel before the tap's offsets (a_base + a_mul * t per axis) and its
    // image's A base.
    dim_t rx[max_rows][3];
    const E *rbase[max_rows];
    // The taps' displacements in A from the first tap's, and each axis's range of tap offsets:
    // a line of rows is inside A for every tap when it is for the extremes. (Unsigned: with
    // extreme strides and padding a tap's own displacement may not fit, but those of a tile
    // inside A are differences of pointers into A.)
    dim_t lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0};
    for (int t = 0; t < ntaps; ++t) {
        const gather_tap &tp = taps[t];
        uint64_t disp = 0;
        for (int x = 0; x < 3; ++x) {
            lo[x] = t == 0 ? tp.a_off[x] : imin(lo[x], tp.a_off[x]);
            hi[x] = t == 0 ? tp.a_off[x] : imax(hi[x], tp.a_off[x]);
            const dim_t stride = x == 0 ? av.d : x == 1 ? av.h : av.w;
            disp += (uint64_t(tp.a_off[x]) - uint64_t(taps[0].a_off[x])) * uint64_t(stride);
        }
        tb.boff[t] = dim_t(disp);
    }
    // Short products whose weights, all the item's blocks of them, stay in L1 (a panel of
    // gather_panel bytes at most), in one K chunk: each tile runs every (group, block) pair of
    // the item in turn, so a tile's C rows are written line after line, each row's whole
    // channels, instead of one block's line of each row of every tile and then the next
    // block's. wav2vec2's first layer (K = 10, 512 output channels in 32 blocks; 341k calls
    // of 6 x 16) spent a third of the microkernel's time waiting on its first streamed store
    // of a row (perf, Zen 3); ordered this way, 1.17x in f32 (2 threads, medians of 4
    // alternated pairs of binaries; f16 1.06x), and FCN's x2 ConvTranspose data gradient
    // (21 channels, 2 blocks) 1.24x. Still about 250 cycles a call on one thread, the streamed
    // stores the largest part. Each tile and block computes the same products in the same
    // order as in the other order, so the same bits.
    const bool blocks_inner = sp.gs > 0 && kc >= imax(K, 1) &&
                              gather_group_bytes(j) * double(sp.gs) <= double(j.pl->gather_panel);
    // Tile ti's operands in a: its A rows, B panels and C rows (a bf16/f16 C: its rows, and its
    // f32 rows for K chunks), and its batch.
    auto point_at_tile = [&](dim_t ti) __attribute__((always_inline)) {
        a.A = tb.A + ti * j.ntaps * mt;
        a.B = tb.B + ti * j.ntaps;
        if constexpr (sizeof(CE) == 2) {
            a.C16 = tb.C + ti * mt;
            a.C = tb.acc + ti * mt;
        } else {
            a.C = tb.C + ti * mt;
        }
        a.nbatch = tb.nbat[ti];
        a.a_boff = tb.shared_rows[ti] ? tb.boff : nullptr;
    };
    // Tile ti's call of m rows by nv vectors with the operands in a: one call, or (spaced rows)
    // one per row range, the first (all the rows) starting the sums as a says, the others
    // adding to them. Only the last stores past the caches: the others' rows are read again.
    auto call_tile = [&](dim_t ti, int m, int nv) __attribute__((always_inline)) {
        point_at_tile(ti);
        const int nc = tb.ncalls[ti];
        if (nc == 0) return call_ukernel(m, nv, a);
        brgemm_args<E> c = a;
        c.a_boff = nullptr;
        c.lda = lda;
        for (int i = 0; i < nc; ++i) {
            const gather_call &cl = tb.calls[ti * gather_max_calls + i];
            c.A = a.A + cl.s0;
            c.B = a.B + cl.s0;
            c.nbatch = cl.s1 - cl.s0;
            c.C = a.C + cl.r0;
            if (i > 0) c.init = ukernel_init::accumulate;
            c.stream = a.stream && i == nc - 1;
            call_ukernel(cl.r1 - cl.r0, nv, c);
        }
    };
    auto run_tile_blocks = [&](const gather_item &it, dim_t tile, dim_t ti) {
        const int m = int(imin(mt, Q - tile * mt));
        CE **const Ct = tb.C + ti * mt;
        const E **const Bt = tb.B + ti * j.ntaps;
        const int nbat = tb.nbat[ti];
        if constexpr (sizeof(CE) == 2) a.narrow = p.dt;  // (all of K in one call)
        a.b_off = 0;
        a.K = K;
        a.init = j.bias ? ukernel_init::bias : ukernel_init::zero;
        // (The tables were built at the item's first pair; each pair moves the tile's C rows and
        // B panels by its offset from the previous one, and A by its group's channels.)
        // A group's run of blocks of the same width whose packed weights are equally far
        // apart goes in one call (brgemm_args::nblk): the same products, in the same order.
        const nblock nb0 = block_of(j.c_chan, blk, it.block0);
        dim_t c_at = it.g0 * j.c_chan + nb0.c0, b_at = gather_weights_at(j, it.g0, 0, nb0.c0);
        for (dim_t gi = it.g0; gi < it.g1; ++gi)
            for (dim_t b = it.block0; b < it.block1;) {
                const nblock nb = block_of(j.c_chan, blk, b);
                const dim_t c_to = gi * j.c_chan + nb.c0, b_to = gather_weights_at(j, gi, 0, nb.c0);
                int n = 1;
                dim_t b_blk = 0, b_last = b_to;  // (b_last: the run's last block's weights)
                while (b + n < it.block1) {
                    const nblock next = block_of(j.c_chan, blk, b + n);
                    const dim_t b_next = gather_weights_at(j, gi, 0, next.c0);
                    if (next.nv != nb.nv || next.tail != nb.tail ||
                        (n > 1 && b_next - b_last != b_blk))
                        break;
                    b_blk = b_next - b_last, b_last = b_next, ++n;
                }
                for (int r = 0; r < m; ++r) Ct[r] += c_to - c_at;
                for (int t = 0; t < nbat; ++t) Bt[t] += b_to - b_at;
                c_at = c_to, b_at = b_to;
                a.a_off = (gi - it.g0) * j.a_chan;
                a.tail = nb.tail;
                a.bias = j.bias ? j.bias + gi * j.c_chan + nb.c0 : nullptr;
                a.nblk = n, a.b_blk = b_blk, a.c_blk = dim_t(nb.nv) * W;
                call_tile(ti, m, nb.nv);
                b += n;
            }
        a.nblk = 1;
    };
    const bool spaced = gather_spaced_rows(j);
    // Tile ti's tables as spaced rows (gather_tables::calls), its m rows along one line from
    // rx[0] and rbase[0]. The rows tap tp reads inside A are [lo, hi) (x2 grows with the row),
    // none when d or h is in the padding. False, the tables untouched, when the taps read more
    // than gather_max_calls ranges or none reads all the rows (the first call starts the sums
    // of every row).
    auto spaced_tile = [&](dim_t ti, int m, const auto &weights_of) {
        auto rows_of = [&](const gather_tap &tp, int &lo, int &hi) __attribute__((always_inline)) {
            const dim_t x0 = rx[0][0] + tp.a_off[0], x1 = rx[0][1] + tp.a_off[1];
            const dim_t x2 = rx[0][2] + tp.a_off[2], am = ax2.a_mul;
            lo = hi = 0;
            if (uint64_t(x0) >= uint64_t(ax0.a_size) || uint64_t(x1) >= uint64_t(ax1.a_size))
                return;
            // (Divisions only at strides above 1.)
            lo = x2 >= 0 ? 0 : int(imin(m, am == 1 ? -x2 : ceil_div(-x2, am)));
            hi = x2 >= ax2.a_size
                     ? 0
                     : int(imin(m, am == 1 ? ax2.a_size - x2 : ceil_div(ax2.a_size - x2, am)));
        };
        gather_call *const calls = tb.calls + ti * gather_max_calls;
        int nc = 0;
        bool full = false;
        for (int t = 0; t < ntaps; ++t) {
            int lo, hi;
            rows_of(taps[t], lo, hi);
            if (lo >= hi) continue;
            int c = 0;
            while (c < nc && (calls[c].r0 != lo || calls[c].r1 != hi)) ++c;
            if (c < nc) continue;
            if (nc == gather_max_calls) return false;
            calls[nc++] = {lo, hi, 0, 0};
            full |= lo == 0 && hi == m;
        }
        if (!full) return false;
        for (int c = 0; c < nc; ++c)  // (the full range first)
            if (calls[c].r0 == 0 && calls[c].r1 == m) {
                const gather_call first = calls[0];
                calls[0] = calls[c];
                calls[c] = first;
            }
        const E **Ar = tb.A + ti * ntaps * mt;
        const E **Bs = tb.B + ti * ntaps;
        int slot = 0;
        for (int c = 0; c < nc; ++c) {
            calls[c].s0 = slot;
            for (int t = 0; t < ntaps; ++t) {
                const gather_tap &tp = taps[t];
                int lo, hi;
                rows_of(tp, lo, hi);
                if (lo != calls[c].r0 || hi != calls[c].r1) continue;
                const E *line =
                    rbase[0] + (rx[0][0] + tp.a_off[0]) * av.d + (rx[0][1] + tp.a_off[1]) * av.h;
                Ar[slot] = line + (rx[0][2] + tp.a_off[2] + lo * ax2.a_mul) * av.w;
                Bs[slot++] = weights_of(tp);
            }
            calls[c].s1 = slot;
        }
        tb.ncalls[ti] = nc;
        tb.nbat[ti] = slot;
        tb.shared_rows[ti] = false;
        return true;
    };
    for (dim_t w = s; w < e; ++w) {
        const gather_item it = gather_item_of(w, sp, p.g);
        const dim_t unit = it.unit, g = it.g0;
        const nblock nb0 = block_of(j.c_chan, blk, it.block0);
        const dim_t tile0 = unit * tiles_per_unit, tile1 = imin(ntiles, tile0 + tiles_per_unit);
        // A tap's packed weights for the item's first (group, block).
        auto weights_of = [&](const gather_tap &tp) {
            return j.w + gather_weights_at(j, g, tp.w, nb0.c0);
        };
        for (dim_t tile = tile0; tile < tile1; ++tile) {
            const dim_t ti = tile - tile0, q0 = tile * mt;
            const int m = int(imin(mt, Q - q0));
            CE **C = tb.C + ti * mt;
            // (n, t0, t1, t2) of pixel q0 by division once, then counted up row by row: the
            // divisions per row cost as much as the products of a short-K tile.
            dim_t cur[4] = {0, 0, 0, q0 % T2};
            cur[2] = (q0 / T2) % T1;
            cur[1] = (q0 / (T2 * T1)) % T0;
            cur[0] = q0 / (T2 * T1 * T0);
            // The tile's rows by line (same image, d and h): segments [seg[i], seg[i + 1]).
            // A row after the first of its line steps from the previous one along w only,
            // and a tap's d and h are checked once per line. With few channels (a short K)
            // the tables cost as much as the products; tiles crossing a line end (17-pixel
            // rows under 14-row tiles: FCN's x2 ConvTranspose) had every row and tap checked
            // on all three axes, a third of the kernel's time.
            int seg[max_rows + 1], nseg = 0;
            for (int r = 0; r < m; ++r) {
                if (r > 0 && cur[3] != 0) {  // (the line of row r - 1)
                    C[r] = C[r - 1] + ax2.c_mul * j.cv.w;
                    rx[r][2] = rx[r - 1][2] + ax2.a_mul;
                } else {
                    seg[nseg++] = r;
                    C[r] =
                        j.cv.at(cur[0], ax0.c_base + ax0.c_mul * cur[1],
                                ax1.c_base + ax1.c_mul * cur[2], ax2.c_base + ax2.c_mul * cur[3]) +
                        g * j.c_chan + nb0.c0;
                    rx[r][0] = ax0.a_base + ax0.a_mul * cur[1];
                    rx[r][1] = ax1.a_base + ax1.a_mul * cur[2];
                    rx[r][2] = ax2.a_base + ax2.a_mul * cur[3];
                    rbase[r] = av.p + cur[0] * av.n + g * j.a_chan;
                }
                if (++cur[3] == T2) {
                    cur[3] = 0;
                    if (++cur[2] == T1) {
                        cur[2] = 0;
                        if (++cur[1] == T0) cur[1] = 0, ++cur[0];
                    }
                }
            }
            seg[nseg] = m;
            tb.ncalls[ti] = 0;
            if (spaced && nseg == 1 && spaced_tile(ti, m, weights_of)) continue;
            bool inside = ntaps > 0;
            for (int sg = 0; sg < nseg && inside; ++sg) {
                const int r0 = seg[sg], r1 = seg[sg + 1];
                inside = rx[r0][0] + lo[0] >= 0 && rx[r0][0] + hi[0] < ax0.a_size &&
                         rx[r0][1] + lo[1] >= 0 && rx[r0][1] + hi[1] < ax1.a_size &&
                         rx[r0][2] + lo[2] >= 0 && rx[r1 - 1][2] + hi[2] < ax2.a_size;
            }
            tb.shared_rows[ti] = inside;
            if (inside) {
                const E **Ar = tb.A + ti * ntaps * mt;
                const gather_tap &tp = taps[0];
                for (int sg = 0; sg < nseg; ++sg) {
                    const int r0 = seg[sg], r1 = seg[sg + 1];
                    const E *line = rbase[r0] + (rx[r0][0] + tp.a_off[0]) * av.d +
                                    (rx[r0][1] + tp.a_off[1]) * av.h;
                    for (int r = r0; r < r1; ++r) Ar[r] = line + (rx[r][2] + tp.a_off[2]) * av.w;
                }
                for (int t = 0; t < ntaps; ++t) tb.B[ti * ntaps + t] = weights_of(taps[t]);
                tb.nbat[ti] = ntaps;
                continue;
            }
            int nbat = 0;
            for (int t = 0; t < ntaps; ++t) {
                const gather_tap &tp = taps[t];
                // Rows of one slot are m apart: the microkernel reads A[b*M + row].
                const E **Ar = tb.A + ti * ntaps * mt + nbat * m;
                bool any = false;
                for (int sg = 0; sg < nseg; ++sg) {
                    const int r0 = seg[sg], r1 = seg[sg + 1];
                    const dim_t x0 = rx[r0][0] + tp.a_off[0], x1 = rx[r0][1] + tp.a_off[1];
                    // Unsigned compares: a negative coordinate is out of range too.
                    if (uint64_t(x0) >= uint64_t(ax0.a_size) ||
                        uint64_t(x1) >= uint64_t(ax1.a_size)) {
                        for (int r = r0; r < r1; ++r) Ar[r] = zeros;  // d or h in the padding
                        continue;
                    }
                    const E *line = rbase[r0] + x0 * av.d + x1 * av.h;
                    for (int r = r0; r < r1; ++r) {
                        const dim_t x2 = rx[r][2] + tp.a_off[2];
                        Ar[r] = uint64_t(x2) < uint64_t(ax2.a_size) ? line + x2 * av.w : zeros;
                    }
                    // Along a line x2 grows with r (a_mul >= 1): some row reads inside A unless
                    // the first is past its end or the last before its start. (Or-ed per row, the
                    // flag went through the stack.)
                    any |= rx[r0][2] + tp.a_off[2] < ax2.a_size && rx[r1 - 1][2] + tp.a_off[2] >= 0;
                }
                if (!any) continue;  // the whole tile is in the padding for this tap
                tb.B[ti * ntaps + nbat++] = weights_of(tp);
            }
            tb.nbat[ti] = nbat;
        }
        if (blocks_inner && (it.g1 - it.g0) * (it.block1 - it.block0) > 1) {
            for (dim_t tile = tile0; tile < tile1; ++tile) run_tile_blocks(it, tile, tile - tile0);
            continue;
        }
        // The item's (group, block) pairs in turn: C columns and B panels move by the pair's
        // offset from the previous one; A moves by the group's channels through a_off.
        dim_t c_at = g * j.c_chan + nb0.c0, b_at = gather_weights_at(j, g, 0, nb0.c0);
        for (dim_t gi = it.g0; gi < it.g1; ++gi)
            for (dim_t b = it.block0; b < it.block1; ++b) {
                const nblock nb = block_of(j.c_chan, blk, b);
                const dim_t c_to = gi * j.c_chan + nb.c0, b_to = gather_weights_at(j, gi, 0, nb.c0);
                if (c_to != c_at) {
                    for (dim_t ti = 0; ti < tile1 - tile0; ++ti) {
                        for (int r = 0; r < int(imin(mt, Q - (tile0 + ti) * mt)); ++r)
                            tb.C[ti * mt + r] += c_to - c_at;
                        for (int t = 0; t < tb.nbat[ti]; ++t) tb.B[ti * j.ntaps + t] += b_to - b_at;
                    }
                    c_at = c_to, b_at = b_to;
                }
                const dim_t a_group = (gi - g) * j.a_chan;
                // The tiles' A rows come from memory in the first block that reads them: a
                // group's first block, and every block where the units are not in bands (a band's
                // rows stay in L2 for its other blocks, where prefetching them again only cost
                // time: Zen 3, 2 threads, medians of 4 alternated rounds, ResNet-50's res2 1x1
                // and res3 projection data gradients 1.05x in f32, f16 within the noise).
                const bool rows_from_memory = b == 0 || (sp.gs == 0 && sp.band >= sp.nunits);
                a.tail = nb.tail;
                a.bias = j.bias ? j.bias + gi * j.c_chan + nb.c0 : nullptr;
                for (dim_t k0 = 0; k0 < imax(K, 1); k0 += kc) {
                    a.a_off = a_group + k0;
                    a.b_off = k0 * j.ldn;  // (k0 / P) * ldb: k0 is even when P = 2 (kc, K even)
                    a.K = imin(kc, K - k0);
                    if constexpr (sizeof(CE) == 2)  // (the last chunk: with all of K, the only one)
                        a.narrow = k0 + kc >= K ? p.dt : data_type::f32;
                    a.init = k0 > 0   ? ukernel_init::accumulate
                             : j.bias ? ukernel_init::bias
                                      : ukernel_init::zero;
                    for (dim_t tile = tile0; tile < tile1; ++tile) {
                        const dim_t ti = tile - tile0;
                        // One tap (1x1 kernels, and stride phases of one tap): the next tile's
                        // A rows toward L2 while this one runs, where the plan says it helps
                        // (direct_plan::prefetch_next_rows). Each tile reads its own rows
                        // once, so they come from memory (with more taps, the rows of a tile
                        // are read by its neighbours' taps too, and this only cost time).
                        if (j.pl->prefetch_next_rows && rows_from_memory && j.ntaps == 1 &&
                            tile + 1 < tile1 && tb.nbat[ti + 1] > 0) {
                            const E *const *An = tb.A + (ti + 1) * j.ntaps * mt;
                            // (Spaced rows: the one tap's rows of its one call.)
                            const bool next_spaced = tb.ncalls[ti + 1] > 0;
                            const int mn = next_spaced
                                               ? tb.calls[(ti + 1) * gather_max_calls].r1 -
                                                     tb.calls[(ti + 1) * gather_max_calls].r0
                                               : int(imin(mt, Q - (tile + 1) * mt));
                            const dim_t bytes = a.K * dim_t(sizeof(E));
                            for (int r = 0; r < mn; ++r) {
                                const E *at = next_spaced ? An[0] + r * lda : An[r];
                                const char *row = reinterpret_cast<const char *>(at + a.a_off);
                                for (dim_t x = 0; x < bytes; x += 64)
                                    __builtin_prefetch(row + x, 0, 1);
                            }
                        }
                        call_tile(ti, int(imin(mt, Q - tile * mt)), nb.nv);
                    }
                }
            }
    }
}

// The gathers of bwd_data, one per stride phase, each a copy of `proto` with its own taps (into
// `taps`, room for ksp) and axes. Stride phases: src pixels r + s*t (per axis) are reached by
// the taps k with (r + pb - k*dl) divisible by s, from dst pixel t + (r + pb - k*dl)/s. Every
// tap belongs to exactly one phase, so all phases together hold ksp taps. Returns the number
// of phases written to `jobs` (room for stride_phases(p)).
//
// With `merge_w` (direct_merges_w_phases, direct_plan.hpp), the phases along w are one gather
// instead: its C pixel X is the s consecutive src pixels s*X .. s*X + s - 1 of a row, their
// channels side by side (s x icg; the caller's C view steps s pixels per X), and sub-pixel r of X
// reads dst pixel X + pb/s - jd through tap kw = r + s*jd, for each jd < k/s. So the same dst
// pixels for every r: one tap per jd (packed index (kd * kh_taps + kh) * (k/s) + jd), whose weights
// hold the s sub-pixels' kernel columns side by side (w_merged_taps). FCN's x2 ConvTranspose (21
// channels) then fills 42 of 48 lanes, not 21 of 32, and stores whole runs of a row.
static inline dim_t stride_phases(const conv_problem &p) {
    dim_t n = 1;
    for (int x = 0; x < 3; ++x) n *= imin(p.s[x], p.i[x]);
    return n;
}

// Packed taps of the merged gathers: (kd, kh, jd).
static inline dim_t w_merged_taps(const conv_problem &p) {
    return p.k[0] * p.k[1] * (p.k[2] / p.s[2]);
}

template <class Job>
static dim_t bwd_data_phase_jobs(const conv_problem &p, const Job &proto, gather_tap *taps,
                                 Job *jobs, bool merge_w = false) {
    dim_t nph[3];
    for (int x = 0; x < 3; ++x) nph[x] = imin(p.s[x], p.i[x]);
    if (merge_w) nph[2] = 1;
    const dim_t nphases = nph[0] * nph[1] * nph[2];
    // (Merged: jd stands for kw, k/s of them.)
    const dim_t sw = p.s[2], kws = merge_w ? p.k[2] / sw : p.k[2];
    dim_t used = 0;
    for (dim_t ph = 0; ph < nphases; ++ph) {
        const dim_t r[3] = {ph / (nph[1] * nph[2]), (ph / nph[2]) % nph[1], ph % nph[2]};
        Job &jp = jobs[ph];
        jp = proto;
        jp.taps = taps + used;
        int ntaps = 0;
        for (dim_t kd = 0; kd < p.k[0]; ++kd)
            for (dim_t kh = 0; kh < p.k[1]; ++kh)
                for (dim_t kw = 0; kw < kws; ++kw) {
                    const dim_t k[3] = {kd, kh, kw};
                    gather_tap t{{0, 0, 0}, (kd * p.k[1] + kh) * kws + kw};
                    bool ok = true;
                    for (int x = 0; x < (merge_w ? 2 : 3) && ok; ++x) {
                        const dim_t q = r[x] + p.pb[x] - k[x] * p.dl[x];
                        ok = floor_div(q, p.s[x]) * p.s[x] == q;
                        t.a_off[x] = floor_div(q, p.s[x]);
                    }
                    if (merge_w) t.a_off[2] = p.pb[2] / sw - kw;
                    const bool read = merge_w ? tap_is_read(p, (kd * p.k[1] + kh) * p.k[2], false)
                                              : tap_is_read(p, t.w);
                    if (ok && read) taps[used + ntaps++] = t;
                }
        used += ntaps;
        for (int x = 0; x < 3; ++x)
            jp.ax[x] = {div_up(p.i[x] - r[x], p.s[x]), r[x], p.s[x], 1, p.o[x], 0};
        if (merge_w) jp.ax[2] = {p.i[2] / sw, 0, 1, 1, p.o[2], 0};
        jp.ntaps = ntaps;
    }
    return nphases;
}

// How job j's work is split (gather_split): groups and blocks inner while one group's packed
// weights for the job's taps fit the plan's L2 budget, there is more than one (group, block)
// pair, and the items still give every thread several; the set of groups per item is as big
// as the budget allows, or smaller to make those items. Else block by block over bands of
// units, each band as many units as read about the plan's gather_band bytes of A (the A
// bytes an image's C pixels read, per C pixel).
template <typename E, typename CE>
static gather_split gather_split_of(const gather_job<E, CE> &j, dim_t nunits, dim_t nblocks) {
    const direct_plan &pl = *j.pl;
    const dim_t G = pl.p.g, want = 4 * dim_t(pl.nthr);
    const double group_bytes = gather_group_bytes(j);
    gather_split sp{nunits, nblocks, 0, nunits};
    if (pl.gather_band_units > 0) return {nunits, nblocks, 0, imin(nunits, pl.gather_band_units)};
    if (G * nblocks == 1 || group_bytes > double(pl.gather_group)) {
        // A pixels read per axis: T C pixels at a_mul apart read a_mul A pixels each, or as
        // many as their taps span when fewer (a 1x1 stride-2 window reads 1 of 2), within A.
        double a_pixels = 1, c_pixels = 1;
        for (int x = 0; x < 3; ++x) {
            dim_t lo = 0, hi = 0;
            for (int t = 0; t < j.ntaps; ++t) {
                lo = t == 0 ? j.taps[t].a_off[x] : imin(lo, j.taps[t].a_off[x]);
                hi = t == 0 ? j.taps[t].a_off[x] : imax(hi, j.taps[t].a_off[x]);
            }
            // (In double: offsets of a problem whose extents reach the dim_t range.)
            const double per_c = std::min(double(j.ax[x].a_mul), double(hi) - double(lo) + 1.0);
            a_pixels *= std::min(double(j.ax[x].a_size), double(j.ax[x].T) * per_c);
            c_pixels *= double(imax(j.ax[x].T, 1));
        }
        const double a_per_c = a_pixels * double(j.a_chan) * sizeof(E) / c_pixels;
        const double unit_bytes = a_per_c * tiles_per_unit * gather_rows(pl, j.c_chan);
        const double band = std::floor(double(pl.gather_band) / std::max(unit_bytes, 1.0));
        // Bands read A once but all the group's weights once per band: taken when a band fits
        // the budget and that reads less than A once per block, (nblocks - 1) * unit_bytes >
        // all weights / band per unit. (ResNet-50's res4 3x3, 2.4 MB of weights and 48 KB of A
        // per unit, keeps whole blocks: in bands of 2 units it ran 0.74-0.89x as fast.)
        if (nblocks > 1 && band >= 1 && band < double(nunits) &&
            double(nblocks - 1) * unit_bytes * band > group_bytes)
            sp.band = dim_t(band);
        return sp;
    }
    dim_t gs = dim_t(std::min(double(G), std::floor(double(pl.gather_group) / group_bytes)));
    if (nunits * div_up(G, gs) < want) gs = imax(1, G * nunits / want);
    if (nunits * div_up(G, gs) >= want) sp.gs = gs;
    return sp;
}

// A gather no tap reaches and without a bias (a stride phase of a data gradient that the kernel
// misses: 3 of 4 phases of a 1x1 stride-2 one): its C pixels are zeros.
template <typename E, typename CE>
static inline bool gather_only_zeros(const gather_job<E, CE> &j) {
    return j.ntaps == 0 && !j.bias;
}

// n bytes of zeros at p (a run of pixels' channels, f32 or bf16/f16, at least 2-byte aligned):
// a first 16-bit element where p is not 4-byte aligned (an odd bf16 pixel), masked vectors of
// floats, then a last 16-bit element of an odd count. (A call to memset per pixel took a quarter
// of the bf16 kernel's time in a 1x1 stride-2 ConvTranspose, whose other pixels are zeros:
// 117,000 calls of 108 bytes, random problem 63 of the bench's seed 1. Plain stores in a loop
// the compiler turns back into that call. The floats are aligned: the plain C++ traits store
// them one by one as floats.)
static inline void zero_bytes(void *p, size_t n) {
    auto *h = static_cast<uint16_t *>(p);
    if (n >= sizeof(uint16_t) && reinterpret_cast<uintptr_t>(h) % sizeof(float) != 0)
        *h++ = 0, n -= sizeof(uint16_t);
    float *f = reinterpret_cast<float *>(h);
    const dim_t nf = dim_t(n / sizeof(float));
    const V z = vt::zero();
    for (dim_t i = 0; i < nf; i += W) vt::store_mask(f + i, z, vt::mask(int(imin(W, nf - i))));
    if (n % sizeof(float) != 0) h[n / sizeof(uint16_t) - 1] = 0;
}

// Thread ithr's equal share of the rows of those gathers' C pixels, zeroed directly. Through the
// gather they cost a pointer table and a microkernel call per tile, weighed as nearly nothing
// in the split of the products: ResNet-50's res3 projection data gradient (bf16) made about
// 12,500 such calls per execution, nearly all on one thread.
template <typename E, typename CE>
static void gather_fill_zeros(const gather_job<E, CE> *jobs, dim_t njobs, int ithr, int nt) {
    const conv_problem &p = jobs[0].pl->p;
    dim_t rows = 0;
    for (dim_t c = 0; c < njobs; ++c)
        if (gather_only_zeros(jobs[c])) rows += p.mb * jobs[c].ax[0].T * jobs[c].ax[1].T;
    if (rows == 0) return;
    dim_t s, e;
    split(rows, nt, ithr, s, e);
    dim_t base = 0;
    for (dim_t c = 0; c < njobs && base < e; ++c) {
        const gather_job<E, CE> &j = jobs[c];
        if (!gather_only_zeros(j)) continue;
        const gather_axis &ax0 = j.ax[0], &ax1 = j.ax[1], &ax2 = j.ax[2];
        const dim_t jrows = p.mb * ax0.T * ax1.T;
        // (Every group's channels of a pixel: group g's start g * c_chan, as in the gather.)
        const size_t bytes = size_t(p.g * j.c_chan) * sizeof(CE);
        // A row's pixels one after another in memory: zeroed as one run. (c_mul may be huge:
        // one output pixel per row at a stride of 2^60.)
        const bool dense = ax2.c_mul == 1 && j.cv.w == p.g * j.c_chan;
        for (dim_t r = imax(s, base); r < imin(e, base + jrows); ++r) {
            const dim_t x = r - base, t1 = x % ax1.T, t0 = (x / ax1.T) % ax0.T,
                        n = x / (ax1.T * ax0.T);
            CE *row =
                j.cv.at(n, ax0.c_base + ax0.c_mul * t0, ax1.c_base + ax1.c_mul * t1, ax2.c_base);
            if (dense) {
                zero_bytes(row, bytes * size_t(ax2.T));
                continue;
            }
            for (dim_t t2 = 0; t2 < ax2.T; ++t2) zero_bytes(row + ax2.c_mul * t2 * j.cv.w, bytes);
        }
        base += jrows;
    }
}

// Runs several gathers (the stride phases of bwd_data; one for fwd): thread ithr of nt takes its
// share of the work of all of them, split statically by cost (gather_item_weight). (Split by
// item count, a 1x1 stride-2 data gradient, one phase of products and three of zeros, gave the
// products to one thread of two.) (threading/parallel.hpp: weighted_share.) A phase that no tap
// reaches and that has no bias is not gathered: each thread zeroes an equal share of its pixels
// (gather_fill_zeros). With nt = 1, the calling thread computes all of it (gather_by_rows: each
// thread's own chunks of rows).
template <typename E, typename CE>
static void gather_share(const gather_job<E, CE> *jobs, dim_t njobs, int ithr, int nt) {
    const direct_plan &pl = *jobs[0].pl;
    const conv_problem &p = pl.p;
    const int mt = gather_rows(pl, jobs[0].c_chan);
    // (Blocks of the same width in gather_run: direct_block_nv.)
    const dim_t blk = direct_block_nv(pl, jobs[0].c_chan);
    const dim_t nblocks = div_up(jobs[0].c_chan, blk * W);
    auto units_of = [&](const gather_job<E, CE> &j) {
        return div_up(div_up(p.mb * j.ax[0].T * j.ax[1].T * j.ax[2].T, mt), tiles_per_unit);
    };
    auto weight_of = [&](const gather_job<E, CE> &j, const gather_split &sp) {  // of one item
        return gather_item_weight(sp, p.g, j.ntaps, j.K);
    };
    double total = 0;
    int max_taps = 0;
    for (dim_t c = 0; c < njobs; ++c) {
        const gather_job<E, CE> &j = jobs[c];
        if (gather_only_zeros(j)) continue;  // (gather_fill_zeros)
        const dim_t nunits = units_of(j);
        const gather_split sp = gather_split_of(j, nunits, nblocks);
        total += double(gather_items(sp, p.g)) * weight_of(j, sp);
        max_taps = j.ntaps > max_taps ? j.ntaps : max_taps;
    }
    gather_fill_zeros(jobs, njobs, ithr, nt);
    if (total == 0) return;
    const dim_t slots = dim_t(tiles_per_unit) * max_taps;
    scratch ptrs(2 * (slots * mt + slots + 2 * tiles_per_unit * mt) + tiles_per_unit + 16);
    gather_tables<E, CE> tb;
    tb.A = reinterpret_cast<const E **>(ptrs.p);
    tb.B = tb.A + slots * mt;
    tb.C = reinterpret_cast<CE **>(const_cast<E **>(tb.B + slots));
    tb.acc = reinterpret_cast<float **>(tb.C + tiles_per_unit * mt);
    tb.nbat = reinterpret_cast<int *>(tb.acc + tiles_per_unit * mt);
    // (The f32 tiles of a bf16/f16 C reduced in K chunks: a block's width per row.)
    const dim_t acc_row = blk * W;
    scratch acc(sizeof(CE) == 2 ? tiles_per_unit * mt * acc_row : 0);
    scratch shared(2 * dim_t(max_taps) + tiles_per_unit * (4 * gather_max_calls + 2) + 16);
    tb.boff = reinterpret_cast<dim_t *>(shared.p);
    tb.calls = reinterpret_cast<gather_call *>(tb.boff + max_taps);
    tb.ncalls = reinterpret_cast<int *>(tb.calls + tiles_per_unit * gather_max_calls);
    tb.shared_rows = reinterpret_cast<bool *>(tb.ncalls + tiles_per_unit);
    for (dim_t r = 0; r < tiles_per_unit * mt && sizeof(CE) == 2; ++r)
        tb.acc[r] = acc.p + r * acc_row;
    weighted_share share = weighted_share_of(total, nt, ithr);
    bool streamed = false;
    for (dim_t c = 0; c < njobs && share.base < share.hi; ++c) {
        const gather_job<E, CE> &j = jobs[c];
        if (gather_only_zeros(j)) continue;
        const dim_t nunits = units_of(j);
        const gather_split sp = gather_split_of(j, nunits, nblocks);
        dim_t ls, le;
        weighted_next(share, gather_items(sp, p.g), weight_of(j, sp), ls, le);
        if (ls < le) {
            // K chunk: the taps x K x (block width) panel of weights within the plan's L1
            // budget (all of K while the whole panel fits its L2 budget), a multiple of 16
            // channels, so each chunk reads whole cache lines of f32 A rows. All of K, too,
            // when fewer channels of the panel than two lines of an A row fit L1
            // (gather_min_chunk: 9 taps of 64 channels, f32 or bf16; 4 taps of 64 in f32):
            // such chunks are short calls that reread C, and read each tile's A rows (pixels
            // 512 or 1024 bytes apart at 128 channels) a line or less per pixel, into a few of
            // L1's sets, each tap's first steps waiting on its rows' misses. Zen 4, 2 threads,
            // 4 alternated runs, medians: ResNet-50's stride-2 3x3 forward 15.8 -> 10.3 ms in
            // f32 and 7.2 -> 5.0 in bf16, its 3x3 layers 1.02-1.18x, DeepLab's ASPP 1.06-1.2x,
            // DCGAN's ConvTranspose in f32 1.14x (chunks of 16 channels before).
            const dim_t row_bytes = dim_t(j.ntaps) * imin(j.ldn, blk * W) * dim_t(sizeof(E));
            const dim_t K = j.K;
            const dim_t fit = pl.gather_panel / imax(row_bytes, 1) / 16 * 16;
            const dim_t kc =
                K * row_bytes <= pl.gather_whole_k || fit < gather_min_chunk<E> ? imax(K, 1) : fit;
            // The plan's streamed output, where each C vector is stored once: all of K in
            // one chunk (the fence below orders the stores before the join).
            const bool stream = pl.stream_output && kc >= imax(K, 1);
            streamed |= stream;
            gather_run(j, ls, le, sp, kc, stream, tb);
        }
    }
    if (streamed) vt::stream_fence();
}

// All of the gathers' work, split over the plan's threads.
template <typename E, typename CE>
static void gather_parallel(const gather_job<E, CE> *jobs, dim_t njobs) {
    parallel(jobs[0].pl->nthr, [&](int ithr, int nt) { gather_share(jobs, njobs, ithr, nt); });
}
