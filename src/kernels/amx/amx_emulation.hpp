// A portable model of the AMX instructions amx_ukernel uses, for machines without AMX (and to
// test the tile schedule anywhere): ldtilecfg, tilerelease, tilezero, tileloadd, tilestored,
// tdpbf16ps, tdpfp16ps. The tile state is per thread, as the hardware's is.
//
// Numerics, from the Intel SDM vol. 2 pseudo-code of TDPBF16PS and TDPFP16PS (revision 083 and
// the AMX-FP16 ISE text; the same as felixcloutier.com/x86/tdpbf16ps); earlier SDM revisions
// showed a simpler sequential loop that the current text replaced:
//   for each row m of C:
//     temp[0 .. 2*N) = 0                                 (two f32 partial sums per column n)
//     for each pair k of A's row (A.colsb / 4 pairs), for each column n:
//       temp[2n]   = fma(A[m].x[2k],   B[k].x[2n],   temp[2n])     even products
//       temp[2n+1] = fma(A[m].x[2k+1], B[k].x[2n+1], temp[2n+1])   odd products
//     for each column n:  C[m][n] = C[m][n] + (temp[2n] + temp[2n+1])
// Every fma and add is f32 with one rounding, to nearest even, with DAZ and FTZ: denormal f32
// inputs (a bf16 denormal widens to one; so may a C value read from memory) count as zero, and
// a result that is tiny after rounding (the SDM's underflow rule, vol. 1 4.9.1.5) becomes a zero
// of its sign. MXCSR is neither read nor written. TDPFP16PS widens f16 to f32 exactly, so f16
// denormals are kept ("input FP16 denormals are always handled"); the f32 steps are the same.
// The model computes each step exactly in double and rounds once (round-to-odd to double, then
// to float; see round_to_float_ftz), assuming the default rounding mode, which convgrad never
// changes. NaN results are quiet NaNs; which NaN payload the hardware propagates is not modelled.
//
// Each instruction checks what the hardware faults on (amx_tile_config.hpp) and throws
// convgrad::error instead. start_row (restart after an interrupted load) is not modelled: a
// configuration with start_row != 0 is refused.
#pragma once

#include <cstdint>

#include "kernels/amx/amx_tile_config.hpp"

namespace convgrad::detail::amx::emu {

void ldtilecfg(const tile_config &cfg);
void tilerelease();
/// The configuration loaded on this thread (palette 0 when none).
const tile_config &current_config();
void tilezero(int t);
void tileloadd(int t, const void *base, int64_t stride_bytes);
void tilestored(int t, void *base, int64_t stride_bytes);
void tdpbf16ps(int c, int a, int b);
void tdpfp16ps(int c, int a, int b);

/// The SDM's "FP32 FMA with DAZ=FTZ=1, RNE": acc + a * b rounded once.
float fma_daz_ftz(float acc, float a, float b);
/// The same for x + y.
float add_daz_ftz(float x, float y);

}  // namespace convgrad::detail::amx::emu
