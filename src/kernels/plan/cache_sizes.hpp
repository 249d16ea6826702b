// The data-cache sizes the kernel plans block for, read from the machine once, and the blocking
// derived from them (instead of constants tuned on one machine).
#pragma once

#include <string>

#include "core/conv_problem.hpp"

namespace convgrad::detail {

struct cache_sizes {
    dim_t l1d = 0;            // bytes of L1 data cache per core
    dim_t l2 = 0;             // bytes of L2 per core
    const char *source = "";  // where the figures came from: "sysconf", "cpuid", "fallback"
};

/// This machine's caches, read on first use (sysconf, else CPUID leaf 4, else 32 KiB / 1 MiB);
/// the same values for the life of the process, so plans (and results) do not vary.
const cache_sizes &machine_caches();

/// Parses CPUID leaf 4 sub-leaf registers into (level, type, bytes); type 1 = data, 3 = unified.
void cpuid4_cache(unsigned eax, unsigned ebx, unsigned ecx, int &level, int &type, dim_t &bytes);

/// The blocking the kernels derive from the cache sizes, in bytes.
struct cache_budget {
    dim_t l1_panel;  // a K chunk of packed weights (or of an A/B panel pair) kept in L1
    dim_t l2_whole;  // below this a gather keeps all of K in one chunk (it stays in L2)
    dim_t l2_rows;   // bwd_weights: src and diff_dst rows reduced together
    dim_t l2_block;  // gemm: the f32 block of C a unit accumulates
    dim_t l2_group;  // gather: a group's packed weights (every channel block) kept in L2
    dim_t l2_band;   // gather: the A rows of a band of units, read by every channel block
};
/// 5/6 of L1 (room for the A rows and C tile next to the panel); 1/8 of L2 for a whole-K panel
/// (shared with the data it multiplies) and for the gemm's C block; 1/4 of L2 for the
/// bwd_weights rows, for a group's weights and for a band's A rows. On a 48 KiB / 2 MiB core
/// the first four are the constants the kernels used before (40 KiB, 256 KiB, 512 KiB,
/// 256 KiB).
cache_budget budget_of(const cache_sizes &c);

/// The size of equal chunks, at most `most`, that cover n: as few chunks as chunks of `most`
/// would make, and none much smaller than the others (`most` itself when n <= most or most <= 0).
dim_t balanced_chunk(dim_t n, dim_t most);

/// Images per chunk of a batch of mb (> 0) whose copies take `image_bytes` per image: as many as
/// fit in half the L2 of `nthr` threads, at least one, in chunks of equal size (mb when nothing
/// is copied). The copies of a chunk are then read back from cache.
dim_t images_within_l2(double image_bytes, dim_t mb, int nthr, const cache_sizes &c);

/// Whether an output of `bytes` written once (fwd, bwd_data) is stored past the caches, with no
/// read of its lines for ownership: from 8x the L2 of `nthr` threads, nothing reads it back from
/// cache soon. The direct kernels' gather and the depthwise kernel both take this rule.
bool output_streams_past_caches(double bytes, int nthr, const cache_sizes &c);

std::string to_string(const cache_sizes &c);

}  // namespace convgrad::detail
