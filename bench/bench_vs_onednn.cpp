// convgrad (public API: compile_op + execute) and oneDNN 2.6 side by side on the same problems:
// oneDNN with plain NXC tensors (reorders counted) and with its preferred blocked layouts.
// Threads: OMP_NUM_THREADS.
//   convgrad_bench_vs_onednn [--problem=<Kind>:<desc>[:bf16][:bias]]... [--benchmark_* flags]
#include <benchmark/benchmark.h>
#include <omp.h>

#include <cstdio>
#include <string>

#include "bench_counters.hpp"
#include "bench_problems.hpp"
#include "onednn/onednn_baseline.hpp"

using namespace convgrad;

namespace {

void run_convgrad(benchmark::State &state, const bench::bench_problem *p) {
    compiled_partition cp;
    try {
        cp = compile_op(p->o);
    } catch (const error &e) {
        state.SkipWithError(e.what());
        for (auto _ : state) {
        }
        return;
    }
    bench::problem_buffers buf(p->r);
    const auto in = buf.input_tensors(cp.inputs());
    const auto out = buf.output_tensors(cp.outputs());
    bench::timed_loop(state, 2 * p->r.prob.macs(), [&] { cp.execute(in, out); });
    state.SetLabel(cp.kernel_name());
}

void run_onednn(benchmark::State &state, const bench::bench_problem *p, bool plain) {
    std::string why_not;
    const auto c = bench::onednn_conv::create(p->r.prob, why_not);
    if (!c) {
        state.SkipWithError(why_not.c_str());
        for (auto _ : state) {
        }
        return;
    }
    bench::timed_loop(state, 2 * p->r.prob.macs(), [&] { plain ? c->run_plain() : c->run_blocked(); });
    state.SetLabel(c->impl_name());
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
    benchmark::AddCustomContext("fma_peak_gflops", std::to_string(bench::measure_fma_peak_gflops(threads)));

    for (const auto &p : problems) {
        auto reg = [&](const std::string &name, auto fn, auto... extra) {
            benchmark::RegisterBenchmark((name + "/" + p.label).c_str(), fn, &p, extra...)
                ->UseRealTime()
                ->Unit(benchmark::kMillisecond);
        };
        reg("convgrad", run_convgrad);
        reg("onednn_plain", run_onednn, true);
        reg("onednn_blocked", run_onednn, false);
    }
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
