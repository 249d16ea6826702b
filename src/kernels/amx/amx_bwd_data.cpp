#include "kernels/amx/amx_bwd_data.hpp"

#include <algorithm>
#include <atomic>

#include "core/float_convert.hpp"
#include "kernels/amx/amx_blocking.hpp"
#include "kernels/amx/amx_bwd_weights.hpp"  // amx_dot_of
#include "kernels/amx/amx_elements.hpp"
#include "kernels/amx/amx_pipeline.hpp"
#include "kernels/amx/amx_rows.hpp"
#include "ref/ref_conv.hpp"
#include "threading/parallel.hpp"
#include "threading/scratch_cache.hpp"

namespace convgrad::detail::amx {
namespace {

int64_t div_up(int64_t a, int64_t b) {
    return (a + b - 1) / b;
}
int64_t floor_div(int64_t a, int64_t b) {
    return a >= 0 ? a / b : -((-a + b - 1) / b);
}
bool divides(int64_t s, int64_t a) {
    return a % s == 0;
}

}  // namespace

double bwd_data_plan::scratch_bytes() const {
    const double ksp = double(p.ksp());
    const double icb = double(div_up(p.icg, ukernel_max_n) * ukernel_max_n);
    return 2.0 * p.g * p.mb * op[0] * op[1] * op[2] * ocp + 2.0 * p.g * ksp * ocp * icb +
           nthr * 24.0 * ksp;
}

bwd_data_plan plan_bwd_data(const conv_problem &p, amx_backend backend) {
    bwd_data_plan pl;
    pl.p = p;
    pl.backend = backend;
    if (!amx_dot_of(p, pl.dot).empty() || p.dir != conv_direction::bwd_data)
        throw error(status::invalid_arguments, "AMX backward-data: not a bf16/f16 problem");
    for (int x = 0; x < 3; ++x) {
        // dst index j = (i + pb - k * dl) / s over all src pixels i and taps k.
        const int64_t jmin = floor_div(p.pb[x] - (p.k[x] - 1) * p.dl[x], p.s[x]);
        const int64_t jmax = floor_div(p.i[x] - 1 + p.pb[x], p.s[x]);
        pl.lo[x] = std::max<int64_t>(0, -jmin);
        pl.op[x] = pl.lo[x] + std::max(p.o[x], jmax + 1);
    }
    pl.ocp = padded_k(p.ocg);
    pl.wruns = div_up(div_up(p.i[2], p.s[2]), ukernel_max_m);
    pl.hpair = div_up(p.i[2], p.s[2]) <= 16 && p.i[1] > p.s[1];
    // (s_h first rows in every 2 s_h rows, and up to s_h of the rows past the last such block)
    pl.hunits = pl.hpair
                    ? p.s[1] * (p.i[1] / (2 * p.s[1])) + std::min(p.s[1], p.i[1] % (2 * p.s[1]))
                    : p.i[1];
    pl.nthr = threads_for(p.macs());
    bool no_margin = true;
    for (int x = 0; x < 3; ++x) no_margin = no_margin && pl.lo[x] == 0 && pl.op[x] == p.o[x];
    const data_type tile_dt = pl.dot == amx_dot::bf16 ? data_type::bf16 : data_type::f16;
    pl.reads_margin = !no_margin;
    pl.in_place = no_margin && p.dt == tile_dt && p.dst.c == 1 && p.ocg % 2 == 0;
    pl.blocks_outer = channel_blocks_outer(
        2.0 * p.ksp() * pl.ocp * p.icg, 2.0 * p.mb * pl.op[0] * pl.op[1] * pl.op[2] * pl.ocp,
        p.mb * p.i[0] * pl.hunits * std::min(p.s[2], p.i[2]) * pl.wruns,
        div_up(p.icg, ukernel_max_n));
    return pl;
}

void run_bwd_data(const bwd_data_plan &pl, const conv_args &args) {
    const conv_problem &p = pl.p;
    // Weights in 32-column blocks of VNNI pairs (amx_blocking.hpp), K over the output channels.
    const int64_t ksp = p.ksp(), ldb = 2 * ukernel_max_n, tap_b = pl.ocp / 2 * ldb;
    const int64_t nblk = div_up(p.icg, ukernel_max_n);
    const bool in_place = pl.in_place && reinterpret_cast<uintptr_t>(args.dst) % 64 == 0 &&
                          (p.dst.sp[2] * 2) % 64 == 0 && (p.g == 1 || (p.ocg * 2) % 64 == 0);
    // A: the margined copy, [g][n][d][h][w][ocp], or diff_dst itself; elements between pixels
    // along each axis, between images and between groups.
    const int64_t crow = pl.op[2] * pl.ocp, cplane = pl.op[1] * crow, cimage = pl.op[0] * cplane;
    const int64_t pixel = in_place ? p.dst.sp[2] : pl.ocp, row = in_place ? p.dst.sp[1] : crow,
                  plane = in_place ? p.dst.sp[0] : cplane, image = in_place ? p.dst.n : cimage,
                  group = in_place ? p.ocg : p.mb * cimage;
    scratch_buffer<uint16_t> ydst(size_t(in_place ? 0 : p.g * p.mb * cimage));
    const uint16_t *const a_data = in_place ? static_cast<const uint16_t *>(args.dst) : ydst.data();
    scratch_buffer<uint16_t> wpack(size_t(p.g * nblk * ksp * tap_b));
    scratch_buffer<float> bias(size_t(p.with_bias ? p.g * p.icg : 0));
    if (p.with_bias) load_elements(p.dt, args.bias, p.bias_stride, p.g * p.icg, bias.data());
    const row_io io = row_io::here();
    // A whole diff_dst row converts in one call when its pixels' channels follow each other.
    const bool dense_rows = p.g == 1 && pl.ocp == p.ocg && p.dst.c == 1 && p.dst.sp[2] == p.ocg;

    // 1. The zero-margined copy of diff_dst and the transposed VNNI weights.
    std::atomic<bool> finite_weights{true};
    const int64_t rows = in_place ? 0 : p.g * p.mb * pl.op[0] * pl.op[1];
    parallel(pl.nthr, [&](int ithr, int nthr) {
        int64_t r0, r1;
        balance211(rows, nthr, ithr, r0, r1);
        scratch_buffer<float> tmp(size_t(r1 > r0 ? (dense_rows ? p.o[2] : 1) * p.ocg : 0));
        for (int64_t r = r0; r < r1; ++r) {
            const int64_t hp = r % pl.op[1], dp = (r / pl.op[1]) % pl.op[0];
            const int64_t n = (r / (pl.op[1] * pl.op[0])) % p.mb;
            const int64_t g = r / (pl.op[1] * pl.op[0] * p.mb);
            uint16_t *out = ydst.data() + r * crow;
            std::fill(out, out + crow, uint16_t(0));
            const int64_t od = dp - pl.lo[0], oh = hp - pl.lo[1];
            if (od < 0 || od >= p.o[0] || oh < 0 || oh >= p.o[1]) continue;
            io.copy_line(p.dt, args.dst, n * p.dst.n + od * p.dst.sp[0] + oh * p.dst.sp[1],
                         p.dst.sp[2], p.dst.c, p.o[2], g * p.ocg, p.ocg, dense_rows, pl.lo[2],
                         pl.ocp, pl.dot, out, tmp.data());
        }
        int64_t t0, t1;
        balance211(p.g * ksp, nthr, ithr, t0, t1);
        for (int64_t gt = t0; gt < t1; ++gt) {
            pack_tap_weights(p, args.wei, pl.dot, true, gt / ksp, gt % ksp, pl.ocp, wpack.data(),
                             pair_ops_for(pl.backend));
            if (pl.reads_margin && !packed_tap_finite(wpack.data(), gt, ksp, nblk, tap_b, pl))
                finite_weights.store(false, std::memory_order_relaxed);
        }
    });
    if (!finite_weights.load()) return ref_conv_execute(p, args);

    // 2. Per (group, image, src row, w phase, run): all ic blocks, one brgemm over the taps
    // that reach the phase.
    // (Only phases below the width have pixels: a stride beyond it would count empty items.)
    const int64_t wphases = std::min(p.s[2], p.i[2]);
    const int64_t nh = pl.hunits;
    const int64_t items = p.g * p.mb * p.i[0] * nh * wphases * pl.wruns;
    const int64_t units = pl.blocks_outer ? nblk * items : items;
    parallel(
        pl.nthr,
        [&](int ithr, int nthr) {
            int64_t i0, i1;
            balance211(units, nthr, ithr, i0, i1);
            if (i0 >= i1) return;
            scratch_buffer<const uint16_t *> ptrs(size_t(2 * ksp));
            scratch_buffer<int64_t> taps{size_t(ksp)};
            // Per axis: the taps k that reach an item's pixels and the diff_dst index j each reads.
            const int64_t axis_at[3] = {0, p.k[0], p.k[0] + p.k[1]};  // each axis's first slot
            scratch_buffer<int64_t> ks{size_t(p.k[0] + p.k[1] + p.k[2])}, js{ks.size()};
            int64_t *const axis_k[3] = {ks.data(), ks.data() + axis_at[1], ks.data() + axis_at[2]};
            int64_t *const axis_j[3] = {js.data(), js.data() + axis_at[1], js.data() + axis_at[2]};
            const uint16_t **A = ptrs.data(), **B = A + ksp;
            c_pipeline pipe(pl.backend, pl.dot);
            ukernel_args a;
            a.K = int(p.ocg);
            a.A = A;
            a.B = B;
            a.lda = pixel;
            a.ldb = ldb;
            for (int64_t unit = i0; unit < i1; ++unit) {
                const int64_t item = pl.blocks_outer ? unit % items : unit;
                const int64_t blk0 = pl.blocks_outer ? unit / items : 0,
                              blk1 = pl.blocks_outer ? blk0 + 1 : nblk;
                int64_t r = item;
                const int64_t run = r % pl.wruns;
                r /= pl.wruns;
                const int64_t phase = r % wphases;
                r /= wphases;
                const int64_t ih = pl.first_row(r % nh);
                r /= nh;
                const int64_t id = r % p.i[0];
                r /= p.i[0];
                const int64_t n = r % p.mb, g = r / p.mb;
                // Pixels of this phase: iw = phase + s * t for t in [t0, t0 + M).
                const int64_t count = phase < p.i[2] ? div_up(p.i[2] - phase, p.s[2]) : 0;
                const int64_t t0 = run * ukernel_max_m;
                if (t0 >= count) continue;
                a.M = int(std::min<int64_t>(ukernel_max_m, count - t0));
                const int run_pixels = a.M;  // per row
                // The second row of a pair: s_h src rows on, one diff_dst row on.
                const bool two_rows = pl.hpair && ih + p.s[1] < p.i[1];
                a.m0 = two_rows ? a.M : 0;
                a.a1_offset = two_rows ? row : 0;
                if (two_rows) a.M *= 2;
                const uint16_t *img = a_data + g * group + n * image;
                // The taps that reach these pixels, axis by axis (a check of every tap of
                // FCN's 16x16 x8 kernel per item was half its data gradient), in tap order,
                // without those that read only the zero margin: a dilated 16-tap kernel over
                // one diff_dst row did 16 products per row for the one that reads it.
                int nk[3] = {0, 0, 0};
                const int64_t at[3] = {id, ih, phase};
                // diff_dst indices an item reads per tap along each axis: 1, 1 or 2 rows, and
                // run_pixels along w.
                const int64_t span[3] = {1, two_rows ? 2 : 1, run_pixels};
                for (int x = 0; x < 3; ++x)
                    for (int64_t k = 0; k < p.k[x]; ++k) {
                        const int64_t e = at[x] + p.pb[x] - k * p.dl[x];
                        if (!divides(p.s[x], e)) continue;
                        const int64_t j = e / p.s[x] + (x == 2 ? t0 : 0);
                        if (j + span[x] <= 0 || j >= p.o[x]) continue;
                        axis_k[x][nk[x]] = k;
                        axis_j[x][nk[x]++] = j + pl.lo[x];
                    }
                int nb = 0;
                for (int d = 0; d < nk[0]; ++d)
                    for (int h = 0; h < nk[1]; ++h)
                        for (int w = 0; w < nk[2]; ++w) {
                            A[nb] = img + axis_j[0][d] * plane + axis_j[1][h] * row +
                                    axis_j[2][w] * pixel;
                            taps[size_t(nb++)] =
                                (axis_k[0][d] * p.k[1] + axis_k[1][h]) * p.k[2] + axis_k[2][w];
                        }
                a.batch = nb;
                for (int64_t ic0 = blk0 * ukernel_max_n; ic0 < blk1 * ukernel_max_n && ic0 < p.icg;
                     ic0 += ukernel_max_n) {
                    a.N = int(std::min<int64_t>(ukernel_max_n, p.icg - ic0));
                    const int64_t ic = g * p.icg + ic0;
                    c_rows to;  // src pixels phase + s * (t0 + m), channels [ic, ic + N)
                    to.cols = a.N;
                    to.bias = p.with_bias ? bias.data() + ic : nullptr;
                    to.dt = p.dt;
                    to.out = args.out;
                    to.base = n * p.src.n + id * p.src.sp[0] + ih * p.src.sp[1] +
                              (phase + p.s[2] * t0) * p.src.sp[2] + ic * p.src.c;
                    // (Strides only where a row has several pixels, or there is a second row:
                    // a stride of 2^62 times a pixel's would overflow, unused.)
                    to.row_stride = run_pixels > 1 ? p.s[2] * p.src.sp[2] : 0;
                    to.col_stride = p.src.c;
                    to.base1 = two_rows ? to.base + p.s[1] * p.src.sp[1] : 0;
                    if (nb == 0) {  // no tap reaches these pixels: zeros (plus the bias)
                        pipe.zeros(a, to);
                        continue;
                    }
                    for (int b = 0; b < nb; ++b)
                        B[b] = wpack.data() +
                               ((g * nblk + ic0 / ukernel_max_n) * ksp + taps[size_t(b)]) * tap_b;
                    pipe.run(a, to);
                }
            }
            pipe.flush();
        },
        thread_tile_hooks(pl.backend));
}

}  // namespace convgrad::detail::amx
