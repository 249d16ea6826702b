// The microkernels of each instruction-set unit, reachable from outside it (tests, benchmarks)
// through constant data: a table of function pointers, so that nothing compiled with an ISA's
// flags runs before the caller has checked `isa_available(isa)`.
#pragma once

#include <array>
#include <cstdint>

#include "dispatch/cpu_features.hpp"
#include "kernels/ukernel/brgemm_args.hpp"

namespace convgrad::detail {

struct ukernel_set {
    const char *name;
    cpu_isa isa;  // what the processor must have to call these
    int vlen;     // floats per vector
    int nregs;    // vector registers (the plan's register tiles come from it)
    /// The f32 microkernel of m rows (1..16) by nv vectors (1..4).
    void (*f32)(int m, int nv, const brgemm_f32_args &);
    /// The bf16-pairs microkernel, or null where the unit has none.
    void (*bf16)(int m, int nv, const brgemm_bf16_args &);
    /// Where bf16 is present, whether it runs the vdpbf16ps instruction or its emulation.
    bool bf16_native;
    /// acc[i] = vdpbf16ps(acc[i], a pair i, b pair i) over n lanes (n a multiple of 16), or null.
    void (*dpbf16)(const float *acc, const uint16_t *a, const uint16_t *b, float *out, dim_t n);
    /// A plain C++ emulation of a wider set's kernels (avx512_emu): tested, never benchmarked.
    bool emulated = false;
};

namespace sse2 {
extern const ukernel_set ukernels;
}
namespace avx2 {
extern const ukernel_set ukernels;
}
namespace avx512 {
extern const ukernel_set ukernels;
}
namespace avx512_bf16 {
extern const ukernel_set ukernels;
}
namespace avx512_emu {
extern const ukernel_set ukernels;
}

/// Every unit's microkernels, best instruction set first, then the emulation.
inline std::array<const ukernel_set *, 5> all_ukernel_sets() {
    return {&avx512_bf16::ukernels, &avx512::ukernels, &avx2::ukernels, &sse2::ukernels,
            &avx512_emu::ukernels};
}

}  // namespace convgrad::detail
