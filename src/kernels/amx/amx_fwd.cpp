#include "kernels/amx/amx_fwd.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>

#include "core/float_convert.hpp"
#include "kernels/amx/amx_blocking.hpp"
#include "kernels/amx/amx_bwd_weights.hpp"  // amx_dot_of
#include "kernels/amx/amx_elements.hpp"
#include "kernels/amx/amx_pipeline.hpp"
#include "kernels/amx/amx_rows.hpp"
#include "kernels/plan/cache_sizes.hpp"
#include "ref/ref_conv.hpp"
#include "threading/parallel.hpp"
#include "threading/scratch_cache.hpp"

namespace convgrad::detail::amx {
namespace {

int64_t div_up(int64_t a, int64_t b) {
    return (a + b - 1) / b;
}

}  // namespace

double fwd_plan::scratch_bytes() const {
    const double ksp = double(p.ksp());
    const double ocb = double(div_up(p.ocg, ukernel_max_n) * ukernel_max_n);
    return 2.0 * p.g * p.mb * ip[0] * ip[1] * ip[2] * icp + 2.0 * p.g * ksp * icp * ocb +
           nthr * 16.0 * ksp;
}

fwd_plan plan_fwd(const conv_problem &p, amx_backend backend) {
    fwd_plan pl;
    pl.p = p;
    pl.backend = backend;
    if (!amx_dot_of(p, pl.dot).empty() || p.dir != conv_direction::fwd)
        throw error(status::invalid_arguments, "AMX forward: not a bf16/f16 forward problem");
    for (int x = 0; x < 3; ++x) {
        // The last tap of the last output pixel, and the last source pixel, both inside.
        const int64_t reach = (p.o[x] - 1) * p.s[x] + (p.k[x] - 1) * p.dl[x] + 1;
        pl.ip[x] = std::max(reach, p.pb[x] + p.i[x]);
    }
    pl.icp = padded_k(p.icg);
    // Undilated w taps read consecutive pixels of the padded copy, and their VNNI weights
    // follow each other in the pack: one K run of k_w * icp elements covers them all, so a
    // 3-channel 7x7 stem fills 28 of a tile step's 32 K elements instead of 4 of them, 7 times.
    pl.fold = p.dl[2] == 1 && p.k[2] * pl.icp <= (1 << 20) ? p.k[2] : 1;
    pl.wruns = div_up(p.o[2], ukernel_max_m);
    // Rows of at most 16 pixels go two to a call, one per tile row, so that each B tile serves
    // two products: ResNet-50's 14-pixel res4 rows used one tile row, and loaded a 1 KB B tile
    // from L2 per product.
    pl.hrows = p.o[2] <= 16 && p.o[1] >= 2 ? 2 : 1;
    pl.nthr = threads_for(p.macs());
    const data_type tile_dt = pl.dot == amx_dot::bf16 ? data_type::bf16 : data_type::f16;
    pl.reads_padding = p.reads_padding();  // (no pad before, no tap past the end)
    const bool inside = !pl.reads_padding;
    pl.in_place = p.dt == tile_dt && p.src.c == 1 && p.icg % 2 == 0 && inside &&
                  (pl.fold == 1 || p.src.sp[2] == p.icg);
    pl.blocks_outer = channel_blocks_outer(
        2.0 * p.ksp() * pl.icp * p.ocg, 2.0 * p.mb * pl.ip[0] * pl.ip[1] * pl.ip[2] * pl.icp,
        p.mb * p.o[0] * div_up(p.o[1], pl.hrows) * pl.wruns, div_up(p.ocg, ukernel_max_n));
    return pl;
}

void run_fwd(const fwd_plan &pl, const conv_args &args) {
    const conv_problem &p = pl.p;
    // Weights in 32-column blocks of VNNI pairs (amx_blocking.hpp).
    const int64_t ksp = p.ksp(), ldb = 2 * ukernel_max_n, tap_b = pl.icp / 2 * ldb;
    const int64_t nblk = div_up(p.ocg, ukernel_max_n);
    const int64_t row = pl.ip[2] * pl.icp, plane = pl.ip[1] * row, image = pl.ip[0] * plane;
    const bool in_place = pl.in_place && reinterpret_cast<uintptr_t>(args.src) % 64 == 0 &&
                          (p.src.sp[2] * 2) % 64 == 0 && (p.g == 1 || (p.icg * 2) % 64 == 0);
    // Without blocks outside, the copy is made a band of rows at a time by the thread that
    // computes the band, into its own buffer: it stays in L2 for the products. (Copied whole
    // before the products, it went out to memory and came back: a fifth of ResNet-50's 3x3
    // forward.) A band is one (group, image, d) of dst rows, or part of one, so that the
    // threads have four or more bands each where there are enough rows; their halo rows are
    // copied twice.
    const int64_t hblocks = div_up(p.o[1], pl.hrows);
    const int64_t planes = p.g * p.mb * p.o[0];  // (group, image, d) of dst
    const bool banded = !in_place && !pl.blocks_outer;
    int64_t bh = hblocks;  // hblocks per band
    if (banded) {
        const double row_bytes = 2.0 * double(row) * ((p.k[0] - 1) * p.dl[0] + 1);
        const double budget = 0.25 * double(machine_caches().l2);
        const int64_t per_plane = std::max<int64_t>(
            div_up(4 * pl.nthr, planes), int64_t(std::ceil(row_bytes * double(pl.ip[1]) / budget)));
        bh = div_up(hblocks, std::min(per_plane, hblocks));
    }
    const int64_t hbands = div_up(hblocks, bh), bands = planes * hbands;
    // Rows of a band's copy: its dst rows' reach along h.
    const int64_t band_rows =
        std::min<int64_t>(pl.ip[1], (bh * pl.hrows - 1) * p.s[1] + (p.k[1] - 1) * p.dl[1] + 1);
    const int64_t band_planes = (p.k[0] - 1) * p.dl[0] + 1;
    const int64_t band_plane = band_rows * row;
    scratch_buffer<uint16_t> xsrc(size_t(in_place || banded ? 0 : p.g * p.mb * image));
    scratch_buffer<uint16_t> wpack(size_t(p.g * nblk * ksp * tap_b));
    scratch_buffer<float> bias(size_t(p.with_bias ? p.g * p.ocg : 0));
    if (p.with_bias) load_elements(p.dt, args.bias, p.bias_stride, p.g * p.ocg, bias.data());
    const row_io io = row_io::here();
    // A whole src row converts in one call when its pixels' channels follow each other.
    const bool dense_rows = p.g == 1 && pl.icp == p.icg && p.src.c == 1 && p.src.sp[2] == p.icg;
    // Row (dp, hp) of the padded copy of (g, n): zeros around and in the pad channel. `tmp`
    // holds i_w * icg floats (dense rows) or icg.
    auto copy_row = [&](uint16_t *out, int64_t g, int64_t n, int64_t dp, int64_t hp, float *tmp) {
        std::fill(out, out + row, uint16_t(0));
        const int64_t id = dp - p.pb[0], ih = hp - p.pb[1];
        if (id < 0 || id >= p.i[0] || ih < 0 || ih >= p.i[1]) return;
        io.copy_line(p.dt, args.src, n * p.src.n + id * p.src.sp[0] + ih * p.src.sp[1], p.src.sp[2],
                     p.src.c, p.i[2], g * p.icg, p.icg, dense_rows, p.pb[2], pl.icp, pl.dot, out,
                     tmp);
    };
    const size_t tmp_floats = size_t((dense_rows ? p.i[2] : 1) * p.icg);

    // 1. The padded copy of src, unless banded or read in place, and the VNNI weights.
    std::atomic<bool> finite_weights{true};
    const int64_t rows = in_place || banded ? 0 : p.g * p.mb * pl.ip[0] * pl.ip[1];
    parallel(pl.nthr, [&](int ithr, int nthr) {
        int64_t r0, r1;
        balance211(rows, nthr, ithr, r0, r1);
        scratch_buffer<float> tmp(r1 > r0 ? tmp_floats : 0);
        for (int64_t r = r0; r < r1; ++r) {
            const int64_t hp = r % pl.ip[1], dp = (r / pl.ip[1]) % pl.ip[0];
            const int64_t n = (r / (pl.ip[1] * pl.ip[0])) % p.mb,
                          g = r / (pl.ip[1] * pl.ip[0] * p.mb);
            copy_row(xsrc.data() + r * row, g, n, dp, hp, tmp.data());
        }
        int64_t t0, t1;
        balance211(p.g * ksp, nthr, ithr, t0, t1);
        for (int64_t gt = t0; gt < t1; ++gt) {
            pack_tap_weights(p, args.wei, pl.dot, false, gt / ksp, gt % ksp, pl.icp, wpack.data(),
                             pair_ops_for(pl.backend));
            if (pl.reads_padding && !packed_tap_finite(wpack.data(), gt, ksp, nblk, tap_b, pl))
                finite_weights.store(false, std::memory_order_relaxed);
        }
    });
    if (!finite_weights.load()) return ref_conv_execute(p, args);

    // 2. Per (group, image, dst row, w run): all oc blocks, each one brgemm over the taps. Each
    // call's C is rounded and stored during the next call (amx_pipeline.hpp).
    const int64_t items = planes * hblocks * pl.wruns;
    const int64_t units = pl.blocks_outer ? nblk * items : items;
    const int64_t nb = ksp / pl.fold;  // batch items: taps, or (kd, kh) when folded
    const int K = int(pl.fold > 1 ? pl.fold * pl.icp : p.icg);
    // A: the padded copy, [g][n][d][h][w][icp], a band's copy [d][h][w][icp] (from its first
    // row), or src itself; elements between pixels along each axis, and the offset of each batch
    // item's tap.
    const int64_t a_n = in_place ? p.src.n : image, a_g = in_place ? p.icg : p.mb * image;
    const int64_t a_sp[3] = {in_place ? p.src.sp[0]
                             : banded ? band_plane
                                      : plane,
                             in_place ? p.src.sp[1] : row, in_place ? p.src.sp[2] : pl.icp};
    scratch_buffer<int64_t> a_tap{size_t(nb)}, b_tap{size_t(nb)};
    for (int64_t b = 0; b < nb; ++b) {
        const int64_t t = b * pl.fold;
        const int64_t kd = t / (p.k[1] * p.k[2]), kh = (t / p.k[2]) % p.k[1], kw = t % p.k[2];
        a_tap[size_t(b)] = kd * p.dl[0] * a_sp[0] + kh * p.dl[1] * a_sp[1] + kw * p.dl[2] * a_sp[2];
        b_tap[size_t(b)] = t * tap_b;
    }
    // Rows of A are output pixels s apart; with one output pixel per row the stride may be
    // anything (2^62: its product with the channels would overflow) and is not used.
    const int64_t lda = p.o[2] > 1 ? p.s[2] * a_sp[2] : pl.icp;
    parallel(
        pl.nthr,
        [&](int ithr, int nthr) {
            // Work: whole bands when banded, else units.
            int64_t i0, i1;
            balance211(banded ? bands : units, nthr, ithr, i0, i1);
            if (i0 >= i1) return;
            scratch_buffer<uint16_t> band(size_t(banded ? band_planes * band_plane : 0));
            scratch_buffer<float> tmp(banded ? tmp_floats : 0);
            scratch_buffer<const uint16_t *> ptrs(size_t(2 * nb));
            const uint16_t **A = ptrs.data(), **B = A + nb;
            c_pipeline pipe(pl.backend, pl.dot);
            ukernel_args a;
            a.K = K;
            a.batch = int(nb);
            a.a_rows_overlap = true;  // a folded window is wider than the step between pixels
            a.A = A;
            a.B = B;
            a.lda = lda;
            a.ldb = ldb;
            // The units [v0, v1) (items, or blocks and items), A's first row at a_first for
            // dst row oh_first of each (g, n, od) (a band's copy), or from the whole copy.
            auto units_of = [&](int64_t v0, int64_t v1, const uint16_t *band_a, int64_t oh_first) {
                for (int64_t unit = v0; unit < v1; ++unit) {
                    const int64_t item = pl.blocks_outer ? unit % items : unit;
                    const int64_t blk0 = pl.blocks_outer ? unit / items : 0,
                                  blk1 = pl.blocks_outer ? blk0 + 1 : nblk;
                    int64_t r = item;
                    const int64_t run = r % pl.wruns;
                    r /= pl.wruns;
                    const int64_t oh = r % hblocks * pl.hrows;
                    r /= hblocks;
                    const int64_t od = r % p.o[0];
                    r /= p.o[0];
                    const int64_t n = r % p.mb, g = r / p.mb;
                    const int64_t ow0 = run * ukernel_max_m;
                    a.M = int(std::min<int64_t>(ukernel_max_m, p.o[2] - ow0));
                    const bool two_rows = pl.hrows == 2 && oh + 1 < p.o[1];
                    // (the second row's A: s_h source rows on; its C rows from 16 on)
                    a.m0 = two_rows ? a.M : 0;
                    a.a1_offset = two_rows ? p.s[1] * a_sp[1] : 0;
                    if (two_rows) a.M *= 2;
                    const uint16_t *const a0 =
                        band_a
                            ? band_a + (oh - oh_first) * p.s[1] * a_sp[1] + ow0 * p.s[2] * a_sp[2]
                            : (in_place ? static_cast<const uint16_t *>(args.src) : xsrc.data()) +
                                  g * a_g + n * a_n + od * p.s[0] * a_sp[0] +
                                  oh * p.s[1] * a_sp[1] + ow0 * p.s[2] * a_sp[2];
                    for (int64_t b = 0; b < nb; ++b) A[b] = a0 + a_tap[size_t(b)];
                    for (int64_t oc0 = blk0 * ukernel_max_n;
                         oc0 < blk1 * ukernel_max_n && oc0 < p.ocg; oc0 += ukernel_max_n) {
                        a.N = int(std::min<int64_t>(ukernel_max_n, p.ocg - oc0));
                        const uint16_t *const b0 =
                            wpack.data() + (g * nblk + oc0 / ukernel_max_n) * ksp * tap_b;
                        for (int64_t b = 0; b < nb; ++b) B[b] = b0 + b_tap[size_t(b)];
                        const int64_t oc = g * p.ocg + oc0;
                        c_rows to;  // dst pixels ow0 + m, channels [oc, oc + N)
                        to.cols = a.N;
                        to.bias = p.with_bias ? bias.data() + oc : nullptr;
                        to.dt = p.dt;
                        to.out = args.out;
                        to.base = n * p.dst.n + od * p.dst.sp[0] + oh * p.dst.sp[1] +
                                  ow0 * p.dst.sp[2] + oc * p.dst.c;
                        to.row_stride = p.dst.sp[2];
                        to.col_stride = p.dst.c;
                        to.base1 = to.base + p.dst.sp[1];  // (the second row, when two_rows)
                        pipe.run(a, to);
                    }
                }
            };
            if (!banded) units_of(i0, i1, nullptr, 0);
            for (int64_t bi = i0; banded && bi < i1; ++bi) {
                // Band bi: hblocks [hb0, hb1) of plane bi / hbands = (g, n, od).
                const int64_t pi = bi / hbands, hb0 = bi % hbands * bh,
                              hb1 = std::min(hblocks, hb0 + bh);
                const int64_t od = pi % p.o[0], n = (pi / p.o[0]) % p.mb, g = pi / (p.o[0] * p.mb);
                // Its rows: dst rows from hb0 * hrows, src rows from there * s_h (padded).
                const int64_t oh_first = hb0 * pl.hrows, hp0 = oh_first * p.s[1];
                for (int64_t kd = 0; kd < band_planes; ++kd)
                    for (int64_t h = 0; h < band_rows && hp0 + h < pl.ip[1]; ++h)
                        copy_row(band.data() + kd * band_plane + h * row, g, n, od * p.s[0] + kd,
                                 hp0 + h, tmp.data());
                units_of((pi * hblocks + hb0) * pl.wruns, (pi * hblocks + hb1) * pl.wruns,
                         band.data(), oh_first);
            }
            pipe.flush();
        },
        thread_tile_hooks(pl.backend));
}

}  // namespace convgrad::detail::amx
