// Every row of the kernel inventory (kernels/inventory.cpp) on each benchmark problem it accepts
// (and the reference on small ones), timed on the internal kernel interface: a new row gets its
// benchmark rows here without code. Rows whose CPU features are missing are skipped (listed on
// stderr). Threads: OMP_NUM_THREADS.
// Also the microkernels alone (ukernel/<unit>/<type>/MxNV, one thread, operands in L1): the
// ceiling that the schedules around them can reach.
//   convgrad_bench_kernels [--problem=<Kind>:<desc>[:bf16][:bias]]... [--benchmark_* flags]
#include <benchmark/benchmark.h>
#include <omp.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "bench_counters.hpp"
#include "bench_problems.hpp"
#include "dispatch/registry.hpp"
#include "fma_peak.hpp"
#include "kernels/ukernel/ukernel_set.hpp"

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

// One microkernel call C[M x NV*W] = sum over nbatch batch elements of A_b * B_b, each of K
// (A, B and C stay in L1): K = 256 in one element (a long reduction), or a convolution's
// shape: a short K per tap over several taps (the 3-channel stem's 7 taps of 21; 9 taps of 16),
// or the one tap of a 1x1 layer over 64 channels (ResNet-50's 1x1 convolutions). With `pixel`
// > 0, bwd_weights' shape: row m of A is channel m of K pixels `pixel` floats apart (src^T,
// read at a stride), one batch element per image row (ResNet-50's 1x1 weight gradient: rows
// of 56 pixels of 64 channels).
// With `narrow` bf16, C is the layer's bf16 output, rounded by the microkernel from its
// registers (brgemm_args::C16), rows `ldc` elements apart as in a 1x1 layer of that many output
// channels: the store a short K pays once per call.
// With `spaced`, A's rows are given per batch element as row 0 and their spacing
// (brgemm_args::lda) instead of a table of row pointers.
template <typename E, int P>
void run_ukernel_rows(benchmark::State &state, void (*fn)(int, int, const detail::brgemm_args<E> &),
                      int M, int NV, int W, dim_t K, int nbatch, dim_t pixel, dim_t ldb,
                      data_type narrow, dim_t ldc, bool spaced) {
    const dim_t N = dim_t(NV) * W;
    if (ldb <= 0) ldb = N;
    const dim_t per_batch = pixel > 0 ? K * pixel : M * K;
    std::vector<E> A(size_t(per_batch * nbatch), E(1)), B(size_t(K * ldb * nbatch), E(1));
    std::vector<float> C(size_t(M * N));
    std::vector<const E *> rows, bs;
    std::vector<float *> crows;
    for (int b = 0; b < nbatch; ++b) {
        for (int m = 0; m < M; ++m)
            rows.push_back(A.data() + b * per_batch + (pixel > 0 ? m : m * K));
        bs.push_back(B.data() + b * K * ldb);
    }
    for (int m = 0; m < M; ++m) crows.push_back(C.data() + m * N);
    if (ldc < N) ldc = N;
    std::vector<uint16_t> C16(size_t(M * ldc) + 32);
    std::vector<uint16_t *> c16rows;
    // (A 64-byte aligned start, as the layer's lines: the streamed stores need it.)
    uint16_t *const c16 = C16.data() + (64 - reinterpret_cast<uintptr_t>(C16.data()) % 64) % 64 / 2;
    for (int m = 0; m < M; ++m) c16rows.push_back(c16 + m * ldc);
    detail::brgemm_args<E> a{};
    a.K = K;
    a.nbatch = nbatch;
    a.A = rows.data();
    if (spaced) {  // (the same rows, given per batch element as row 0 and a spacing)
        for (int b = 0; b < nbatch; ++b) rows[size_t(b)] = rows[size_t(b * M)];
        a.lda = pixel > 0 ? 1 : K;
    }
    a.aks = pixel > 0 ? pixel : P;
    a.B = bs.data();
    a.ldb = ldb * P;
    a.C = crows.data();
    a.tail = W;
    a.init = detail::ukernel_init::zero;
    a.narrow = narrow;
    a.C16 = c16rows.data();
    bench::timed_loop(state, 2.0 * double(M) * double(N) * double(K) * nbatch, [&] {
        fn(M, NV, a);
        benchmark::DoNotOptimize(C.data());
        benchmark::DoNotOptimize(C16.data());
    });
}
template <typename E, int P>
void run_ukernel(benchmark::State &state, void (*fn)(int, int, const detail::brgemm_args<E> &),
                 int M, int NV, int W, dim_t K, int nbatch, dim_t pixel, dim_t ldb,
                 data_type narrow, dim_t ldc) {
    run_ukernel_rows<E, P>(state, fn, M, NV, W, K, nbatch, pixel, ldb, narrow, ldc, false);
}

// The largest register tile of each vector count that the plan uses (accumulators, B vectors
// and one broadcast within the register file), for every microkernel this machine can run
// (not the emulation of AVX-512, which is there to be tested).
void register_ukernel_benchmarks() {
    for (const detail::ukernel_set *s : detail::all_ukernel_sets()) {
        if (!detail::isa_available(s->isa) || s->emulated) continue;
        for (int nv : {1, 2, 3, 4}) {
            const int m = std::min(detail::ukernel_max_rows, (s->nregs - nv - 1) / nv);
            const std::string tile = std::to_string(m) + "x" + std::to_string(nv);
            struct shape {
                const char *suffix;
                dim_t K;
                int nbatch;
            };
            for (const shape sh : {shape{"", 256, 1}, shape{"/k21x7", 21, 7}, shape{"/k16x9", 16, 9},
                                   shape{"/k64x1", 64, 1}}) {
                benchmark::RegisterBenchmark(
                    ("ukernel/" + std::string(s->name) + "/f32/" + tile + sh.suffix).c_str(),
                    run_ukernel<float, 1>, s->f32, m, nv, s->vlen, sh.K, sh.nbatch, dim_t(0),
                    dim_t(0), data_type::f32, dim_t(0));
                if (s->bf16 && sh.K % 2 == 0)
                    benchmark::RegisterBenchmark(
                        ("ukernel/" + std::string(s->name) +
                         (s->bf16_native ? "/bf16/" : "/bf16_emulated/") + tile + sh.suffix)
                            .c_str(),
                        run_ukernel<uint16_t, 2>, s->bf16, m, nv, s->vlen, sh.K, sh.nbatch,
                        dim_t(0), dim_t(0), data_type::f32, dim_t(0));
            }
            // ResNet-50's res2 1x1 forward in bf16: K = 64, its bf16 output (256 channels)
            // rounded by the microkernel.
            if (s->bf16)
                benchmark::RegisterBenchmark(
                    ("ukernel/" + std::string(s->name) +
                     (s->bf16_native ? "/bf16/" : "/bf16_emulated/") + tile + "/k64x1_out_bf16")
                        .c_str(),
                    run_ukernel<uint16_t, 2>, s->bf16, m, nv, s->vlen, dim_t(64), 1, dim_t(0),
                    dim_t(0), data_type::bf16, dim_t(256));
            benchmark::RegisterBenchmark(
                ("ukernel/" + std::string(s->name) + "/f32/" + tile + "/bwdw_k56x7_a64").c_str(),
                run_ukernel<float, 1>, s->f32, m, nv, s->vlen, dim_t(56), 7, dim_t(64), dim_t(0),
                data_type::f32, dim_t(0));
            // One vector: 9 taps of 8 channels (ResNeXt's grouped 3x3 on AVX2), the rows from a
            // table and given as row 0 and a spacing (brgemm_args::lda).
            if (nv == 1)
                for (const bool spaced : {false, true})
                    benchmark::RegisterBenchmark(("ukernel/" + std::string(s->name) + "/f32/" +
                                                  tile + (spaced ? "/k8x9_spaced" : "/k8x9_table"))
                                                     .c_str(),
                                                 run_ukernel_rows<float, 1>, s->f32, m, nv, s->vlen,
                                                 dim_t(8), 9, dim_t(0), dim_t(0), data_type::f32,
                                                 dim_t(0), spaced);
            // The same in the layer's place: B one block of output channels of rows of 256.
            benchmark::RegisterBenchmark(
                ("ukernel/" + std::string(s->name) + "/f32/" + tile + "/bwdw_k56x5_a64_b256")
                    .c_str(),
                run_ukernel<float, 1>, s->f32, m, nv, s->vlen, dim_t(56), 5, dim_t(64), dim_t(256),
                data_type::f32, dim_t(0));
        }
    }
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
    register_ukernel_benchmarks();
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

// ---- The AMX microkernel (src/kernels/amx/amx_ukernel.hpp), on its own -----------------------
// One 32 x 32 block of C over K = 512 and a batch of 4 (packed operands in L1/L2), bf16 and f16,
// native where the CPU grants AMX, else through the emulation, labelled as such (the emulated
// rows measure the emulation, a test tool, not a kernel). Select with --benchmark_filter=amx.
// Kept self-contained at the end of this file: registered statically, run by main() above.
#include <vector>

#include "kernels/amx/amx_pack.hpp"
#include "kernels/amx/amx_ukernel.hpp"

namespace {

void bench_amx_ukernel(benchmark::State &state, convgrad::detail::amx::amx_backend backend,
                       convgrad::detail::amx::amx_dot dot) {
    namespace amx = convgrad::detail::amx;
    constexpr int M = 32, N = 32, K = 512, batch = 4;
    std::vector<float> af(size_t(M * K)), bf(size_t(K * N));
    for (size_t i = 0; i < af.size(); ++i) af[i] = float(int(i % 7) - 3) * 0.25f;
    for (size_t i = 0; i < bf.size(); ++i) bf[i] = float(int(i % 5) - 2) * 0.5f;
    std::vector<std::vector<uint16_t>> a(batch, std::vector<uint16_t>(size_t(M * K))),
        b(batch, std::vector<uint16_t>(size_t(K * N)));
    std::vector<const uint16_t *> ap, bp;
    for (int i = 0; i < batch; ++i) {
        amx::pack_a_panel({convgrad::data_type::f32, af.data(), K, 1}, M, K, dot, a[size_t(i)].data(), K);
        amx::pack_b_vnni({convgrad::data_type::f32, bf.data(), N, 1}, K, N, dot, b[size_t(i)].data(), 2 * N);
        ap.push_back(a[size_t(i)].data());
        bp.push_back(b[size_t(i)].data());
    }
    std::vector<float> c(size_t(M * N));
    amx::ukernel_args args;
    args.M = M, args.N = N, args.K = K, args.batch = batch, args.A = ap.data(), args.B = bp.data();
    args.lda = K, args.ldb = 2 * N, args.C = c.data(), args.ldc = N, args.accumulate = false;
    convgrad::bench::timed_loop(state, 2.0 * M * N * K * batch, [&] { amx::ukernel(backend, dot, args); });
}

const bool amx_ukernel_benchmarks_registered = [] {
    namespace amx = convgrad::detail::amx;
    for (amx::amx_dot dot : {amx::amx_dot::bf16, amx::amx_dot::f16}) {
        const amx::amx_backend backend = amx::native_usable(dot) ? amx::amx_backend::native : amx::amx_backend::emulated;
        const std::string name = std::string("amx_ukernel/") + amx::to_string(dot) + "/" + amx::to_string(backend) +
                                 "/32x32x512xbatch4";
        benchmark::RegisterBenchmark(name.c_str(), bench_amx_ukernel, backend, dot)->Unit(benchmark::kMicrosecond);
    }
    return true;
}();

}  // namespace

// ---- The AMX convolution kernels (src/kernels/amx/amx_conv_kernels.hpp) ------------------------
// A ResNet-style 3x3 layer, each direction, in bf16 and f16, on the native tiles where this machine grants them,
// else on the emulation (a test tool: its rows show the schedule's overheads, not AMX speed),
// next to the kernel the dispatcher picks for the same problem in the same run, so that the
// ratio of the two rows is meaningful on a loaded machine. Select with --benchmark_filter=amx_conv.
#include "kernels/amx/amx_conv_kernels.hpp"

namespace {

const bool amx_conv_benchmarks_registered = [] {
    namespace amx = convgrad::detail::amx;
    static std::vector<bench::bench_problem> problems;
    for (op_kind kind : {op_kind::Convolution, op_kind::ConvolutionBackwardData,
                         op_kind::ConvolutionBackwardWeights})
        for (data_type dt : {data_type::bf16, data_type::f16})
            problems.push_back(bench::make_problem(kind, "mb2ic64ih28oc64oh28kh3ph1", dt));
    for (const bench::bench_problem &p : problems) {
        const amx::amx_dot dot =
            p.r.prob.dt == data_type::bf16 ? amx::amx_dot::bf16 : amx::amx_dot::f16;
        const amx::amx_backend backend =
            amx::native_usable(dot) ? amx::amx_backend::native : amx::amx_backend::emulated;
        const std::string name = std::string("amx_conv/") + amx::to_string(backend) + "/" + p.label;
        benchmark::RegisterBenchmark(name.c_str(), [&p, backend](benchmark::State &state) {
            bench::problem_buffers buf(p.r);
            const auto k = amx::make_conv_kernel(p.r.prob, backend);
            const detail::conv_args args = buf.args(p.r);
            bench::timed_loop(state, 2 * p.r.prob.macs(), [&] { k->execute(args); });
        })->UseRealTime()->Unit(benchmark::kMillisecond);
        benchmark::RegisterBenchmark(("amx_conv/dispatched/" + p.label).c_str(),
                                     [&p](benchmark::State &state) {
                                         bench::problem_buffers buf(p.r);
                                         const auto d = detail::dispatch(
                                             p.r.prob, detail::effective_features(), false);
                                         state.SetLabel(d.impl->name);
                                         const detail::conv_args args = buf.args(p.r);
                                         bench::timed_loop(state, 2 * p.r.prob.macs(),
                                                           [&] { d.k->execute(args); });
                                     })
            ->UseRealTime()
            ->Unit(benchmark::kMillisecond);
    }
    return true;
}();

}  // namespace
