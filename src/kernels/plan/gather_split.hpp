// How the gather schedule (kernels/schedule/gather.hpp) splits a gather's work into items, and
// what an item costs when the threads share the items of several gathers out (gather_share).
// Plain, outside the ISA units, so that the tests can weigh a split.
#pragma once

#include <algorithm>

#include "core/conv_problem.hpp"

namespace convgrad::detail {

/// How a gather's work is split into items. An item is a unit of register tiles with either
/// (inner) a set of `gs` consecutive groups and all their channel blocks: the tables of row
/// pointers are built once and shifted from block to block and group to group, and the unit's
/// A rows (all the set's channels of its pixels) are read from L1 by every block while the
/// set's weights stay in L2; or one channel block of one group. Then consecutive items take a
/// band of `band` units of one (group, block), so its weights panel is reused by all of them,
/// and the next block the same band: the band's A rows stay in L2 for all the blocks, where
/// taking all the units block by block read all of A from memory once per block (ResNet-50's
/// 3x3 stride-2 forward at batch 8: 12.8 MB of src, 8 blocks of 16 output channels).
struct gather_split {
    dim_t nunits, nblocks, gs;  // gs = 0: one (group, block) per item
    dim_t band;                 // gs = 0: units per band (the last band may hold fewer)
};

/// The items of a gather of G groups split so.
inline dim_t gather_items(const gather_split &sp, dim_t G) {
    return sp.nunits * (sp.gs > 0 ? (G + sp.gs - 1) / sp.gs : G * sp.nblocks);
}

/// The (group, block) pairs an item runs: all the blocks of gs groups (the last set may have
/// fewer groups; weighed as a full one), else one.
inline dim_t gather_item_pairs(const gather_split &sp, dim_t G) {
    return sp.gs > 0 ? std::min(sp.gs, G) * sp.nblocks : 1;
}

/// The cost of one item of a gather of `ntaps` taps over K channels, by which the threads share
/// out the items of all the gathers of one run (the stride phases of a data gradient): per
/// (group, block) pair, its taps times K (the products of a tile) plus one (its stores).
/// (Weighed as one pair, the inner items of ResNet-50's stride-2 3x3 data gradient, 8 blocks
/// each in its three phases of 1 and 2 taps, went to one thread with a quarter of the 4-tap
/// phase, whose items are one block each; that thread took 3.4x as long as the other, Zen 3.)
inline double gather_item_weight(const gather_split &sp, dim_t G, int ntaps, dim_t K) {
    return (double(ntaps) * double(std::max<dim_t>(K, 1)) + 1.0) * double(gather_item_pairs(sp, G));
}

}  // namespace convgrad::detail
