// The AVX-512 kernel set (16 lanes, 32 registers) over whichever `vt` the unit defined before
// including this: the native AVX-512 traits (direct_conv_avx512.cpp) or their plain C++
// emulation (avx512_emu/), so that both run the same kernel source. Included inside the unit's
// namespace after convert_scalar.hpp and the traits; the unit defines CONVGRAD_UKERNEL_BF16,
// UKERNEL_SET_NAME and UKERNEL_SET_ISA first.

#define UKERNEL_SET_NREGS 32  // (the microkernel tables size their tiles by it)
#include "kernels/common/unit_parts.hpp"  // (the part this compilation is: src/CMakeLists.txt)
