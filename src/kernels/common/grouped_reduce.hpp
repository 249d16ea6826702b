// The lane reduction of the grouped kernels (grouped_conv_impl.hpp on f32 lanes, and
// grouped_pairs_impl.hpp on vdpbf16ps's lanes of channel pairs): lanes hold partial sums of
// groups of cg consecutive lanes, and one vector per output channel j of a group. Included in
// an ISA's namespace after `struct vt` (vt::blend_bit<D>, vt::swap_bit<D>), once per unit.
#pragma once

// Lane l of the result: the sum over the lanes of l's group of acc[l % cg]. Each step pairs
// vectors whose lanes hold sums for alternate rows (bit D of the lane) and adds each lane's
// partner across bit D, so the sum for output channel j ends in lane j of its group.
template <int D>
static inline V grouped_pair_step(V a, V b) {
    return vt::add(vt::blend_bit<D>(a, b), vt::swap_bit<D>(vt::blend_bit<D>(b, a)));
}
template <int CG>
static inline V grouped_reduce(const V (&acc)[CG]) {
    if constexpr (CG == 1) {
        return acc[0];
    } else {
        V r[CG / 2];
        for (int k = 0; k < CG / 2; ++k) r[k] = grouped_pair_step<1>(acc[2 * k], acc[2 * k + 1]);
        if constexpr (CG == 2) return r[0];
        if constexpr (CG >= 4) {
            V q[CG / 4];
            for (int k = 0; k < CG / 4; ++k) q[k] = grouped_pair_step<2>(r[2 * k], r[2 * k + 1]);
            if constexpr (CG == 4) return q[0];
            if constexpr (CG == 8) return grouped_pair_step<4>(q[0], q[1]);
        }
    }
}
