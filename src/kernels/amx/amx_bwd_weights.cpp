#include "kernels/amx/amx_bwd_weights.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>

#include "core/float_convert.hpp"
#include "kernels/amx/amx_bwd_weights_parts.hpp"
#include "kernels/amx/amx_conv_kernels.hpp"
#include "kernels/amx/amx_elements.hpp"
#include "kernels/amx/amx_pair_ops.hpp"
#include "kernels/amx/amx_rows.hpp"
#include "kernels/plan/cache_sizes.hpp"
#include "threading/parallel.hpp"
#include "threading/scratch_cache.hpp"

namespace convgrad::detail::amx {
using bww::div_up, bww::pair_columns, bww::pixel_slots, bww::pixel_walk, bww::store_sums,
    bww::tap_split;

namespace {

// A chunk's A and B (2 bytes an element, pixels x (icg + ocg)) aim at half of a 2 MB L2, the
// rest holding the f32 C block and the next chunk's source lines.
constexpr int64_t chunk_bytes = 1 << 20;
constexpr int64_t min_chunk = 2 * k_step, max_chunk = 64 * k_step;
// Enough work items for two or more threads without a thread-count dependence, and a cap on
// the partial sums' memory (past it, fewer slices: less parallel, never less exact).
constexpr int64_t target_items = 8;
constexpr double max_partial_bytes = 256.0 * (1 << 20);

}  // namespace

std::string amx_dot_of(const conv_problem &p, amx_dot &dot) {
    // A bf16 or f16 op multiplies in its own type whatever math_dt says (resolve_op leaves
    // math_dt at f32; only a graph's compile sets it, math_type); an f32 op only under
    // fpmath_mode bf16/f16.
    const data_type t = p.dt == data_type::f32 ? p.math_dt : p.dt;
    if (t == data_type::bf16)
        dot = amx_dot::bf16;
    else if (t == data_type::f16)
        dot = amx_dot::f16;
    else
        return "needs bf16 or f16 data (or an f32 op under fpmath_mode bf16/f16)";
    return {};
}

double bwd_weights_plan::scratch_bytes() const {
    const double partials = 4.0 * slices * p.g * p.ksp() * p.icg * p.ocg;
    const double per_thread = 2.0 * 2 * (p.ocg + 32) * lda + 2.0 * (lda / 2) * ldb + 17.0 * chunk +
                              (4.0 + 2.0 * 3) * std::max(p.icg, p.ocg);
    // The rows and folded paths' scratch is released before the pixel path (their fallback)
    // takes its own.
    return std::max({partials + nthr * per_thread, rows ? rows_scratch_bytes() : 0.0,
                     folded ? folded_scratch_bytes() : 0.0});
}

bwd_weights_plan plan_bwd_weights(const conv_problem &p, amx_backend backend,
                                  int64_t chunk_pixels) {
    bwd_weights_plan pl;
    pl.p = p;
    pl.backend = backend;
    const std::string why = amx_dot_of(p, pl.dot);
    if (!why.empty() || p.dir != conv_direction::bwd_weights)
        throw error(status::invalid_arguments,
                    "AMX backward-weights: not a bf16/f16 backward-weights problem");
    pl.npix = p.mb * p.osp();
    if (chunk_pixels > 0) {
        pl.chunk = chunk_pixels;
    } else {
        // As large as L2 allows, but cut so that there are enough chunks to give every
        // group target_items / g slices (one chunk is the finest a slice can be).
        const int64_t fit = chunk_bytes / (2 * (p.icg + p.ocg));
        const int64_t spread = div_up(div_up(pl.npix, div_up(target_items, p.g)), k_step) * k_step;
        // Each chunk loads and stores a tap's f32 partials (icg x ocg) once: when they do not
        // stay in L2 next to the operands, a short chunk spends more on them than on the tile
        // products (U-Net's 512 x 256 2x2 weight gradient, 512 KB a tap, took 128-pixel chunks:
        // 3.8 ms, 1.5 with 512), so the spread gives way to chunks of at least 16 tile steps.
        const bool big_partials = 4.0 * p.icg * p.ocg > 0.125 * double(machine_caches().l2);
        const int64_t least =
            big_partials ? std::min<int64_t>(fit / k_step * k_step, 16 * k_step) : 0;
        pl.chunk = std::clamp(std::min(fit / k_step * k_step, std::max(spread, least)), min_chunk,
                              max_chunk);
    }
    pl.chunk = std::max<int64_t>(1, std::min(pl.chunk, pl.npix));
    pl.nchunks = div_up(pl.npix, pl.chunk);
    const double group_bytes = 4.0 * p.ksp() * p.icg * p.ocg;
    const int64_t by_memory =
        std::max<int64_t>(1, int64_t(max_partial_bytes / (group_bytes * p.g)));
    // Slices beyond the first cost no more than the f32 copies of src and dst would: the
    // scratch stays within conv_problem::scratch_bound.
    const double data_bytes = 4.0 * p.mb * (double(p.ic()) * p.isp() + double(p.oc()) * p.osp());
    const int64_t by_data = 1 + int64_t(data_bytes / (group_bytes * p.g));
    pl.slices =
        std::max<int64_t>(1, std::min({div_up(target_items, p.g), pl.nchunks, by_memory, by_data}));
    // Rows an odd number of cache lines apart: diff_dst^T is written a column (pixel pair) at a
    // time, one element per row, and rows 4 KB apart (a 2048-pixel chunk) would all fall into
    // one L1 set; an odd line count spreads them over all sets (3x3 weight gradient 1.26x).
    pl.lda = div_up(padded_k(pl.chunk), 32) * 32;
    if ((pl.lda / 32) % 2 == 0) pl.lda += 32;
    pl.ldb = 2 * p.icg;
    pl.nthr = threads_for(p.macs());

    // The rows path: with more than one tap (one tap interleaves its pixels once anyway), when
    // a row fills at least 3/4 of its tile steps (K = a row: 14 pixels would use 14 of 32) and
    // its copy stays within the scratch bound.
    // K per unit: even, or a whole number of tile steps when that adds at most a quarter (a
    // row of 56 as 32 + 24 would reconfigure the tiles twice per call, for the tail).
    auto unit_k = [](int64_t n) {
        const int64_t steps = div_up(n, k_step) * k_step;
        return 4 * steps <= 5 * n ? steps : padded_k(n);
    };
    // The fraction of its tile steps a unit's useful K fills.
    auto fill = [](int64_t useful, int64_t k) {
        return double(useful) / double(div_up(k, k_step) * k_step);
    };
    const int64_t wq = p.o[2] + (p.k[2] - 1) * p.dl[2], plane_k = (p.o[1] - 1) * wq + p.o[2];
    // A plane's diff_dst^T (2 bytes x plane_k x ocg) within half of L2: a 112 x 112 plane of
    // 64 channels (1.6 MB) took 4.2 ms in ResNet-like weight gradients of 12 input channels
    // where rows took 2.7 (Xeon with AMX, 2 threads); 56 x 56 (0.4 MB) is faster as a plane.
    const bool plane = p.s[1] == 1 && p.o[1] > 1 && plane_k <= (int64_t(1) << 20) &&
                       2.0 * double(plane_k) * double(p.ocg) <= 0.5 * double(machine_caches().l2) &&
                       fill(p.o[1] * p.o[2], unit_k(plane_k)) > fill(p.o[2], unit_k(p.o[2]));
    const int64_t unit_len = plane ? plane_k : p.o[2];
    if (p.s[2] == 1 && p.ksp() > 1 &&
        4 * fill(plane ? p.o[1] * p.o[2] : p.o[2], unit_k(unit_len)) >= 3 &&
        unit_len <= (plane ? (int64_t(1) << 20) : 4096)) {
        pl.plane = plane;
        pl.wq = plane ? wq : 0;
        pl.hq = plane ? p.o[1] + (p.k[1] - 1) * p.dl[1] : 1;
        pl.owp = unit_k(unit_len);
        pl.rchunk = std::max<int64_t>(1, pl.chunk / pl.owp);
        pl.rnchunks = div_up(pl.nunits(), pl.rchunk);
        pl.rslices = std::max<int64_t>(1, std::min(pl.slices, pl.rnchunks));
        // Line elements [0, wl): a tap reads pairs from its offset (up to (k_h - 1) * dl_h * wq
        // + (k_w - 1) * dl_w) through owp more, in the odd alignment one further.
        const int64_t reach = (plane ? (p.k[1] - 1) * p.dl[1] * wq : 0) + (p.k[2] - 1) * p.dl[2];
        const int64_t wl = reach + pl.owp + 2;
        pl.np = wl / 2 + 1;
        pl.nicb = div_up(p.icg, ukernel_max_n);
        pl.rsteps = div_up(pl.owp, k_step);
        pl.rows = pl.rows_scratch_bytes() <= p.scratch_bound(pl.nthr);
    }

    // The folded path: few input channels and several w taps, when folding fills the tiles at
    // least as well as the pixel or rows path. ResNet-50's stem (3 channels, 7 taps, stride 2):
    // 21 of 32 columns and 112 of 128 K, against 3 of 16 columns. It also takes the rows
    // path's stride-1 problems of few channels, measured (2 threads, Xeon with AMX): 4-8
    // channels 3x3 at 112 x 112, 4.1-4.2 ms -> 1.3-1.4 (oneDNN 1.45); 8 channels 5x5 at 56 x 56,
    // 0.88 -> 0.70; 3 channels 3x3 at 224 x 224 (declined before) 5.8 -> 4.7.
    if (p.k[2] > 1 && p.icg < 16 && p.pb[2] >= 0) {
        const int64_t per = std::min<int64_t>(p.k[2], ukernel_max_n / p.icg);
        const int64_t njg = div_up(p.k[2], per), kq = div_up(p.k[2], njg);
        const double owp = double(div_up(p.o[2], k_step) * k_step);
        const double fill = step_fill(kq * p.icg, 16) * double(p.o[2]) / owp;
        // The pixels of a src row any group's taps read (in double: a stride of 2^60 fits
        // the problem, not a product of it).
        const double wp =
            double(p.o[2] - 1) * double(p.s[2]) + double(njg * kq - 1) * double(p.dl[2]) + 1.0;
        if (fill >= step_fill(p.icg, 16) && wp <= 65536.0 && owp <= 4096.0) {
            bwd_weights_plan f = pl;
            f.rows = f.plane = false;  // (nunits and nlines count rows, not planes)
            f.kq = kq;
            f.njg = njg;
            f.fold_wp = int64_t(wp);
            f.owp = int64_t(owp);
            f.rsteps = f.owp / k_step;
            f.rchunk = std::max<int64_t>(1, f.chunk / f.owp);
            f.rnchunks = div_up(f.nunits(), f.rchunk);
            f.rslices = std::max<int64_t>(1, std::min(f.slices, f.rnchunks));
            f.folded = f.folded_scratch_bytes() <= p.scratch_bound(f.nthr);
            if (f.folded) pl = f;
        }
    }
    return pl;
}

double bwd_weights_plan::folded_scratch_bytes() const {
    const double lines = double(nlines()) * fold_line() * 2;
    const double partials = 4.0 * rslices * p.g * p.ksp() * p.icg * p.ocg;
    const double per_thread = 2.0 * p.ocg * rchunk * rsteps * k_step + 24.0 * rchunk +
                              4.0 * p.k[0] * p.k[1] * njg * p.ocg * ukernel_max_n +
                              2.0 * fold_wp * p.icg + 4.0 * p.i[2] * p.icg + 4.0 * kq * p.icg +
                              (4.0 + 2.0 * 3) * std::max(p.icg, p.ocg);
    return lines + partials + nthr * per_thread;
}

double bwd_weights_plan::rows_scratch_bytes() const {
    const double lines = double(nlines()) * nicb * 2 * np * 64 * 2;
    const double partials = 4.0 * rslices * p.g * p.ksp() * p.icg * p.ocg;
    return lines + partials +
           nthr * (2.0 * p.ocg * rchunk * rsteps * k_step + 16.0 * rchunk +
                   (4.0 + 2.0 * 3) * std::max(p.icg, p.ocg));
}

namespace {

// The pixel path: K chunks of flattened output pixels, each tap's src pixels interleaved.
void run_pixels(const bwd_weights_plan &pl, const conv_args &args, float *partials) {
    const conv_problem &p = pl.p;
    const int64_t ksp = p.ksp(), wgroup = ksp * p.icg * p.ocg;
    const tap_split split(pl.slices, p.g, ksp);
    const int64_t items = split.items();

    parallel(
        pl.nthr,
        [&](int ithr, int nthr) {
            int64_t i0, i1;
            balance211(items, nthr, ithr, i0, i1);
            if (i0 >= i1) return;
            // A: diff_dst^T [ocg][pixels] of the chunk, packed once for all taps; A of a tap
            // that keeps only some pixels (their columns); B: one tap's src pixel pairs.
            scratch_buffer<uint16_t> a_full(size_t(p.ocg * pl.lda)), a_tap(size_t(p.ocg * pl.lda));
            scratch_buffer<uint16_t> b_tap(size_t(pl.lda / 2 * pl.ldb));
            scratch_buffer<int64_t> offs(size_t(2 * pl.chunk));
            scratch_buffer<uint8_t> inside(size_t(pl.chunk));
            pixel_slots px(p, pl.dot, pl.backend);
            int64_t *soff = offs.data(), *keep = soff + pl.chunk;
            const uint16_t *Ap = nullptr, *Bp = nullptr;
            ukernel_args a;
            a.lda = pl.lda;
            a.ldb = pl.ldb;
            a.ldc = p.icg;
            a.A = &Ap;
            a.B = &Bp;
            a.accumulate = true;
            for (int64_t item = i0; item < i1; ++item) {
                int64_t slice, g, tap0, tap1;
                split.decode(item, ksp, slice, g, tap0, tap1);
                float *C = partials + (slice * p.g + g) * wgroup;
                std::fill(C + tap0 * p.ocg * p.icg, C + tap1 * p.ocg * p.icg, 0.f);
                int64_t c0, c1;
                balance211(pl.nchunks, int(pl.slices), int(slice), c0, c1);
                for (int64_t c = c0; c < c1; ++c) {
                    const int64_t q0 = c * pl.chunk, K = std::min(q0 + pl.chunk, pl.npix) - q0;
                    // 1. diff_dst^T, two pixels (one 32-bit pair) per column pair.
                    bool finite = true;
                    {
                        pixel_walk w(p, q0);
                        pair_columns cols(px.ops, p.ocg, a_full.data(), pl.lda);
                        for (int64_t k = 0; k < K; k += 2) {
                            const int s = cols.slot();
                            const uint16_t *v0 =
                                px.view(args.dst, w.dst_offset(g), p.dst.c, p.ocg, s);
                            const uint16_t *v1 = px.zeros();  // the pad pixel of an odd count
                            w.next();
                            if (k + 1 < K) {
                                v1 = px.view(args.dst, w.dst_offset(g), p.dst.c, p.ocg, s + 1);
                                w.next();
                            }
                            finite = finite && px.ops.all_finite(v0, p.ocg, pl.dot) &&
                                     px.ops.all_finite(v1, p.ocg, pl.dot);
                            cols.add(v0, v1);
                        }
                        cols.flush();
                    }
                    for (int64_t t = tap0; t < tap1; ++t) {
                        const int64_t tap[3] = {t / (p.k[1] * p.k[2]), (t / p.k[2]) % p.k[1],
                                                t % p.k[2]};
                        // 2. The tap's source pixel of every output pixel, and which are inside.
                        int64_t nin = 0;
                        pixel_walk w(p, q0);
                        for (int64_t k = 0; k < K; ++k, w.next()) {
                            const bool in = w.src_offset(tap, g, soff[k]);
                            inside[size_t(k)] = in;
                            if (in) keep[nin++] = k;
                        }
                        if (nin == 0) continue;
                        // 3. Every pixel, the outside ones as zero rows of B, when that is
                        // exact (diff_dst finite: 0 * x = 0) and not mostly zeros; else only the
                        // inside pixels, A's columns picked out.
                        const bool all = nin == K || (finite && 2 * nin >= K);
                        const int64_t Kt = all ? K : nin;
                        for (int64_t j = 0; j < Kt; j += 2) {
                            const int64_t k0 = all ? j : keep[j];
                            const bool has1 = j + 1 < Kt;
                            const int64_t k1 = has1 ? (all ? j + 1 : keep[j + 1]) : 0;
                            const uint16_t *v0 = px.zeros(), *v1 = px.zeros();
                            if (inside[size_t(k0)])
                                v0 = px.view(args.src, soff[k0], p.src.c, p.icg, 0);
                            if (has1 && inside[size_t(k1)])
                                v1 = px.view(args.src, soff[k1], p.src.c, p.icg, 1);
                            px.ops.interleave(v0, v1, p.icg, b_tap.data() + (j / 2) * pl.ldb);
                        }
                        const uint16_t *A = a_full.data();
                        if (!all) {
                            for (int64_t oc = 0; oc < p.ocg; ++oc) {
                                const uint16_t *from = a_full.data() + oc * pl.lda;
                                uint16_t *to = a_tap.data() + oc * pl.lda;
                                for (int64_t j = 0; j < nin; ++j) to[j] = from[keep[j]];
                                if (nin & 1) to[nin] = 0;
                            }
                            A = a_tap.data();
                        }
                        // 4. dW^T[oc][ic] of the tap += A * B, in 32 x 32 blocks.
                        a.K = int(Kt);
                        float *Ct = C + t * p.ocg * p.icg;
                        for (int64_t m0 = 0; m0 < p.ocg; m0 += ukernel_max_m)
                            for (int64_t n0 = 0; n0 < p.icg; n0 += ukernel_max_n) {
                                Ap = A + m0 * pl.lda;
                                Bp = b_tap.data() + 2 * n0;
                                a.M = int(std::min<int64_t>(ukernel_max_m, p.ocg - m0));
                                a.N = int(std::min<int64_t>(ukernel_max_n, p.icg - n0));
                                a.C = Ct + m0 * p.icg + n0;
                                ukernel(pl.backend, pl.dot, a);
                            }
                    }
                }
            }
        },
        thread_tile_hooks(pl.backend));
}

// One tap (1x1 kernels) with fewer input than output channels: the transposed operand is src,
// the smaller one (A = src^T [ic][pixels], B = diff_dst pairs in 32-channel blocks, C = dW
// [ic][oc]), and since one tap has one set of inside pixels, K is just those pixels. The pixel
// path would transpose diff_dst, which buys nothing without other taps to share it with.
void run_one_tap(const bwd_weights_plan &pl, const conv_args &args, float *partials) {
    const conv_problem &p = pl.p;
    const int64_t wgroup = p.icg * p.ocg, items = pl.slices * p.g;
    const int64_t nocb = div_up(p.ocg, ukernel_max_n), bblk = pl.lda / 2 * 2 * ukernel_max_n;
    parallel(
        pl.nthr,
        [&](int ithr, int nthr) {
            int64_t i0, i1;
            balance211(items, nthr, ithr, i0, i1);
            if (i0 >= i1) return;
            scratch_buffer<uint16_t> a_panel(size_t(p.icg * pl.lda)), b_blocks(size_t(nocb * bblk));
            scratch_buffer<int64_t> offs(size_t(2 * pl.chunk));
            pixel_slots px(p, pl.dot, pl.backend);
            int64_t *soff = offs.data(), *doff = soff + pl.chunk;
            const uint16_t *Ap = nullptr, *Bp = nullptr;
            ukernel_args a;
            a.lda = pl.lda;
            a.ldb = 2 * ukernel_max_n;
            a.ldc = p.ocg;
            a.A = &Ap;
            a.B = &Bp;
            a.accumulate = true;
            for (int64_t item = i0; item < i1; ++item) {
                const int64_t slice = item / p.g, g = item % p.g;
                float *C = partials + item * wgroup;  // [icg][ocg]
                std::fill(C, C + wgroup, 0.f);
                int64_t c0, c1;
                balance211(pl.nchunks, int(pl.slices), int(slice), c0, c1);
                for (int64_t c = c0; c < c1; ++c) {
                    const int64_t q0 = c * pl.chunk, K = std::min(q0 + pl.chunk, pl.npix) - q0;
                    int64_t nin = 0;
                    pixel_walk w(p, q0);
                    const int64_t tap0[3] = {0, 0, 0};
                    for (int64_t k = 0; k < K; ++k, w.next()) {
                        if (!w.src_offset(tap0, g, soff[nin])) continue;
                        doff[nin++] = w.dst_offset(g);
                    }
                    if (nin == 0) continue;
                    pair_columns cols(px.ops, p.icg, a_panel.data(), pl.lda);
                    for (int64_t j = 0; j < nin; j += 2) {
                        const bool has1 = j + 1 < nin;
                        // diff_dst pairs, [oc block][pair][32][2] (staged in the last slots,
                        // which a block of src pairs never reaches: it is written out first)
                        const int last = pixel_slots::slots - 2;
                        const uint16_t *w0 = px.view(args.dst, doff[j], p.dst.c, p.ocg, last);
                        const uint16_t *w1 =
                            has1 ? px.view(args.dst, doff[j + 1], p.dst.c, p.ocg, last + 1)
                                 : px.zeros();
                        for (int64_t ob = 0; ob < nocb; ++ob) {
                            const int64_t n0 = ob * ukernel_max_n;
                            px.ops.interleave(
                                w0 + n0, w1 + n0, std::min<int64_t>(ukernel_max_n, p.ocg - n0),
                                b_blocks.data() + ob * bblk + (j / 2) * 2 * ukernel_max_n);
                        }
                        // src^T, a pixel pair per 32 bits (the pad pixel of an odd count zero)
                        const int s = cols.slot();
                        const uint16_t *v0 = px.view(args.src, soff[j], p.src.c, p.icg, s);
                        const uint16_t *v1 =
                            has1 ? px.view(args.src, soff[j + 1], p.src.c, p.icg, s + 1)
                                 : px.zeros();
                        cols.add(v0, v1);
                    }
                    cols.flush();
                    a.K = int(nin);
                    for (int64_t m0 = 0; m0 < p.icg; m0 += ukernel_max_m)
                        for (int64_t ob = 0; ob < nocb; ++ob) {
                            Ap = a_panel.data() + m0 * pl.lda;
                            Bp = b_blocks.data() + ob * bblk;
                            a.M = int(std::min<int64_t>(ukernel_max_m, p.icg - m0));
                            a.N = int(std::min<int64_t>(ukernel_max_n, p.ocg - ob * ukernel_max_n));
                            a.C = C + m0 * p.ocg + ob * ukernel_max_n;
                            ukernel(pl.backend, pl.dot, a);
                        }
                }
            }
        },
        thread_tile_hooks(pl.backend));
}

}  // namespace

// The sums run over contiguous elements and the stores by rows of channels through row_io
// (vector code): element by element, with the slices' strides, they took a twentieth of
// ResNet-50's 3x3 weight gradient.
void bww::store_sums(const bwd_weights_plan &pl, const conv_args &args, float *partials,
                     int64_t slices, bool ic_major) {
    const conv_problem &p = pl.p;
    const int64_t ksp = p.ksp(), wgroup = ksp * p.icg * p.ocg, total = p.g * wgroup;
    if (slices > 1)
        parallel(pl.nthr, [&](int ithr, int nthr) {
            int64_t e0, e1;
            balance211(total, nthr, ithr, e0, e1);
            for (int64_t s = 1; s < slices; ++s) {
                const float *from = partials + s * total;
                for (int64_t e = e0; e < e1; ++e) partials[e] += from[e];
            }
        });
    // The first slice by rows along the weights' contiguous axis: rows of oc for XIO weights
    // (gathered from [oc][ic] partials), of ic for OIX ones. (Rows across it wrote every element
    // to another cache line: a fifth of ResNet-50's res4 3x3 weight gradient.)
    const weights_layout &l = p.wei;
    const bool oc_rows = ic_major || l.oc == 1 || l.ic != 1;
    const int64_t rows = oc_rows ? p.g * ksp * p.icg : p.g * ksp * p.ocg;
    const int64_t len = oc_rows ? p.ocg : p.icg;
    const row_io io = row_io::here();
    parallel(pl.nthr, [&](int ithr, int nthr) {
        int64_t r0, r1;
        balance211(rows, nthr, ithr, r0, r1);
        scratch_buffer<float> row(size_t(r1 > r0 && oc_rows && !ic_major ? p.ocg : 0));
        for (int64_t r = r0; r < r1; ++r) {
            const int64_t across = oc_rows ? p.icg : p.ocg;
            const int64_t i = r % across, t = (r / across) % ksp, g = r / (across * ksp);
            const int64_t ic = oc_rows ? i : 0, oc = oc_rows ? 0 : i;
            const int64_t kd = t / (p.k[1] * p.k[2]), kh = (t / p.k[2]) % p.k[1], kw = t % p.k[2];
            const int64_t base =
                (g * p.ocg + oc) * l.oc + ic * l.ic + kd * l.sp[0] + kh * l.sp[1] + kw * l.sp[2];
            const float *v = partials + r * len;  // [g][ic][oc] (one tap), or [g][t][oc][ic]
            if (oc_rows && !ic_major) {
                const float *col = partials + (g * ksp + t) * p.ocg * p.icg + ic;
                for (int64_t o = 0; o < p.ocg; ++o) row[size_t(o)] = col[o * p.icg];
                v = row.data();
            }
            io.store_out(p.dt, args.out, base, oc_rows ? l.oc : l.ic, v, nullptr, len, nullptr);
        }
    });
}

void bww::dst_unit_steps(const conv_problem &p, const conv_args &args, pixel_slots &px, int64_t d0,
                         int64_t rows, int64_t wq, int64_t steps, uint16_t *out) {
    // Element e of the unit, or zeros in the columns past o_w and past the unit (up to its
    // steps).
    auto pixel = [&](int64_t e, int slot) -> const uint16_t * {
        int64_t oh = 0, ow = e;
        if (wq > 0) oh = e / wq, ow = e % wq;
        if (oh >= rows || ow >= p.o[2]) return px.zeros();
        return px.view(args.dst, d0 + oh * p.dst.sp[1] + ow * p.dst.sp[2], p.dst.c, p.ocg, slot);
    };
    for (int64_t st = 0; st < steps; ++st) {
        pair_columns cols(px.ops, p.ocg, out + st * p.ocg * k_step, k_step);
        for (int64_t e = st * k_step; e < (st + 1) * k_step; e += 2) {
            const int s = cols.slot();
            cols.add(pixel(e, s), pixel(e + 1, s + 1));
        }
        cols.flush();
    }
}

namespace {

// This thread's part (of nthr) of diff_dst holds no infinity or NaN in the tiles' type.
bool dst_part_finite(const bwd_weights_plan &pl, const conv_args &args, pixel_slots &px, int ithr,
                     int nthr) {
    const conv_problem &p = pl.p;
    const data_type tile_dt = pl.dot == amx_dot::bf16 ? data_type::bf16 : data_type::f16;
    const bool direct_dst = p.dt == tile_dt && p.dst.c == 1;
    bool ok = true;
    int64_t q0, q1;
    if (direct_dst) {  // rows of diff_dst read in place, a row per call
        const int64_t nrows = p.mb * p.o[0] * p.o[1];
        balance211(nrows, nthr, ithr, q0, q1);
        for (int64_t q = q0; q < q1 && ok; ++q) {
            const int64_t oh = q % p.o[1], od = (q / p.o[1]) % p.o[0], n = q / (p.o[1] * p.o[0]);
            for (int64_t g = 0; g < p.g && ok; ++g)
                ok =
                    px.ops.all_finite_pixels(static_cast<const uint16_t *>(args.dst) + n * p.dst.n +
                                                 od * p.dst.sp[0] + oh * p.dst.sp[1] + g * p.ocg,
                                             p.o[2], p.dst.sp[2], p.ocg, pl.dot);
        }
    } else {
        balance211(p.mb * p.osp(), nthr, ithr, q0, q1);
        if (q0 < q1) {
            pixel_walk w(p, q0);
            for (int64_t q = q0; q < q1 && ok; ++q, w.next())
                for (int64_t g = 0; g < p.g && ok; ++g) {
                    const uint16_t *v = px.view(args.dst, w.dst_offset(g), p.dst.c, p.ocg, 0);
                    ok = px.ops.all_finite(v, p.ocg, pl.dot);
                }
        }
    }
    return ok;
}

// The rows path (bwd_weights_plan::rows). Returns false, having written nothing to the
// weights, when src or diff_dst holds an infinity or NaN: padding joins its sums as zero
// products, exact only for finite data, and the pixel path leaves padding out instead.
bool run_rows(const bwd_weights_plan &pl, const conv_args &args) {
    const conv_problem &p = pl.p;
    const int64_t ksp = p.ksp(), wgroup = ksp * p.icg * p.ocg;
    const int64_t blk = 2 * pl.np * 2 * ukernel_max_n;  // a 32-channel block of a line
    const int64_t line = pl.nicb * blk, nlines = pl.nlines();
    scratch_buffer<uint16_t> lines(size_t(nlines * line));
    std::atomic<bool> finite{true};

    // 1. src as lines of pixel pairs, [g][n][d][h][ic block][alignment][pair][32][2] (planes:
    // [g][n][d][..]): element x (src w = x - pb, zero outside; planes: row x / wq, h = that row
    // - pb_h, w = x % wq - pb_w) at pair x / 2 of the even alignment and (x - 1) / 2 of the odd
    // one. And the finiteness of src and diff_dst.
    const int64_t line_rows = pl.plane ? 1 : p.i[1];  // src rows per (g, n, d) of lines
    // Tensors of the tiles' type with contiguous channels are read in place (pixel_slots::view)
    // and checked for finiteness a row of pixels per call, not a pixel per call.
    const data_type tile_dt = pl.dot == amx_dot::bf16 ? data_type::bf16 : data_type::f16;
    const bool direct_src = p.dt == tile_dt && p.src.c == 1;
    parallel(pl.nthr, [&](int ithr, int nthr) {
        pixel_slots px(p, pl.dot, pl.backend);
        bool ok = true;
        int64_t l0, l1;
        balance211(nlines, nthr, ithr, l0, l1);
        for (int64_t l = l0; l < l1; ++l) {
            const int64_t ih0 = l % line_rows, id = (l / line_rows) % p.i[0],
                          n = (l / (line_rows * p.i[0])) % p.mb,
                          g = l / (line_rows * p.i[0] * p.mb);
            uint16_t *out = lines.data() + l * line;
            const int64_t base0 = n * p.src.n + id * p.src.sp[0] + g * p.icg * p.src.c;
            // Element x's channels (zeros outside the image), converted at most once: x is
            // visited in order and each pair needs x and x + 1.
            const uint16_t *v[2] = {px.zeros(), px.zeros()};
            auto element = [&](int64_t x, int slot) -> const uint16_t * {
                int64_t ih = ih0, iw = x - p.pb[2];
                if (pl.plane) {
                    const int64_t r = x / pl.wq;
                    if (r >= pl.hq) return px.zeros();
                    ih = r - p.pb[1], iw = x % pl.wq - p.pb[2];
                }
                if (ih < 0 || ih >= p.i[1] || iw < 0 || iw >= p.i[2]) return px.zeros();
                const uint16_t *e = px.view(args.src, base0 + ih * p.src.sp[1] + iw * p.src.sp[2],
                                            p.src.c, p.icg, slot);
                if (!direct_src) ok = ok && px.ops.all_finite(e, p.icg, pl.dot);
                return e;
            };
            // Read in place, the line's src rows are checked a row per call below.
            if (direct_src)
                for (int64_t ih = pl.plane ? 0 : ih0; ih < (pl.plane ? p.i[1] : ih0 + 1); ++ih)
                    ok = ok && px.ops.all_finite_pixels(static_cast<const uint16_t *>(args.src) +
                                                            base0 + ih * p.src.sp[1],
                                                        p.i[2], p.src.sp[2], p.icg, pl.dot);
            // Pair j of the even alignment holds (x, x + 1) = (2j, 2j + 1); of the odd one
            // (2j + 1, 2j + 2).
            v[0] = element(0, 0);
            for (int64_t x = 0; x < 2 * pl.np; ++x) {
                v[(x + 1) & 1] = element(x + 1, int((x + 1) & 1));
                const uint16_t *lo = v[x & 1], *hi = v[(x + 1) & 1];
                const int64_t pair = (x & 1) ? pl.np + (x - 1) / 2 : x / 2;
                for (int64_t icb = 0; icb < pl.nicb; ++icb) {
                    uint16_t *dst = out + icb * blk + pair * 2 * ukernel_max_n;
                    const int64_t c0 = icb * ukernel_max_n;
                    const int64_t nc = std::min<int64_t>(ukernel_max_n, p.icg - c0);
                    px.ops.interleave(lo + c0, hi + c0, nc, dst);
                    std::fill(dst + 2 * nc, dst + 2 * ukernel_max_n, uint16_t(0));
                }
            }
        }
        ok = ok && dst_part_finite(pl, args, px, ithr, nthr);
        if (!ok) finite = false;
    });
    if (!finite) return false;

    // 2. Per (slice, group): chunks of units (output rows, or planes); per chunk diff_dst^T,
    // then per tap one brgemm per 32 x 32 block over the units whose src line is inside (K = a
    // unit).
    scratch_buffer<float> partials(size_t(pl.rslices * p.g * wgroup));  // [tap][ocg][icg]
    const tap_split split(pl.rslices, p.g, ksp);
    const int64_t items = split.items(), nrows = pl.nunits();
    const int64_t unit_rows = pl.plane ? p.o[1] : 1;  // output rows per unit
    parallel(
        pl.nthr,
        [&](int ithr, int nthr) {
            int64_t i0, i1;
            balance211(items, nthr, ithr, i0, i1);
            if (i0 >= i1) return;
            // diff_dst^T in tile steps: [row][step][oc][32 pixels], so that each step's A tile
            // is 1 KB in one piece (as rows of one panel, [oc][chunk pixels], a tile's 16 rows
            // were 8 KB apart: 16 pages a tile, ResNet-50's 3x3 weight gradient 1.5x slower).
            const int64_t a_block = p.ocg * k_step;
            scratch_buffer<uint16_t> a_rows(size_t(pl.rchunk * pl.rsteps * a_block));
            scratch_buffer<const uint16_t *> ptrs(size_t(2 * pl.rchunk));
            scratch_buffer<int64_t> line_of(size_t(pl.rchunk)), a_off(size_t(pl.rchunk));
            pixel_slots px(p, pl.dot, pl.backend);
            const uint16_t **A = ptrs.data(), **B = A + pl.rchunk;
            ukernel_args a;
            a.K = int(pl.owp);
            a.lda = k_step;
            a.a_block = a_block;
            a.ldb = 2 * ukernel_max_n;
            a.ldc = p.icg;
            a.A = A;
            a.B = B;
            a.accumulate = true;
            for (int64_t item = i0; item < i1; ++item) {
                int64_t slice, g, tap0, tap1;
                split.decode(item, ksp, slice, g, tap0, tap1);
                float *C = partials.data() + (slice * p.g + g) * wgroup;
                std::fill(C + tap0 * p.ocg * p.icg, C + tap1 * p.ocg * p.icg, 0.f);
                int64_t c0, c1;
                balance211(pl.rnchunks, int(pl.rslices), int(slice), c0, c1);
                for (int64_t c = c0; c < c1; ++c) {
                    const int64_t row0 = c * pl.rchunk, R = std::min(pl.rchunk, nrows - row0);
                    for (int64_t r = 0; r < R; ++r) {  // diff_dst^T, pixel pairs per 32 bits
                        // The unit's first row (n, od, oh0); a plane's rows are wq apart.
                        const int64_t f = (row0 + r) * unit_rows;  // (n, od, oh0) flattened
                        const int64_t oh0 = f % p.o[1], od = (f / p.o[1]) % p.o[0],
                                      n = f / (p.o[1] * p.o[0]);
                        const int64_t d0 = n * p.dst.n + od * p.dst.sp[0] + oh0 * p.dst.sp[1] +
                                           g * p.ocg * p.dst.c;
                        bww::dst_unit_steps(p, args, px, d0, unit_rows, pl.plane ? pl.wq : 0,
                                            pl.rsteps, a_rows.data() + r * pl.rsteps * a_block);
                    }
                    for (int64_t t = tap0; t < tap1; ++t) {
                        const int64_t kd = t / (p.k[1] * p.k[2]), kh = (t / p.k[2]) % p.k[1],
                                      kw = t % p.k[2];
                        // The line element of the unit's element 0 (rows: ow = 0; planes: also
                        // oh = 0, the taps' rows being rows of the line).
                        const int64_t x0 = kw * p.dl[2] + (pl.plane ? kh * p.dl[1] * pl.wq : 0);
                        const int64_t align = x0 & 1, pair0 = align ? (x0 - 1) / 2 : x0 / 2;
                        int nb = 0;
                        for (int64_t r = 0; r < R; ++r) {
                            const int64_t f = (row0 + r) * unit_rows;  // (n, od, oh) flattened
                            const int64_t oh = f % p.o[1], od = (f / p.o[1]) % p.o[0],
                                          n = f / (p.o[1] * p.o[0]);
                            const int64_t id = od * p.s[0] + kd * p.dl[0] - p.pb[0],
                                          ih = oh * p.s[1] + kh * p.dl[1] - p.pb[1];
                            if (id < 0 || id >= p.i[0]) continue;
                            if (!pl.plane && (ih < 0 || ih >= p.i[1])) continue;
                            a_off[size_t(nb)] = r * pl.rsteps * a_block;
                            const int64_t l =
                                ((g * p.mb + n) * p.i[0] + id) * line_rows + (pl.plane ? 0 : ih);
                            line_of[size_t(nb++)] =
                                l * line + (align * pl.np + pair0) * 2 * ukernel_max_n;
                        }
                        if (nb == 0) continue;
                        a.batch = nb;
                        float *Ct = C + t * p.ocg * p.icg;
                        for (int64_t m0 = 0; m0 < p.ocg; m0 += ukernel_max_m)
                            for (int64_t icb = 0; icb < pl.nicb; ++icb) {
                                const int64_t n0 = icb * ukernel_max_n;
                                for (int b = 0; b < nb; ++b) {
                                    A[b] = a_rows.data() + m0 * k_step + a_off[size_t(b)];
                                    B[b] = lines.data() + line_of[size_t(b)] + icb * blk;
                                }
                                a.M = int(std::min<int64_t>(ukernel_max_m, p.ocg - m0));
                                a.N = int(std::min<int64_t>(ukernel_max_n, p.icg - n0));
                                a.C = Ct + m0 * p.icg + n0;
                                ukernel(pl.backend, pl.dot, a);
                            }
                    }
                }
            }
        },
        thread_tile_hooks(pl.backend));
    store_sums(pl, args, partials.data(), pl.rslices);
    return true;
}

}  // namespace

void run_bwd_weights(const bwd_weights_plan &pl, const conv_args &args) {
    if (pl.rows && run_rows(pl, args)) return;
    if (pl.folded && bww::run_folded(pl, args)) return;
    const conv_problem &p = pl.p;
    scratch_buffer<float> partials(size_t(pl.slices * p.g * p.ksp() * p.icg * p.ocg));
    const bool one_tap = p.ksp() == 1 && p.icg < p.ocg;
    if (one_tap)
        run_one_tap(pl, args, partials.data());
    else
        run_pixels(pl, args, partials.data());
    store_sums(pl, args, partials.data(), pl.slices, one_tap);
}

}  // namespace convgrad::detail::amx
