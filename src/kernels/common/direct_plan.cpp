#include "kernels/common/direct_plan.hpp"

#include <algorithm>

#include "threading/parallel.hpp"

namespace convgrad::detail {

direct_plan make_direct_plan(const conv_problem &p, int vlen, int nregs) {
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
    // bwd_weights: about 512 KiB of src and diff_dst per chunk of rows.
    const dim_t row_bytes = (p.i[2] * p.ic() + p.o[2] * p.oc()) * 4;
    d.rows_per_chunk = std::max<dim_t>(1, (512 * 1024) / std::max<dim_t>(row_bytes, 1));
    return d;
}

}  // namespace convgrad::detail
