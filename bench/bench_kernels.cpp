// Every row of the kernel inventory (kernels/inventory.cpp) on each benchmark problem it accepts
// (and the reference on small ones), timed on the internal kernel interface: a new row gets its
// benchmark rows here without code. Rows whose CPU features are missing are skipped (listed on
// stderr). Threads: OMP_NUM_THREADS.
//   convgrad_bench_kernels [--problem=<Kind>:<desc>[:bf16][:bias]]... [--benchmark_* flags]
#include <benchmark/benchmark.h>
#include <omp.h>

#include <cstdio>
#include <string>

#include "bench_counters.hpp"
#include "bench_problems.hpp"
#include "dispatch/registry.hpp"
#include "fma_peak.hpp"

using namespace convgrad;

namespace {

// The reference takes seconds beyond this many multiply-adds.
constexpr double max_reference_macs = 1e8;

void run_kernel(benchmark::State &state, const bench::bench_problem *p,
                const detail::impl_desc *impl) {
    bench::problem_buffers buf(p->r);
    const auto k = impl->create(p->r.prob);
    const detail::conv_args args = buf.args(p->r);
    bench::timed_loop(state, 2 * p->r.prob.macs(), [&] { k->execute(args); });
}

}  // namespace

int main(int argc, char **argv) {
    benchmark::Initialize(&argc, argv);
    std::vector<bench::bench_problem> problems;
    try {
        problems = bench::problems_from_args(argc, argv);
    } catch (const error &e) {
        std::fprintf(stderr, "%s\n", e.what());
        return 2;
    }
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;
    const int threads = omp_get_max_threads();
    benchmark::AddCustomContext("threads", std::to_string(threads));
    benchmark::AddCustomContext("effective_isa", detail::to_string(detail::effective_isa()));
    benchmark::AddCustomContext("fma_peak_gflops",
                                std::to_string(bench::measure_fma_peak_gflops(threads)));

    for (const auto &impl : detail::impl_list())
        if (!detail::isa_available(impl.isa))
            std::fprintf(
                stderr, "%s: skipped, this CPU (or CONVGRAD_MAX_ISA) lacks %s\n", impl.name,
                detail::cpu_features::from_missing(impl.needs(), detail::effective_features())
                    .to_string()
                    .c_str());
    for (const auto &p : problems) {
        for (const auto &impl : detail::impl_list()) {
            const bool is_ref = impl.create == detail::reference_impl().create;
            if (!detail::isa_available(impl.isa) || !impl.serves(p.r.prob).empty() ||
                !impl.why_not(p.r.prob).empty())
                continue;
            if (is_ref && p.r.prob.macs() > max_reference_macs) continue;
            benchmark::RegisterBenchmark((std::string(impl.name) + "/" + p.label).c_str(),
                                         run_kernel, &p, &impl)
                ->UseRealTime()
                ->Unit(benchmark::kMillisecond);
        }
    }
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
