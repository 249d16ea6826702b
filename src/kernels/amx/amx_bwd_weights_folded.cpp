// The folded path of the AMX weight gradient (bwd_weights_plan::folded): kq w taps of icg
// channels side by side in the tiles' columns, for layers with few input channels (ResNet-50's
// stem: 3 channels, 7 taps along w, stride 2), whose pixel path would fill 3 of 16 columns.
//   1. Every src row (g, n, id, ih) is copied zero-padded in the tiles' type (pixel x = iw +
//      pb_w), and for each group of kq taps and each pair of output pixels (ow, ow + 1) the two
//      pixels' runs (kq taps x icg channels: one run of the padded row when dl_w is 1) are
//      interleaved into a VNNI pair row of B. Output pixels past o_w get zeros.
//   2. A work item is (slice, group, part of the units: (kd, kh) taps x groups of w taps), as
//      in the other paths. Per chunk of output rows, diff_dst^T in tile steps; then per unit
//      and 32-oc block one microkernel call, batched over the chunk's rows whose src row is
//      inside. C stays in a buffer of the item ([unit][ocg][32]) and goes into the slice's
//      partials ([tap][ocg][icg]) when the item ends.
// Padding and the columns past o_w join the sums as zero products: exact for finite data only,
// so src is checked as it is packed and diff_dst as it is transposed, and any infinity or NaN
// leaves the problem to the pixel path (nothing is written to the weights before that).
#include <atomic>

#include "kernels/amx/amx_bwd_weights_parts.hpp"

namespace convgrad::detail::amx::bww {
namespace {

// Phase 1: the B rows of every src row into `lines`. Returns false when src is not finite.
bool pack_folded_lines(const bwd_weights_plan &pl, const conv_args &args, uint16_t *lines) {
    const conv_problem &p = pl.p;
    const int64_t nlines = pl.nlines(), line = pl.fold_line(), ncols = pl.kq * p.icg;
    const int64_t pairs = pl.owp / 2, blk = pairs * 2 * ukernel_max_n;  // a group's B
    // Pixels a row copy holds: the ones some tap reads (x < fold_wp), none when the left
    // padding alone covers them.
    const int64_t ncopy = std::clamp<int64_t>(pl.fold_wp - p.pb[2], 0, p.i[2]);
    const bool dense = p.src.c == 1 && p.src.sp[2] == p.icg;
    std::atomic<bool> finite{true};
    parallel(pl.nthr, [&](int ithr, int nthr) {
        const pixel_slots px(p, pl.dot, pl.backend);
        scratch_buffer<uint16_t> row(size_t(pl.fold_wp * p.icg));
        scratch_buffer<float> tmp(size_t(std::max<int64_t>(1, ncopy * p.icg)));
        uint16_t zeros[ukernel_max_n] = {}, gather[2][ukernel_max_n];
        bool ok = true;
        int64_t l0, l1;
        balance211(nlines, nthr, ithr, l0, l1);
        for (int64_t l = l0; l < l1 && ok; ++l) {
            const int64_t ih = l % p.i[1], id = (l / p.i[1]) % p.i[0],
                          n = (l / (p.i[1] * p.i[0])) % p.mb, g = l / (p.i[1] * p.i[0] * p.mb);
            std::fill(row.data(), row.data() + pl.fold_wp * p.icg, uint16_t(0));
            if (ncopy > 0) {
                const int64_t base =
                    n * p.src.n + id * p.src.sp[0] + ih * p.src.sp[1] + g * p.icg * p.src.c;
                px.io.copy_line(p.dt, args.src, base, p.src.sp[2], p.src.c, ncopy, 0, p.icg, dense,
                                p.pb[2], p.icg, pl.dot, row.data(), tmp.data());
                ok = px.ops.all_finite(row.data() + p.pb[2] * p.icg, ncopy * p.icg, pl.dot);
            }
            // Output pixel ow's run for group j: taps j * kq + kwl, kwl < kq.
            auto run = [&](int64_t ow, int64_t j, int slot) -> const uint16_t * {
                if (ow >= p.o[2]) return zeros;
                const int64_t x0 = ow * p.s[2] + j * pl.kq * p.dl[2];
                if (p.dl[2] == 1) return row.data() + x0 * p.icg;
                for (int64_t kwl = 0; kwl < pl.kq; ++kwl)
                    std::copy_n(row.data() + (x0 + kwl * p.dl[2]) * p.icg, p.icg,
                                gather[slot] + kwl * p.icg);
                return gather[slot];
            };
            uint16_t *out = lines + l * line;
            for (int64_t j = 0; j < pl.njg; ++j)
                for (int64_t q = 0; q < pairs; ++q)
                    px.ops.interleave(run(2 * q, j, 0), run(2 * q + 1, j, 1), ncols,
                                      out + j * blk + q * 2 * ukernel_max_n);
        }
        if (!ok) finite = false;
    });
    return finite;
}

}  // namespace

bool run_folded(const bwd_weights_plan &pl, const conv_args &args) {
    const conv_problem &p = pl.p;
    const int64_t line = pl.fold_line(), blk = (pl.owp / 2) * 2 * ukernel_max_n;
    scratch_buffer<uint16_t> lines(size_t(pl.nlines() * line));
    if (!pack_folded_lines(pl, args, lines.data())) return false;

    // A unit of work: a (kd, kh) tap and a group of w taps, u = (kd * k_h + kh) * njg + j.
    // Items split the units when slices and groups are few (a 1-D layer of one long row has
    // one slice; its groups of taps are what keeps two threads busy).
    const int64_t ksp = p.ksp(), wgroup = ksp * p.icg * p.ocg;
    const int64_t units = p.k[0] * p.k[1] * pl.njg, ublk = p.ocg * ukernel_max_n;
    scratch_buffer<float> partials(size_t(pl.rslices * p.g * wgroup));
    // diff_dst is checked in its transposed copies, while they are in L1 (a pass of its own over
    // the tensor took 5% of the stem's time); every row is transposed by some item.
    std::atomic<bool> finite{true};
    const tap_split split(pl.rslices, p.g, units);
    const int64_t items = split.items(), nrows = pl.nunits();
    parallel(
        pl.nthr,
        [&](int ithr, int nthr) {
            int64_t i0, i1;
            balance211(items, nthr, ithr, i0, i1);
            if (i0 >= i1) return;
            // diff_dst^T in tile steps, [row][step][oc][32 pixels] (as the rows path).
            const int64_t a_block = p.ocg * k_step;
            scratch_buffer<uint16_t> a_rows(size_t(pl.rchunk * pl.rsteps * a_block));
            scratch_buffer<const uint16_t *> ptrs(size_t(2 * pl.rchunk));
            scratch_buffer<int64_t> line_of(size_t(pl.rchunk)), a_off(size_t(pl.rchunk));
            scratch_buffer<float> cf(size_t(units * ublk));
            pixel_slots px(p, pl.dot, pl.backend);
            const uint16_t **A = ptrs.data(), **B = A + pl.rchunk;
            ukernel_args a;
            a.K = int(pl.owp);
            a.N = int(pl.kq * p.icg);
            a.lda = k_step;
            a.a_block = a_block;
            a.ldb = 2 * ukernel_max_n;
            a.ldc = ukernel_max_n;
            a.A = A;
            a.B = B;
            a.accumulate = true;
            for (int64_t item = i0; item < i1; ++item) {
                int64_t slice, g, u0, u1;
                split.decode(item, units, slice, g, u0, u1);
                std::fill(cf.data(), cf.data() + (u1 - u0) * ublk, 0.f);
                int64_t c0, c1;
                balance211(pl.rnchunks, int(pl.rslices), int(slice), c0, c1);
                for (int64_t c = c0; c < c1 && finite.load(std::memory_order_relaxed); ++c) {
                    const int64_t row0 = c * pl.rchunk, R = std::min(pl.rchunk, nrows - row0);
                    for (int64_t r = 0; r < R; ++r) {  // diff_dst^T, pixel pairs per 32 bits
                        const int64_t f = row0 + r, oh = f % p.o[1], od = (f / p.o[1]) % p.o[0],
                                      n = f / (p.o[1] * p.o[0]);
                        const int64_t d0 =
                            n * p.dst.n + od * p.dst.sp[0] + oh * p.dst.sp[1] + g * p.ocg * p.dst.c;
                        dst_unit_steps(p, args, px, d0, 1, 0, pl.rsteps,
                                       a_rows.data() + r * pl.rsteps * a_block);
                        if (!px.ops.all_finite(a_rows.data() + r * pl.rsteps * a_block,
                                               pl.rsteps * a_block, pl.dot))
                            finite = false;
                    }
                    int nb = 0;
                    for (int64_t u = u0; u < u1; ++u) {
                        const int64_t t = u / pl.njg, j = u % pl.njg;
                        const int64_t kd = t / p.k[1], kh = t % p.k[1];
                        // The rows whose src row (kd, kh) reads: listed at the tap's first unit.
                        const bool new_tap = u == u0 || j == 0;
                        if (new_tap) nb = 0;
                        for (int64_t r = 0; r < R && new_tap; ++r) {
                            const int64_t f = row0 + r, oh = f % p.o[1], od = (f / p.o[1]) % p.o[0],
                                          n = f / (p.o[1] * p.o[0]);
                            const int64_t id = od * p.s[0] + kd * p.dl[0] - p.pb[0],
                                          ih = oh * p.s[1] + kh * p.dl[1] - p.pb[1];
                            if (id < 0 || id >= p.i[0] || ih < 0 || ih >= p.i[1]) continue;
                            a_off[size_t(nb)] = r * pl.rsteps * a_block;
                            line_of[size_t(nb++)] =
                                (((g * p.mb + n) * p.i[0] + id) * p.i[1] + ih) * line;
                        }
                        if (nb == 0) continue;
                        a.batch = nb;
                        for (int64_t m0 = 0; m0 < p.ocg; m0 += ukernel_max_m) {
                            for (int b = 0; b < nb; ++b) {
                                A[b] = a_rows.data() + m0 * k_step + a_off[size_t(b)];
                                B[b] = lines.data() + line_of[size_t(b)] + j * blk;
                            }
                            a.M = int(std::min<int64_t>(ukernel_max_m, p.ocg - m0));
                            a.C = cf.data() + (u - u0) * ublk + m0 * ukernel_max_n;
                            ukernel(pl.backend, pl.dot, a);
                        }
                    }
                }
                // The item's units into the slice's partials: column kwl * icg + ic of group j
                // is tap kw = j * kq + kwl (the last group's columns past k_w are dropped).
                float *C = partials.data() + (slice * p.g + g) * wgroup;
                for (int64_t u = u0; u < u1; ++u) {
                    const int64_t t = u / pl.njg, j = u % pl.njg;
                    for (int64_t kwl = 0; kwl < pl.kq && j * pl.kq + kwl < p.k[2]; ++kwl) {
                        const int64_t tap = t * p.k[2] + j * pl.kq + kwl;
                        for (int64_t oc = 0; oc < p.ocg; ++oc)
                            std::copy_n(
                                cf.data() + (u - u0) * ublk + oc * ukernel_max_n + kwl * p.icg,
                                p.icg, C + (tap * p.ocg + oc) * p.icg);
                    }
                }
            }
        },
        thread_tile_hooks(pl.backend));
    if (!finite) return false;
    store_sums(pl, args, partials.data(), pl.rslices);
    return true;
}

}  // namespace convgrad::detail::amx::bww
