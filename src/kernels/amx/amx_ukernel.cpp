// The microkernel's front: argument checks, the choice of backend, the emulated instantiation
// of the kernel body, and the per-thread tile hooks.
#include "kernels/amx/amx_ukernel.hpp"

#include <cpuid.h>

#include <string>

#include "convgrad/types.hpp"
#include "dispatch/cpu_features.hpp"
#include "kernels/amx/amx_elements.hpp"
#include "kernels/amx/amx_emulation.hpp"
#include "kernels/amx/amx_ukernel_impl.hpp"
#include "kernels/amx/amx_ukernel_native.hpp"

namespace convgrad::detail::amx {
namespace {

template <amx_dot Dot>
struct emulated_tiles {
    static void configure(int M, int N, int pairs, int m0) {
        const tile_config cfg = ukernel_config_impl(M, N, pairs, m0);
        if (!(emu::current_config() == cfg)) emu::ldtilecfg(cfg);
    }
    template <int T>
    static void zero() {
        emu::tilezero(T);
    }
    template <int T>
    static void load(const void *base, int64_t stride_bytes) {
        emu::tileloadd(T, base, stride_bytes);
    }
    template <int T>
    static void store(void *base, int64_t stride_bytes) {
        emu::tilestored(T, base, stride_bytes);
    }
    template <int C, int A, int B>
    static void dot() {
        if constexpr (Dot == amx_dot::bf16)
            emu::tdpbf16ps(C, A, B);
        else
            emu::tdpfp16ps(C, A, B);
    }
    static void finish_row(const c_rows &r, const float *c, int64_t at) {
        finish_row_portable(r, c, at);
    }
    static constexpr bool dense_finish = false;
    template <finish_kind K>
    static void finish_dense(const float *, char *, const float *) {}
};

[[noreturn]] void bad_args(const std::string &what) {
    throw error(status::invalid_arguments, "AMX microkernel: " + what);
}

void check_args(const ukernel_args &p) {
    if (p.M < 1 || p.M > ukernel_max_m || p.N < 1 || p.N > ukernel_max_n)
        bad_args("M and N must be in [1, 32]; got M = " + std::to_string(p.M) +
                 ", N = " + std::to_string(p.N));
    if (p.m0 < 0 || p.m0 > 16 || p.m0 > p.M || p.M - (p.m0 > 0 ? p.m0 : std::min(p.M, 16)) > 16)
        bad_args("m0 = " + std::to_string(p.m0) +
                 " must leave 1-16 rows in each tile row of M = " + std::to_string(p.M));
    if (p.a1_offset < 0) bad_args("a1_offset = " + std::to_string(p.a1_offset) + " is negative");
    if (p.K < 1 || p.batch < 1)
        bad_args("K and batch must be >= 1; got K = " + std::to_string(p.K) +
                 ", batch = " + std::to_string(p.batch));
    if (!p.A || !p.B || !p.C) bad_args("null A, B or C");
    for (int b = 0; b < p.batch; ++b)
        if (!p.A[b] || !p.B[b]) bad_args("null A or B for batch item " + std::to_string(b));
    if (p.a_block < 0 || (p.a_block > 0 && (p.a_rows_overlap || p.lda < k_step)))
        bad_args("a_block = " + std::to_string(p.a_block) +
                 " needs lda >= " + std::to_string(k_step) + " (got " + std::to_string(p.lda) +
                 ") and rows that do not overlap");
    if (p.lda < 1 || (!p.a_rows_overlap && p.a_block == 0 && p.lda < padded_k(p.K)))
        bad_args("lda = " + std::to_string(p.lda) + " is less than K rounded up to even, " +
                 std::to_string(padded_k(p.K)) + (p.a_rows_overlap ? " or 1" : ""));
    if (p.ldb < 2 * p.N)
        bad_args("ldb = " + std::to_string(p.ldb) +
                 " is less than 2 * N = " + std::to_string(2 * p.N));
    if (p.ldc < p.N)
        bad_args("ldc = " + std::to_string(p.ldc) + " is less than N = " + std::to_string(p.N));
    // tileloadd / tilestored take the stride in a 64-bit register, any value; rows of C must not
    // overlap, which ldc >= N ensures.
}

}  // namespace

void finish_row_portable(const c_rows &r, const float *c, int64_t at) {
    for (int n = 0; n < r.cols; ++n)
        store_element(r.dt, r.out, at + n * r.col_stride, r.bias ? c[n] + r.bias[n] : c[n]);
}

void finish_rows(amx_backend backend, const c_rows &r) {
    if (backend == amx_backend::native && native_usable(amx_dot::bf16))
        return native::finish_rows(r);
    for (int m = 0; m < r.rows; ++m) finish_row_portable(r, m);
}

const char *to_string(amx_dot d) {
    return d == amx_dot::bf16 ? "bf16" : "f16";
}
const char *to_string(amx_backend b) {
    return b == amx_backend::native ? "native" : "emulated";
}

tile_config ukernel_config(int M, int N, int pairs) {
    return ukernel_config_impl(M, N, pairs);
}

bool native_built(amx_dot dot) {
    return native::built(dot);
}

const char *native_unusable_reason(amx_dot dot) {
    if (!native::built(dot))
        return "the compiler lacks -mamx-tile/-mamx-bf16, the native kernels were not built";
    const cpu_features have = effective_features();
    if (!have.has(cpu_feature::amx_tile)) {
        unsigned a, b, c, d;
        const bool cpu_has_amx = __get_cpuid_count(7, 0, &a, &b, &c, &d) && (d & (1u << 24));
        if (!cpu_has_amx) return "this CPU has no AMX";
        if (!detected_features().has(cpu_feature::amx_tile))
            return "the OS did not grant AMX tile data (XCR0 or arch_prctl(ARCH_REQ_XCOMP_PERM))";
        return "CONVGRAD_MAX_ISA caps AMX";
    }
    if (dot == amx_dot::bf16 && !have.has(cpu_feature::amx_bf16)) return "the CPU lacks AMX-BF16";
    // The native unit also rounds its results with AVX-512 (and AVX512_BF16) instructions.
    if (!have.contains(features_of(cpu_isa::avx512_bf16)))
        return "the CPU (or CONVGRAD_MAX_ISA) lacks the AVX-512 features the AMX kernels use";
    if (dot == amx_dot::f16 && !have.has(cpu_feature::amx_fp16)) return "the CPU lacks AMX-FP16";
    return "";
}

bool native_usable(amx_dot dot) {
    return *native_unusable_reason(dot) == '\0';
}

void ukernel(amx_backend backend, amx_dot dot, const ukernel_args &args) {
    check_args(args);
    if (backend == amx_backend::native && !native_usable(dot))
        throw error(status::unimplemented, std::string("AMX microkernel: native ") +
                                               to_string(dot) + ": " + native_unusable_reason(dot));
    ukernel_trusted(backend, dot, args);
}

void ukernel_trusted(amx_backend backend, amx_dot dot, const ukernel_args &args) {
    if (backend == amx_backend::native) return native::run(dot, args);
    // The emulated runs (every schedule's tests) still check each call against the contract.
    check_args(args);
    if (dot == amx_dot::bf16) return ukernel_run<emulated_tiles<amx_dot::bf16>>(args);
    ukernel_run<emulated_tiles<amx_dot::f16>>(args);
}

thread_hooks thread_tile_hooks(amx_backend backend) {
    thread_hooks h;
    if (backend == amx_backend::emulated) {
        h.enter = [](void *) {
            emu::ldtilecfg(ukernel_config(ukernel_max_m, ukernel_max_n, k_step / 2));
        };
        h.leave = [](void *) { emu::tilerelease(); };
    } else {
        // A tile instruction where AMX is not granted is SIGILL: refuse here instead.
        if (!native_usable(amx_dot::bf16))
            throw error(status::unimplemented, std::string("AMX tile hooks: native: ") +
                                                   native_unusable_reason(amx_dot::bf16));
        h.enter = [](void *) { native::load_full_config(); };
        h.leave = [](void *) { native::release(); };
    }
    return h;
}

}  // namespace convgrad::detail::amx
