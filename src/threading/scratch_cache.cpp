#include "threading/scratch_cache.hpp"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <new>

namespace convgrad::detail {
namespace {

// Up to four blocks per thread, freed when the thread ends.
struct block_cache {
    static constexpr int slots = 4;
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

void *scratch_acquire(size_t bytes, size_t *capacity) {
    bytes = (bytes + 63) / 64 * 64;
    int best = -1;
    for (int i = 0; i < block_cache::slots; ++i)
        if (cache.p[i] && cache.n[i] >= bytes && (best < 0 || cache.n[i] < cache.n[best])) best = i;
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
