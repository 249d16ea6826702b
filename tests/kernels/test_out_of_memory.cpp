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

    // 16 MiB of headroom: less than any kernel's copy of the 32 MiB (16-bit) data, so every
    // kernel must run out, the 16-bit copies of the AMX kernels included.
    const rlimit cap{address_space_bytes() + (16u << 20), RLIM_INFINITY};
    // Which rows take the problem, decided before the cap (dispatch runs at compile time, with
    // memory to spare). A row this CPU cannot run natively is run through its emulation, if it
    // has one (AMX): the same kernel source, so the same allocations.
    struct candidate {
        const detail::impl_desc *impl;
        bool native;
    };
    std::vector<candidate> rows;
    for (const auto &impl : detail::impl_list()) {
        const bool native = detail::isa_available(impl.isa);
        const bool emulated = !native && impl.create_emulated && detail::isa_available(impl.emulation_isa);
        if ((native && impl.why_not(r.prob).empty()) || (emulated && impl.cannot(r.prob).empty()))
            rows.push_back({&impl, native});
    }
    detail::conv_args a;
    a.src = r.src_input >= 0 ? in[size_t(r.src_input)].data() : nullptr;
    a.dst = r.dst_input >= 0 ? in[size_t(r.dst_input)].data() : nullptr;
    a.wei = r.wei_input >= 0 ? in[size_t(r.wei_input)].data() : nullptr;
    a.out = out.data();

    if (setrlimit(RLIMIT_AS, &cap) != 0) return 10;
    // A kernel either completes (one that packs in cache-sized chunks needs little memory) or
    // lets std::bad_alloc reach its caller; at least two kernels and the reference must run out,
    // so that the reporting is exercised.
    int failures = 0, ran_out = 0;
    for (const candidate &c : rows) {
        try {
            (c.native ? c.impl->create : c.impl->create_emulated)(r.prob)->execute(a);
            std::fprintf(stderr, "%s: completed within the cap\n", c.impl->name);
        } catch (const std::bad_alloc &) {
            std::fprintf(stderr, "%s: std::bad_alloc reached the caller\n", c.impl->name);
            ++ran_out;
        }
    }
    for (const compiled_partition *cp : {&best, &ref}) {
        try {
            cp->execute(ins, {out.as_tensor()});
            std::fprintf(stderr, "API (%s): completed within the cap\n", cp->kernel_name().c_str());
            failures += cp == &ref;  // the reference keeps whole f32 copies: it must run out
        } catch (const error &e) {
            const std::string m = e.what();
            const bool ok = e.code() == status::out_of_memory && m.find("(op 3") != std::string::npos &&
                            m.find(cp->kernel_name()) != std::string::npos;
            std::fprintf(stderr, "API (%s): %s\n", cp->kernel_name().c_str(), m.c_str());
            failures += !ok;
        }
    }
    if (ran_out < 2) std::fprintf(stderr, "only %d kernels ran out of memory\n", ran_out);
    return failures + (ran_out < 2);
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
