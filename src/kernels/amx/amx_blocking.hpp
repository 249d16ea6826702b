// The weights and the loop order of the AMX gather schedules (fwd, bwd_data).
//
// Weights are VNNI pairs in blocks of 32 columns, [g][block][tap][K / 2][32][2]: a B tile's rows
// are 128 bytes apart (with rows 2 x channels apart, 2 KB for 512 channels, every tile load
// missed: 16 rows in two L1 sets), and a block's taps follow each other, so fwd's folded K runs
// continue from one tap into the next.
//
// Loop order: a work item is a run of up to 32
// pixels, and each multiplies every 32-channel block of the packed weights. Items outside,
// blocks inside reads each item's A once but streams all the weights per item; blocks
// outside, items inside keeps one block's weights in L2 but streams the padded copy per block.
// The order with fewer bytes from beyond L2 wins: DCGAN's 512 -> 256 4x4 layer has 4 MB of
// weights and 32 items (items outside: 128 MB per execution, 0.17x of oneDNN), ResNet-50's
// 3x3 layers have small weights and a large copy (items outside).
#pragma once

#include <algorithm>
#include <cstdint>

#include "kernels/amx/amx_elements.hpp"
#include "kernels/amx/amx_pair_ops.hpp"
#include "kernels/amx/amx_ukernel.hpp"
#include "kernels/plan/cache_sizes.hpp"

namespace convgrad::detail::amx {

/// Tap t of group g's weights into every 32-column block of `wpack` (layout above; a block's
/// tap is tap_b = kp / 2 * 64 elements, zeros past the channels). K runs over the input
/// channels (fwd) or, with `k_is_oc`, the output channels (bwd_data); the columns over the
/// other. kp: K rounded up to even.
/// Weights of the tiles' type whose columns are contiguous go two rows at a time through
/// ops.interleave (element by element, DCGAN's 1 MB of weights took 40% of its
/// ConvTransposeBackwardData).
inline void pack_tap_weights(const conv_problem &p, const void *wei, amx_dot to, bool k_is_oc,
                             int64_t g, int64_t t, int64_t kp, uint16_t *wpack,
                             const pair_ops &ops) {
    const int64_t ldb = 2 * ukernel_max_n, tap_b = kp / 2 * ldb, ksp = p.ksp();
    const int64_t nk = k_is_oc ? p.ocg : p.icg, nn = k_is_oc ? p.icg : p.ocg;
    const int64_t k_stride = k_is_oc ? p.wei.oc : p.wei.ic,
                  n_stride = k_is_oc ? p.wei.ic : p.wei.oc;
    const int64_t nblk = (nn + ukernel_max_n - 1) / ukernel_max_n;
    const int64_t kd = t / (p.k[1] * p.k[2]), kh = (t / p.k[2]) % p.k[1], kw = t % p.k[2];
    const int64_t wt =
        kd * p.wei.sp[0] + kh * p.wei.sp[1] + kw * p.wei.sp[2] + g * p.ocg * p.wei.oc;
    const bool same_type = p.dt == (to == amx_dot::bf16 ? data_type::bf16 : data_type::f16);
    const bool rows_in_place = same_type && n_stride == 1;
    // K contiguous instead: a pair row of B is the 32-bit words (w[k], w[k + 1]) of the columns,
    // so B is the transpose of the columns read as words.
    const bool words_in_place = same_type && !rows_in_place && k_stride == 1 && nk >= 2;
    for (int64_t blk = 0; blk < nblk; ++blk) {
        uint16_t *B = wpack + ((g * nblk + blk) * ksp + t) * tap_b;
        std::fill(B, B + tap_b, uint16_t(0));
        const int64_t n0 = blk * ukernel_max_n, n = std::min<int64_t>(ukernel_max_n, nn - n0);
        if (rows_in_place) {
            const uint16_t *w = static_cast<const uint16_t *>(wei) + wt + n0;
            static constexpr uint16_t zeros[ukernel_max_n] = {};
            for (int64_t k = 0; k < nk; k += 2)  // (an odd count's last row pairs with zeros)
                ops.interleave(w + k * k_stride, k + 1 < nk ? w + (k + 1) * k_stride : zeros, n,
                               B + (k / 2) * ldb);
            continue;
        }
        if (words_in_place) {
            const uint16_t *w = static_cast<const uint16_t *>(wei) + wt + n0 * n_stride;
            uint32_t *B32 = reinterpret_cast<uint32_t *>(B);
            for (int64_t j0 = 0; j0 < n; j0 += 16) {  // 16 columns a transpose
                const uint32_t *rows[16];
                const int nr = int(std::min<int64_t>(16, n - j0));
                for (int j = 0; j < nr; ++j)
                    rows[j] = reinterpret_cast<const uint32_t *>(w + (j0 + j) * n_stride);
                ops.transpose_words(rows, nr, nk / 2, B32 + j0, ldb / 2);
            }
            if (nk & 1)  // the last row pairs with zero (B is zeroed)
                for (int64_t j = 0; j < n; ++j)
                    B[(nk / 2) * ldb + 2 * j] = w[j * n_stride + (nk - 1)];
            continue;
        }
        for (int64_t k = 0; k < nk; ++k)
            for (int64_t j = 0; j < n; ++j)
                B[(k / 2) * ldb + 2 * j + (k & 1)] =
                    narrow_element(p.dt, wei, wt + k * k_stride + (n0 + j) * n_stride, to);
    }
}

/// Whether the packed blocks of tap gt % ksp of group gt / ksp (pack_tap_weights) are all
/// finite: checked right after packing, while they are in cache.
template <class Plan>
bool packed_tap_finite(const uint16_t *wpack, int64_t gt, int64_t ksp, int64_t nblk, int64_t tap_b,
                       const Plan &pl) {
    const int64_t g = gt / ksp, t = gt % ksp;
    const pair_ops &ops = pair_ops_for(pl.backend);
    for (int64_t blk = 0; blk < nblk; ++blk)
        if (!ops.all_finite(wpack + ((g * nblk + blk) * ksp + t) * tap_b, tap_b, pl.dot))
            return false;
    return true;
}

/// weight_bytes: one group's packed weights; copy_bytes: one group's padded copy; items: work
/// items per group; blocks: channel blocks per group.
inline bool channel_blocks_outer(double weight_bytes, double copy_bytes, int64_t items,
                                 int64_t blocks) {
    const double l2 = 0.5 * double(machine_caches().l2);
    const double items_outer =
        copy_bytes + (weight_bytes <= l2 ? weight_bytes : weight_bytes * double(items));
    const double blocks_outer =
        weight_bytes + (copy_bytes <= l2 ? copy_bytes : copy_bytes * double(blocks));
    return blocks_outer < items_outer;
}

}  // namespace convgrad::detail::amx
