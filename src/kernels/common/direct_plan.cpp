#include "kernels/common/direct_plan.hpp"

#include <algorithm>
#include <string>

#include "threading/parallel.hpp"

namespace convgrad::detail {

direct_plan make_direct_plan(const conv_problem &p, int vlen, int nregs,
                             const cache_sizes &caches) {
    direct_plan d{};
    d.p = p;
    d.vlen = vlen;
    d.max_nv = 4;
    // Accumulators + the vectors of B + one broadcast register must fit the register file.
    for (int nv = 1; nv <= 4; ++nv) d.max_m[nv] = std::min(16, (nregs - nv - 1) / nv);
    d.max_m[0] = 0;
    d.src_direct = p.dt == data_type::f32 && p.src.c == 1;
    d.dst_direct = p.dt == data_type::f32 && p.dst.c == 1;
    // Fixed here, at compile time: the split (and so the bits of the result) never changes.
    d.nthr = threads_for(p.macs());
    const cache_budget b = budget_of(caches);
    d.caches = caches;
    // bwd_weights: src and diff_dst rows of a chunk within the L2 budget.
    const dim_t row_bytes = (p.i[2] * p.ic() + p.o[2] * p.oc()) * 4;
    d.rows_per_chunk = std::max<dim_t>(1, b.l2_rows / std::max<dim_t>(row_bytes, 1));
    // Copies of one chunk (the tensors that are not used in place) within half the threads' L2.
    const dim_t copied =
        (d.src_direct ? 0 : p.isp() * p.ic()) + (d.dst_direct ? 0 : p.osp() * p.oc());
    const dim_t chunk_bytes = dim_t(caches.l2) * d.nthr / 2;
    d.images_per_chunk =
        copied == 0 ? std::max<dim_t>(p.mb, 1)
                    : std::clamp<dim_t>(chunk_bytes / (copied * 4), 1, std::max<dim_t>(p.mb, 1));
    d.gather_whole_k = b.l2_whole;
    d.gather_panel = b.l1_panel;
    return d;
}

std::string describe(const direct_plan &pl) {
    const int nv = pl.max_nv;
    std::string s = "tile=" + std::to_string(pl.max_m[nv]) + "x" + std::to_string(nv * pl.vlen);
    if (pl.p.dir == conv_direction::bwd_weights)
        s += " rows_per_chunk=" + std::to_string(pl.rows_per_chunk);
    else
        s += " images_per_chunk=" + std::to_string(pl.images_per_chunk) +
             " k_chunk: whole K up to " + std::to_string(pl.gather_whole_k / 1024) +
             "KiB of weights panel, else " + std::to_string(pl.gather_panel / 1024) + "KiB chunks";
    s += std::string(" src=") + (pl.src_direct ? "in place" : "copied") +
         " dst=" + (pl.dst_direct ? "in place" : "copied") + " threads=" + std::to_string(pl.nthr) +
         " caches: " + to_string(pl.caches);
    return s;
}

}  // namespace convgrad::detail
