// The loop order of the AMX gather schedules (fwd, bwd_data): a work item is a run of up to 32
// pixels, and each multiplies every 32-channel block of the packed weights. Items outside,
// blocks inside reads each item's A once but streams all the weights per item; blocks
// outside, items inside keeps one block's weights in L2 but streams the padded copy per block.
// The order with fewer bytes from beyond L2 wins: DCGAN's 512 -> 256 4x4 layer has 4 MB of
// weights and 32 items (items outside: 128 MB per execution, 0.17x of oneDNN), ResNet-50's
// 3x3 layers have small weights and a large copy (items outside).
#pragma once

#include <cstdint>

#include "kernels/plan/cache_sizes.hpp"

namespace convgrad::detail::amx {

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
