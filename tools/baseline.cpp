#include "baseline.hpp"

#include "core/resolve.hpp"

#if CONVGRAD_WITH_ONEDNN
#include "onednn/onednn_baseline.hpp"
#endif
#if CONVGRAD_WITH_FMA_PEAK
#include "fma_peak.hpp"
#endif

namespace convgrad::tool {

bool onednn_available() { return CONVGRAD_WITH_ONEDNN != 0; }

baseline_time time_onednn_for(const op &o, int threads, int reps, bool fastest) {
    baseline_time t;
#if CONVGRAD_WITH_ONEDNN
    const detail::resolved_op r = detail::resolve_op(o, o.inputs(), o.outputs());
    const bench::onednn_timing b = bench::time_onednn(r.prob, threads, reps, fastest);
    t.plain_ms = b.plain_ms;
    t.blocked_ms = b.blocked_ms;
    t.note = b.note;
#else
    (void)o, (void)threads, (void)reps, (void)fastest;
    t.note = "built without oneDNN (install libdnnl-dev)";
#endif
    return t;
}

double fma_peak_gflops(int threads) {
#if CONVGRAD_WITH_FMA_PEAK
    return bench::measure_fma_peak_gflops(threads);
#else
    (void)threads;
    return NAN;
#endif
}

}  // namespace convgrad::tool
