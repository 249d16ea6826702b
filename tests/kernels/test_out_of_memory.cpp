// Memory exhaustion during execute is the documented out_of_memory error, never std::terminate:
// for the reference and every kernel, on 2 threads, with the address space capped (setrlimit)
// just above what the test has allocated, so that the kernels' scratch cannot be had.
//
// The cap cannot be lifted again, so each case runs in a process of its own: the ctest
// out_of_memory_<op> sets CONVGRAD_TEST_ADDRESS_SPACE_CAP=1 and runs one case (label `rlimit`);
// elsewhere these tests skip. Not under AddressSanitizer or ThreadSanitizer: their shadow
// memory does not fit under an address-space cap.
#include <gtest/gtest.h>
#include <omp.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <new>

#include "core/resolve.hpp"
#include "dispatch/registry.hpp"
#include "util/tensor_buffer.hpp"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define CONVGRAD_NO_RLIMIT 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define CONVGRAD_NO_RLIMIT 1
#endif
#endif

namespace convgrad {
namespace {

using testing::tensor_buffer;

#ifndef CONVGRAD_NO_RLIMIT
// 1-D, bf16 (so every kernel makes f32 copies of the data: 2x the user's bytes), 16 channels in
// 8 groups of 2 (the grouped kernels accept it, the direct ones too), 1M pixels: 32 MiB per
// data tensor, 64 MiB per f32 copy.
op make_op(op_kind kind) {
    const dim_t W = 1 << 20;
    const dims x{1, W, 16}, w{16, 2, 1};
    op o(3, kind, "oom");
    o.set_attr("strides", dims{1}).set_attr("dilations", dims{1}).set_attr("pads_begin", dims{0});
    o.set_attr("pads_end", dims{0}).set_attr("groups", int64_t(8));
    o.set_attr("weights_format", std::string("OIX"));
    if (kind == op_kind::ConvolutionBackwardWeights) {
        o.set_attr("weights_shape", w);
        o.add_input(logical_tensor(0, data_type::bf16, x)).add_input(logical_tensor(1, data_type::bf16, x));
    } else {
        if (kind == op_kind::ConvolutionBackwardData) o.set_attr("dst_shape", x);
        o.add_input(logical_tensor(0, data_type::bf16, x)).add_input(logical_tensor(1, data_type::bf16, w));
    }
    o.add_output(logical_tensor::unknown(2, data_type::bf16));
    return o;
}

size_t address_space_bytes() {
    std::ifstream f("/proc/self/statm");
    size_t pages = 0;
    f >> pages;
    return pages * size_t(sysconf(_SC_PAGESIZE));
}

// In the child: 0 when every kernel (and the public API) reported the exhaustion properly.
int run_capped(op_kind kind) {
    omp_set_num_threads(2);
#pragma omp parallel num_threads(2)
    {  // start the OpenMP team before the cap: thread stacks are address space too
    }
    const op o = make_op(kind);
    const compiled_partition best = compile_op(o, impl_choice::best);
    const compiled_partition ref = compile_op(o, impl_choice::reference);
    const detail::resolved_op r = detail::resolve_op(o, o.inputs(), o.outputs());
    std::vector<tensor_buffer> in;
    for (const auto &lt : r.inputs) in.emplace_back(lt);
    tensor_buffer out(r.outputs[0]);
    std::vector<tensor> ins;
    for (auto &b : in) ins.push_back(b.as_tensor());

    const rlimit cap{address_space_bytes() + (48u << 20), RLIM_INFINITY};
    if (setrlimit(RLIMIT_AS, &cap) != 0) return 10;
    int failures = 0, kernels = 0;
    for (const auto &impl : detail::impl_list()) {
        if (!detail::isa_available(impl.isa) || !impl.why_not(r.prob).empty()) continue;
        ++kernels;
        detail::conv_args a;
        a.src = r.src_input >= 0 ? in[size_t(r.src_input)].data() : nullptr;
        a.dst = r.dst_input >= 0 ? in[size_t(r.dst_input)].data() : nullptr;
        a.wei = r.wei_input >= 0 ? in[size_t(r.wei_input)].data() : nullptr;
        a.out = out.data();
        try {
            impl.create(r.prob)->execute(a);
            std::fprintf(stderr, "%s: ran without running out of memory\n", impl.name);
            ++failures;
        } catch (const std::bad_alloc &) {
            std::fprintf(stderr, "%s: std::bad_alloc reached the caller\n", impl.name);
        }
    }
    for (const compiled_partition *cp : {&best, &ref}) {
        try {
            cp->execute(ins, {out.as_tensor()});
            ++failures;
        } catch (const error &e) {
            const std::string m = e.what();
            const bool ok = e.code() == status::out_of_memory && m.find("(op 3") != std::string::npos &&
                            m.find(cp->kernel_name()) != std::string::npos;
            std::fprintf(stderr, "API (%s): %s\n", cp->kernel_name().c_str(), m.c_str());
            failures += !ok;
        }
    }
    if (kernels < 2) std::fprintf(stderr, "only %d kernels accept the problem\n", kernels);
    return failures + (kernels < 2);
}

#endif  // CONVGRAD_NO_RLIMIT

class OutOfMemory : public ::testing::TestWithParam<op_kind> {};

TEST_P(OutOfMemory, EveryKernelReportsIt) {
#ifdef CONVGRAD_NO_RLIMIT
    GTEST_SKIP() << "an address-space cap is not usable under a sanitizer";
#else
    if (!std::getenv("CONVGRAD_TEST_ADDRESS_SPACE_CAP"))
        GTEST_SKIP() << "runs in a process of its own: ctest -R out_of_memory_";
    EXPECT_EQ(run_capped(GetParam()), 0) << to_string(GetParam());
#endif
}

INSTANTIATE_TEST_SUITE_P(Directions, OutOfMemory,
                         ::testing::Values(op_kind::Convolution, op_kind::ConvolutionBackwardData,
                                           op_kind::ConvolutionBackwardWeights),
                         [](const auto &info) { return std::string(to_string(info.param)); });

}  // namespace
}  // namespace convgrad
