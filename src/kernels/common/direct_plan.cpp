#include "kernels/common/direct_plan.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "threading/parallel.hpp"

namespace convgrad::detail {

direct_plan make_direct_plan(const conv_problem &p, int vlen, int nregs, const cache_sizes &caches,
                             bool round_output_in_kernel) {
    direct_plan d{};
    d.p = p;
    d.vlen = vlen;
    d.max_nv = 4;
    // Accumulators + the vectors of B + one broadcast register must fit the register file.
    for (int nv = 1; nv <= 4; ++nv) d.max_m[nv] = std::min(16, (nregs - nv - 1) / nv);
    d.max_m[0] = 0;
    // The forward kernel flattening kernel width and channels reads src from a copy padded
    // along w: copied, so streamed a chunk of images at a time like any other copy.
    const bool flat = p.dir == conv_direction::fwd && direct_flattens_w(p);
    d.src_direct = p.dt == data_type::f32 && p.src.c == 1 && !flat;
    d.dst_direct = p.dt == data_type::f32 && p.dst.c == 1;
    // Fixed here, at compile time: the split (and so the bits of the result) never changes.
    d.nthr = threads_for(p.macs());
    const cache_budget b = budget_of(caches);
    const bool fwd = p.dir == conv_direction::fwd;
    d.out_rounded_in_kernel = round_output_in_kernel && p.dir != conv_direction::bwd_weights &&
                              p.dt != data_type::f32 && (fwd ? p.dst.c : p.src.c) == 1;
    d.caches = caches;
    // In double: a problem's extents may reach the dim_t range (the fuzzers build such problems
    // with an empty batch) while the chunk sizes matter only for problems that fit in memory.
    // bwd_weights: src and diff_dst rows of a chunk within the L2 budget.
    const double row_bytes =
        (double(p.i[2]) * double(p.ic()) + double(p.o[2]) * double(p.oc())) * 4.0;
    d.rows_per_chunk =
        dim_t(std::max(1.0, std::min(std::floor(double(b.l2_rows) / std::max(row_bytes, 1.0)),
                                     double(b.l2_rows))));
    // Copies of one chunk (the tensors that are not used in place) within half the threads' L2.
    const double isp = double(p.i[0]) * double(p.i[1]) * double(p.i[2]);
    const double osp = double(p.o[0]) * double(p.o[1]) * double(p.o[2]);
    const bool src_copied = !d.src_direct && !(d.out_rounded_in_kernel && !fwd);
    const bool dst_copied = !d.dst_direct && !(d.out_rounded_in_kernel && fwd);
    const double copied =
        (src_copied ? isp * double(p.ic()) : 0.0) + (dst_copied ? osp * double(p.oc()) : 0.0);
    const double chunk_bytes = double(caches.l2) * d.nthr / 2;
    const double mb = double(std::max<dim_t>(p.mb, 1));
    // Chunks of equal size: 64 images in chunks of 63 left a chunk of 1, which streamed all the
    // weights again for one image (a 1x1-output layer's f16 data gradient took 1.4x its f32 time
    // on 2 threads).
    d.images_per_chunk = images_within_l2(copied * 4.0, dim_t(mb), d.nthr, caches);
    // Each chunk streams all the weights again: where they outweigh the whole batch's copies
    // (a projection from a 1x1 input: 3.3 MB of weights, 2.1 MB of f16 data), one chunk.
    const double wei_bytes = double(p.g) * double(p.ksp()) * double(p.icg) * double(p.ocg) * 4.0;
    if (copied * 4.0 * mb <= wei_bytes) d.images_per_chunk = dim_t(mb);
    d.chunk_fits_l2 = p.dir == conv_direction::bwd_weights ||
                      copied * 4.0 * double(d.images_per_chunk) <= chunk_bytes;
    d.out_rows_per_chunk = 0;
    d.out_row_axis = 0;
    const dim_t *out_sp = fwd ? p.o : p.i;
    const bool out_copied = fwd ? dst_copied : src_copied;
    const int X = direct_out_row_axis(p);
    if (p.dir != conv_direction::bwd_weights && !d.chunk_fits_l2 && d.images_per_chunk == 1 &&
        out_copied && out_sp[X] > 1) {
        // One row (a d-slice, or an h-row) of the output's copy.
        const double slice = (X == 0 ? double(out_sp[1]) : 1.0) * double(out_sp[2]) *
                             double(fwd ? p.oc() : p.ic()) * 4.0;
        const double rows = std::floor(chunk_bytes / 2 / std::max(slice, 1.0));
        if (rows >= 1.0 && rows < double(out_sp[X])) {
            d.out_rows_per_chunk = balanced_chunk(out_sp[X], dim_t(rows));
            d.out_row_axis = X;
        }
    }
    d.gather_whole_k = b.l2_whole;
    d.gather_panel = b.l1_panel;
    d.gather_group = b.l2_group;
    return d;
}

std::string describe(const direct_plan &pl) {
    // The register tile of the widest channel block: N is the C side's channels (dst for fwd
    // and bwd_weights, src for bwd_data), as wide as they fill, at most max_nv vectors.
    const conv_problem &p = pl.p;
    const dim_t n = p.dir == conv_direction::bwd_data ? p.icg : p.ocg;
    const int nv = int(std::clamp<dim_t>((n + pl.vlen - 1) / pl.vlen, 1, pl.max_nv));
    std::string s = "tile=" + std::to_string(pl.max_m[nv]) + "x" + std::to_string(nv * pl.vlen);
    if (pl.p.dir == conv_direction::bwd_weights)
        s += " rows_per_chunk=" + std::to_string(pl.rows_per_chunk);
    else
        s += " images_per_chunk=" + std::to_string(pl.images_per_chunk) +
             (pl.out_rows_per_chunk
                  ? " out_rows_per_chunk=" + std::to_string(pl.out_rows_per_chunk) + " along " +
                        "dhw"[pl.out_row_axis]
                  : std::string()) +
             " k_chunk: whole K up to " + std::to_string(pl.gather_whole_k / 1024) +
             "KiB of weights panel, else " + std::to_string(pl.gather_panel / 1024) + "KiB chunks";
    const bool fwd = p.dir == conv_direction::fwd;
    auto how = [&](bool direct, bool out) {
        return direct                            ? "in place"
               : out && pl.out_rounded_in_kernel ? "rounded in place"
                                                 : "copied";
    };
    s += std::string(" src=") + how(pl.src_direct, p.dir == conv_direction::bwd_data) +
         " dst=" + how(pl.dst_direct, fwd) + " threads=" + std::to_string(pl.nthr) +
         " caches: " + to_string(pl.caches);
    return s;
}

}  // namespace convgrad::detail
