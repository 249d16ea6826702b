// The AVX-512 kernel set (16 lanes, 32 registers) over whichever `vt` the unit defined before
// including this: the native AVX-512 traits (direct_conv_avx512.cpp) or their plain C++
// emulation (avx512_emu/), so that both run the same kernel source. Included inside the unit's
// namespace after convert_scalar.hpp and the traits; the unit defines CONVGRAD_UKERNEL_BF16,
// UKERNEL_SET_NAME and UKERNEL_SET_ISA first.

// (Included in the order of dependence.)
// clang-format off
#define UKERNEL_SET_NREGS 32  // (the microkernel tables size their tiles by it)
#include "kernels/ukernel/brgemm_impl.hpp"
#include "kernels/common/kernel_helpers.hpp"
#include "kernels/pack/packers_impl.hpp"
#include "kernels/pack/gemm_operands_impl.hpp"
#include "kernels/schedule/gather.hpp"
#include "kernels/schedule/bwd_weights.hpp"
#include "kernels/schedule/gemm.hpp"
#include "kernels/schedule/col2im.hpp"
#include "kernels/schedule/few_oc.hpp"
#include "kernels/common/direct_conv_impl.hpp"
#include "kernels/common/bf16dot_conv_impl.hpp"  // (run_bf16dot on the traits' vdpbf16ps)
#include "kernels/common/grouped_reduce.hpp"
#include "kernels/common/grouped_schedule.hpp"
#include "kernels/common/grouped_pairs_impl.hpp"  // (run_grouped_pairs on the same)
#include "kernels/common/grouped_conv_impl.hpp"
#include "kernels/common/dw_elements.hpp"
#include "kernels/common/dw_planes.hpp"
#include "kernels/common/dw_bwd_weights_impl.hpp"
#include "kernels/common/dw_conv_impl.hpp"
#include "kernels/common/dw_ncx_impl.hpp"

#include "kernels/ukernel/ukernel_set_impl.hpp"
#include "kernels/pack/pack_set_impl.hpp"
// clang-format on
