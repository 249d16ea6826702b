#include "kernels/plan/cache_sizes.hpp"

#include <cpuid.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>

namespace convgrad::detail {

void cpuid4_cache(unsigned eax, unsigned ebx, unsigned ecx, int &level, int &type, dim_t &bytes) {
    type = int(eax & 0x1f);
    level = int((eax >> 5) & 0x7);
    const dim_t ways = dim_t((ebx >> 22) & 0x3ff) + 1, partitions = dim_t((ebx >> 12) & 0x3ff) + 1;
    const dim_t line = dim_t(ebx & 0xfff) + 1, sets = dim_t(ecx) + 1;
    bytes = ways * partitions * line * sets;
}

namespace {

// Sizes outside [4 KiB, 64 MiB] are firmware or hypervisor nonsense: ignore them.
bool sane(dim_t bytes) {
    return bytes >= 4 * 1024 && bytes <= 64 * 1024 * 1024;
}

cache_sizes read_caches() {
    cache_sizes c;
#if defined(_SC_LEVEL1_DCACHE_SIZE) && defined(_SC_LEVEL2_CACHE_SIZE)
    const long l1 = sysconf(_SC_LEVEL1_DCACHE_SIZE), l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
    if (sane(l1) && sane(l2)) return {l1, l2, "sysconf"};
#endif
    // CPUID leaf 4 (deterministic cache parameters; AMD reports the same layout in 0x8000001d,
    // and glibc's sysconf already covers it there).
    unsigned a, b, cx, d;
    if (__get_cpuid_max(0, nullptr) >= 4) {
        for (unsigned sub = 0; sub < 16; ++sub) {
            __cpuid_count(4, sub, a, b, cx, d);
            int level, type;
            dim_t bytes;
            cpuid4_cache(a, b, cx, level, type, bytes);
            if (type == 0) break;
            if (level == 1 && type == 1) c.l1d = bytes;
            if (level == 2 && (type == 3 || type == 1)) c.l2 = bytes;
        }
        if (sane(c.l1d) && sane(c.l2)) {
            c.source = "cpuid";
            return c;
        }
    }
    return {32 * 1024, 1024 * 1024, "fallback"};
}

}  // namespace

const cache_sizes &machine_caches() {
    static const cache_sizes c = read_caches();
    return c;
}

cache_budget budget_of(const cache_sizes &c) {
    cache_budget b;
    b.l1_panel = std::max<dim_t>(4 * 1024, c.l1d * 5 / 6);
    b.l2_whole = std::max<dim_t>(64 * 1024, c.l2 / 8);
    b.l2_rows = std::max<dim_t>(64 * 1024, c.l2 / 4);
    b.l2_block = std::max<dim_t>(64 * 1024, c.l2 / 8);
    b.l2_group = std::max<dim_t>(64 * 1024, c.l2 / 4);
    b.l2_band = std::max<dim_t>(64 * 1024, c.l2 / 4);
    return b;
}

std::string to_string(const cache_sizes &c) {
    return "L1d=" + std::to_string(c.l1d / 1024) + "KiB L2=" + std::to_string(c.l2 / 1024) +
           "KiB (" + c.source + ")";
}

dim_t balanced_chunk(dim_t n, dim_t most) {
    if (most <= 0 || n <= most) return most;
    const dim_t chunks = (n + most - 1) / most;
    return (n + chunks - 1) / chunks;
}

bool output_streams_past_caches(double bytes, int nthr, const cache_sizes &c) {
    return bytes >= 8.0 * double(c.l2) * nthr;
}

dim_t images_within_l2(double image_bytes, dim_t mb, int nthr, const cache_sizes &c) {
    if (image_bytes <= 0) return mb;
    const double room = double(c.l2) * nthr / 2;
    const double most = std::clamp(std::floor(room / image_bytes), 1.0, double(mb));
    return balanced_chunk(mb, dim_t(most));
}

}  // namespace convgrad::detail
