// The ThreadSanitizer job's self-check (scripts/ci-hardening.sh, step tsan): built with the same
// flags and OpenMP runtime as the tests, this program must make TSan report a data race between
// OpenMP threads when given an argument, and nothing without one. A setup that cannot see races
// between OpenMP threads, or reports false ones, fails the job instead of passing it silently.
#include <omp.h>

#include <cstdio>
#include <vector>

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
    int racy = 0;
    if (argc > 1) {
#pragma omp parallel num_threads(2)
        racy += 1;  // unsynchronized read-modify-write on both threads
    }
    std::printf("%ld %d\n", sum, racy);
    return 0;
}
