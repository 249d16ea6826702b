// The ThreadSanitizer job's self-check (scripts/ci-hardening.sh, step tsan): built with the same
// flags and OpenMP runtime as the tests, this program must make TSan report a data race between
// OpenMP threads when given an argument, and nothing without one. A setup that cannot see races
// between OpenMP threads, or reports false ones, fails the job instead of passing it silently.
#include <omp.h>

#include <atomic>
#include <cstdio>
#include <vector>

// The planted race's variable has an 8-byte word of its own: TSan keeps a few accesses per word,
// and a neighbour's accesses (the team size, read by both threads) could evict the first write.
struct alignas(64) planted_cell {
    int value = 0;
};

int main(int argc, char **) {
    std::vector<int> v(1000, 0);
    long sum = 0;
#pragma omp parallel num_threads(2)
    {
        const int t = omp_get_thread_num();
        for (int i = t * 500; i < t * 500 + 500; ++i) v[size_t(i)] = i;  // disjoint halves
    }
#pragma omp parallel num_threads(2)
    {
#pragma omp critical
        sum += v[size_t(omp_get_thread_num()) * 600];  // after the region's join: ordered
    }
    planted_cell racy;
    if (argc > 1) {
        // Both threads write `racy`, thread 0 first, thread 1 after seeing thread 0's relaxed
        // flag. A relaxed atomic orders nothing for TSan, so no happens-before edge joins the
        // two writes, whatever the timing. (A bare `racy += 1` on both threads went unreported
        // in about 1 run of 100 with clang 14 and libarcher: a CI run failed on it.)
        alignas(64) std::atomic<int> written{0};
        alignas(64) int team = 0;
#pragma omp parallel num_threads(2)
        {
#pragma omp single
            team = omp_get_num_threads();
            if (team == 2) {
                if (omp_get_thread_num() == 0) {
                    racy.value = 1;
                    written.store(1, std::memory_order_relaxed);
                } else {
                    while (written.load(std::memory_order_relaxed) == 0) {
                    }
                    racy.value = 2;
                }
            }
        }
        if (team != 2) {
            std::printf("omp_race: the runtime gave %d threads, not 2\n", team);
            return 3;
        }
    }
    std::printf("%ld %d\n", sum, racy.value);
    return 0;
}
