// The threading layer (src/threading/parallel.hpp): every ithr runs exactly once whatever team
// OpenMP grants, and an exception thrown on any thread of a region reaches the caller (the
// first one) instead of std::terminate.
#include <gtest/gtest.h>
#include <omp.h>

#include <atomic>
#include <new>
#include <stdexcept>
#include <vector>

#include "threading/parallel.hpp"

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

}  // namespace
}  // namespace convgrad::detail
