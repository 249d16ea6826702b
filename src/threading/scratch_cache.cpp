#include "threading/scratch_cache.hpp"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <new>

namespace convgrad::detail {
namespace {

// Up to eight blocks per thread, freed when the thread ends. (An execution's thread holds up to
// ten at once: the vdpbf16ps forward, its copies, packed weights, zeros, taps and tables.)
struct block_cache {
    static constexpr int slots = 8;
    void *p[slots] = {};
    size_t n[slots] = {};
    ~block_cache() {
        for (int i = 0; i < slots; ++i) std::free(p[i]);
    }
};
thread_local block_cache cache;
std::atomic<bool> poison{false};

void *handed_out(void *p, size_t bytes) {
    if (poison.load(std::memory_order_relaxed)) std::memset(p, 0xFF, bytes);
    return p;
}

}  // namespace

// Whether a cached block of `block` bytes serves a request of `bytes`: it fits and does not
// dwarf it (at most 4x, or 256 KiB more). Any fitting block handed to any request gave a
// request of a few KiB the 5.5 MB block of an execution's output copy, which the copy's own
// request then allocated afresh and faulted in page by page on every execution (a cached block
// is freed when a larger one takes its slot): FCN's ConvTransposeBackwardData at batch 256
// took 13-15 ms instead of 3-4 (bf16, Zen 5 VM, 2 threads).
static bool serves(size_t block, size_t bytes) {
    return block >= bytes && (block / 4 <= bytes || block - bytes <= (size_t(256) << 10));
}

void *scratch_acquire(size_t bytes, size_t *capacity) {
    bytes = (bytes + 63) / 64 * 64;
    int best = -1;
    for (int i = 0; i < block_cache::slots; ++i)
        if (cache.p[i] && serves(cache.n[i], bytes) && (best < 0 || cache.n[i] < cache.n[best]))
            best = i;
    if (best >= 0) {
        void *p = cache.p[best];
        *capacity = cache.n[best];
        cache.p[best] = nullptr;
        cache.n[best] = 0;
        return handed_out(p, bytes);
    }
    void *p = std::aligned_alloc(64, bytes == 0 ? 64 : bytes);
    if (!p) throw std::bad_alloc();
    *capacity = bytes;
    return handed_out(p, bytes);
}

bool scratch_poison(bool on) {
    return poison.exchange(on);
}

void scratch_release(void *p, size_t capacity) {
    if (!p) return;
    // Keep it in an empty slot, or in place of the smallest cached block if it is larger.
    int slot = 0;
    for (int i = 0; i < block_cache::slots; ++i) {
        if (!cache.p[i]) {
            slot = i;
            break;
        }
        if (cache.n[i] < cache.n[slot]) slot = i;
    }
    if (cache.p[slot] && cache.n[slot] >= capacity) {
        std::free(p);
        return;
    }
    std::free(cache.p[slot]);
    cache.p[slot] = p;
    cache.n[slot] = capacity;
}

}  // namespace convgrad::detail
