// The threading layer (src/threading/parallel.hpp): every ithr runs exactly once whatever team
// OpenMP grants, and an exception thrown on any thread of a region reaches the caller (the
// first one) instead of std::terminate.
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <mutex>
#include <new>
#include <set>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

#include "threading/parallel.hpp"
#include "threading/scratch_cache.hpp"

namespace convgrad::detail {
namespace {

TEST(Threading, EveryIthrOnce) {
    auto check = [](int nthr) {
        std::vector<std::atomic<int>> seen(static_cast<size_t>(nthr));
        parallel(nthr, [&](int ithr, int n) {
            EXPECT_EQ(n, nthr);
            seen[size_t(ithr)]++;
        });
        for (int i = 0; i < nthr; ++i) EXPECT_EQ(seen[size_t(i)].load(), 1) << nthr << " threads, ithr " << i;
    };
    check(1);
    check(2);
    // Inside another region OpenMP grants a team of one (nesting is off): all 5 parts still run,
    // one after the other, so per-part results never depend on the team OpenMP grants.
#pragma omp parallel num_threads(2)
    check(5);
}

TEST(Threading, StaticSplitCoversRange) {
    for (int nthr : {1, 2, 5})
        for (int64_t n : {0, 1, 4, 17}) {
            int64_t next = 0;
            for (int i = 0; i < nthr; ++i) {
                int64_t s, e;
                balance211(n, nthr, i, s, e);
                EXPECT_EQ(s, next);
                EXPECT_LE(e - s, n / nthr + 1);
                next = e;
            }
            EXPECT_EQ(next, n);
        }
}

TEST(Threading, WeightedSplitTakesEachItemOnceAndBalancesTheWeight) {
    // Runs of equally heavy items (stride phases: one heavy, three that only store zeros; many
    // light ones; a run of one item; empty runs): every item goes to exactly one thread, in
    // contiguous ranges, and each thread's weight is within one item of an even share.
    const std::vector<std::vector<std::pair<int64_t, double>>> cases = {
        {{131, 513.0}, {131, 1.0}, {131, 1.0}, {131, 1.0}},
        {{131, 1.0}, {131, 1.0}, {131, 1.0}, {131, 513.0}},
        {{3, 5.0}, {0, 7.0}, {1, 1000.0}, {40, 2.0}, {7, 1.0}},
        {{1, 3.0}},
        {{17, 4.5}, {17, 4.5}, {9, 0.5}}};
    for (const auto &runs : cases)
        for (int nthr : {1, 2, 3, 5, 8}) {
            double total = 0, heaviest = 0;
            for (const auto &[n, w] : runs) {
                total += double(n) * w;
                if (n > 0) heaviest = std::max(heaviest, w);
            }
            std::vector<std::vector<int>> taken(runs.size());
            for (size_t r = 0; r < runs.size(); ++r) taken[r].assign(size_t(runs[r].first), 0);
            for (int ithr = 0; ithr < nthr; ++ithr) {
                weighted_share sh = weighted_share_of(total, nthr, ithr);
                double mine = 0;
                for (size_t r = 0; r < runs.size(); ++r) {
                    int64_t s, e;
                    weighted_next(sh, runs[r].first, runs[r].second, s, e);
                    ASSERT_LE(0, s);
                    ASSERT_LE(e, runs[r].first);
                    for (int64_t i = s; i < e; ++i) ++taken[r][size_t(i)];
                    mine += double(std::max<int64_t>(e - s, 0)) * runs[r].second;
                }
                EXPECT_LE(std::abs(mine - total / nthr), heaviest)
                    << "case of " << runs.size() << " runs, thread " << ithr << " of " << nthr;
            }
            for (size_t r = 0; r < runs.size(); ++r)
                for (int t : taken[r]) ASSERT_EQ(t, 1) << "run " << r << ", " << nthr << " threads";
        }
}

TEST(Threading, BadAllocOnAWorkerReachesTheCaller) {
    for (int thrower : {0, 1}) {
        EXPECT_THROW(parallel(2,
                              [&](int ithr, int) {
                                  if (ithr == thrower) throw std::bad_alloc();
                              }),
                     std::bad_alloc)
            << "thrown by ithr " << thrower;
    }
}

TEST(Threading, OtherExceptionsAndAllThreadsThrowing) {
    EXPECT_THROW(parallel(2, [](int, int) { throw std::runtime_error("x"); }), std::runtime_error);
    EXPECT_THROW(parallel(1, [](int, int) { throw std::logic_error("y"); }), std::logic_error);
    // The region is usable again afterwards.
    std::atomic<int> n{0};
    parallel(2, [&](int, int) { n++; });
    EXPECT_EQ(n.load(), 2);
}

TEST(Threading, ThreadCountAboveTheLimitIsAnError) {
    const int saved = omp_get_max_threads();
    omp_set_num_threads(max_thread_count + 1);
    try {
        threads_for(1e12);
        ADD_FAILURE() << "no error";
    } catch (const error &e) {
        EXPECT_EQ(e.code(), status::invalid_arguments);
        EXPECT_NE(std::string(e.what()).find("1025"), std::string::npos) << e.what();
    }
    omp_set_num_threads(max_thread_count);
    EXPECT_EQ(threads_for(1e12), max_thread_count);
    EXPECT_EQ(threads_for(10), 1);  // tiny work stays on the calling thread
    omp_set_num_threads(saved);
}

// Per-thread hooks (issue 8 item 5): enter and leave once per thread that takes part, leave
// also after the body threw, and not after enter threw.
struct hook_log {
    std::atomic<int> enters{0}, leaves{0};
    std::mutex mutex;
    std::set<std::thread::id> entered;  // each thread once
    std::atomic<int> repeated{0};
};
thread_local int hook_depth = 0;  // regions entered and not left on this thread

thread_hooks counting_hooks(hook_log &log) {
    thread_hooks h;
    h.ctx = &log;
    h.enter = [](void *ctx) {
        auto &log = *static_cast<hook_log *>(ctx);
        log.enters++;
        hook_depth++;
        std::lock_guard<std::mutex> lock(log.mutex);
        if (!log.entered.insert(std::this_thread::get_id()).second) log.repeated++;
    };
    h.leave = [](void *ctx) {
        static_cast<hook_log *>(ctx)->leaves++;
        hook_depth--;
    };
    return h;
}

TEST(Threading, HooksRunOncePerThread) {
    for (int nthr : {1, 2, 3}) {
        hook_log log;
        std::atomic<int> bodies{0}, bodies_inside_hooks{0};
        parallel(
            nthr,
            [&](int, int) {
                bodies++;
                if (hook_depth == 1) bodies_inside_hooks++;
            },
            counting_hooks(log));
        EXPECT_EQ(bodies.load(), nthr);
        EXPECT_EQ(bodies_inside_hooks.load(), nthr) << "every call runs between its thread's enter and leave";
        EXPECT_EQ(log.enters.load(), log.leaves.load());
        // one pair per thread of the team, not per ithr
        EXPECT_GE(log.enters.load(), 1);
        EXPECT_LE(log.enters.load(), nthr);
        EXPECT_EQ(log.repeated.load(), 0) << "a thread entered twice";
        EXPECT_EQ(hook_depth, 0);
    }
}

TEST(Threading, LeaveRunsAfterTheBodyThrew) {
    for (int nthr : {1, 2}) {
        hook_log log;
        EXPECT_THROW(parallel(
                         nthr, [](int ithr, int) { if (ithr == 0) throw std::runtime_error("body"); },
                         counting_hooks(log)),
                     std::runtime_error);
        EXPECT_EQ(log.enters.load(), log.leaves.load()) << nthr << " threads";
        EXPECT_GE(log.leaves.load(), 1);
    }
}

TEST(Threading, FailedEnterSkipsBodyAndLeave) {
    std::atomic<int> bodies{0}, leaves{0};
    thread_hooks h;
    h.ctx = &leaves;
    h.enter = [](void *) { throw std::logic_error("enter"); };
    h.leave = [](void *ctx) { (*static_cast<std::atomic<int> *>(ctx))++; };
    for (int nthr : {1, 2}) {
        EXPECT_THROW(parallel(nthr, [&](int, int) { bodies++; }, h), std::logic_error);
    }
    EXPECT_EQ(bodies.load(), 0);
    EXPECT_EQ(leaves.load(), 0);
}

TEST(Threading, ThrowingLeaveIsRethrown) {
    thread_hooks h;
    h.leave = [](void *) { throw std::bad_alloc(); };
    EXPECT_THROW(parallel(2, [](int, int) {}, h), std::bad_alloc);
    EXPECT_THROW(parallel(1, [](int, int) {}, h), std::bad_alloc);
}

TEST(Threading, NestedRegionsNestTheirHooks) {
    hook_log outer, inner;
    std::atomic<int> max_depth{0};
    parallel(
        2,
        [&](int, int) {
            parallel(
                3,
                [&](int, int) {
                    int d = hook_depth, seen = max_depth.load();
                    while (d > seen && !max_depth.compare_exchange_weak(seen, d)) {
                    }
                },
                counting_hooks(inner));
        },
        counting_hooks(outer));
    EXPECT_EQ(max_depth.load(), 2) << "inner bodies run inside both regions' hooks";
    EXPECT_EQ(outer.enters.load(), outer.leaves.load());
    EXPECT_EQ(inner.enters.load(), inner.leaves.load());
    EXPECT_EQ(inner.enters.load(), 2) << "each of the 2 outer calls enters its inner region once, on a team of one";
    EXPECT_EQ(hook_depth, 0);
}

TEST(Threading, TypedScratchPerThread) {
    // Each thread gets its own aligned block of the requested element count; the two threads'
    // blocks, alive at once, do not overlap.
    std::vector<uintptr_t> begin(2);
    std::atomic<int> ready{0}, team{1};
    parallel(2, [&](int ithr, int) {
        team = omp_get_num_threads();
        scratch_buffer<uint16_t> buf(1000);
        EXPECT_EQ(reinterpret_cast<uintptr_t>(buf.data()) % 64, 0u);
        EXPECT_EQ(buf.size(), 1000u);
        for (size_t i = 0; i < buf.size(); ++i) buf[i] = uint16_t(i + size_t(ithr));
        begin[size_t(ithr)] = reinterpret_cast<uintptr_t>(buf.data());
        ready++;
        // (with a team of one the two calls run one after the other: nothing to wait for)
        for (int spin = 0; ready.load() < 2 && spin < 1000000; ++spin) {
        }
        for (size_t i = 0; i < buf.size(); ++i) ASSERT_EQ(buf[i], uint16_t(i + size_t(ithr)));
    });
    if (team.load() >= 2) {
        const uintptr_t lo = std::min(begin[0], begin[1]), hi = std::max(begin[0], begin[1]);
        EXPECT_GE(hi - lo, 2000u) << "the blocks overlap";
    }
    scratch_buffer<double> empty(0);
    EXPECT_NE(empty.data(), nullptr);
}

// An execution's blocks, acquired in a kernel's order (big copies between small tables) and
// released, are each served again by its own cached block the next time: a small request does
// not take a big block (whose own request would then be allocated afresh, its pages faulted in
// on every execution), and the cache holds all the big ones.
TEST(Threading, ScratchCacheServesEachBlockOfAnExecutionAgain) {
    const size_t KiB = 1024, MiB = KiB * KiB;
    const std::vector<size_t> sizes = {13 * MiB, 4 * KiB,  5 * MiB + 64, 64,      200 * KiB,
                                       1 * KiB,  64 * KiB, 128,          2 * MiB, 512};
    // (A thread of its own: a fresh cache, whatever the other tests left in this one's.)
    std::thread([&] {
        std::vector<void *> first;
        for (int round = 0; round < 2; ++round) {
            std::vector<void *> p;
            std::vector<size_t> cap;
            for (size_t bytes : sizes) {
                size_t c = 0;
                p.push_back(scratch_acquire(bytes, &c));
                cap.push_back(c);
                EXPECT_GE(c, bytes);
                EXPECT_LE(c, std::max(4 * bytes, bytes + 256 * KiB))
                    << "a request of " << bytes << " bytes took a block it does not need";
            }
            for (size_t i = 0; i < sizes.size(); ++i)
                if (round == 1 && sizes[i] >= 256 * KiB)
                    EXPECT_EQ(p[i], first[i])
                        << "the block of " << sizes[i] << " bytes was allocated again";
            for (size_t i = sizes.size(); i-- > 0;) scratch_release(p[i], cap[i]);
            first = p;
        }
    }).join();
}

}  // namespace
}  // namespace convgrad::detail
