// The common kernel source of a unit (avx2, avx512, avx512_emu, avx512_bf16), one part at a
// time. A unit's source file is compiled once per part (src/CMakeLists.txt, convgrad_unit_parts),
// each time with one CONVGRAD_UNIT_PART_<name> defined; this header, included inside the unit's
// namespace after its vector traits, gives that part its kernels:
//   DIRECT     run_direct: the gather and the weight-gradient reduction;
//   PAIRS      run_bf16dot and run_grouped_pairs, the kernels on bf16 pairs (units with
//              CONVGRAD_UKERNEL_BF16 only);
//   GEMM       run_gemm (and run_gemm_pairs), run_col2im (and run_col2im_pairs), run_few_oc;
//   GROUPED    run_grouped;
//   DEPTHWISE  run_depthwise, run_depthwise_ncx;
//   TABLES     the microkernel tables (brgemm_impl.hpp: every part calls the tiles through
//              them, so only this part instantiates them) and the unit's ukernels and packers.
// Why parts: compiled whole, a unit was the build's longest object by far, and on the CI's two
// cores the other core sat idle while it finished (clang 14 with ASan and UBSan: the emulated
// AVX-512 unit alone took 658 s of an 1127 s build on Zen 3). In parts the build shares them
// out, and GCC even spends less in all: g++ 12 -O3, the AVX2 unit 196 s whole and 139 s in its
// five parts, the AVX-512 unit 244 and 207; the Release build 768 -> 685 s on 2 cores. The
// microkernels, gather and depthwise kernels compile to the same code.
//
// The unit defines UKERNEL_SET_NREGS, UKERNEL_SET_NAME and UKERNEL_SET_ISA (and
// CONVGRAD_UKERNEL_BF16, UKERNEL_SET_EMULATED where they apply) before including this.
// CONVGRAD_GEMM_PAIRS_ONLY: a unit of only the kernels on bf16 pairs (AVX512_BF16, parts
// PAIRS, GEMM and TABLES): its GEMM part is run_gemm_pairs and run_col2im_pairs alone, and it
// has no packers.

#if defined(CONVGRAD_UNIT_PART_DIRECT) + defined(CONVGRAD_UNIT_PART_PAIRS) +          \
        defined(CONVGRAD_UNIT_PART_GEMM) + defined(CONVGRAD_UNIT_PART_GROUPED) +      \
        defined(CONVGRAD_UNIT_PART_DEPTHWISE) + defined(CONVGRAD_UNIT_PART_TABLES) != \
    1
#error "a unit is compiled with exactly one CONVGRAD_UNIT_PART_<name> defined (unit_parts.hpp)"
#endif
#if defined(CONVGRAD_UNIT_PART_PAIRS) && !defined(CONVGRAD_UKERNEL_BF16)
#error "the PAIRS part is for units with the bf16 microkernel (CONVGRAD_UKERNEL_BF16)"
#endif

// Each part uses some of the shared helpers' static functions, not all.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"

// (Included in the order of dependence.)
// clang-format off
#include "kernels/ukernel/brgemm_impl.hpp"
#include "kernels/common/kernel_helpers.hpp"
#include "kernels/pack/packers_impl.hpp"
#include "kernels/pack/gemm_operands_impl.hpp"
#include "kernels/common/data_operands.hpp"

// (The weight gradient's row sources and weight offsets serve the grouped and few-channel
// kernels too; it builds on the gather's channel blocks.)
#if defined(CONVGRAD_UNIT_PART_DIRECT) || defined(CONVGRAD_UNIT_PART_PAIRS) || \
    defined(CONVGRAD_UNIT_PART_GEMM) || defined(CONVGRAD_UNIT_PART_GROUPED)
#include "kernels/schedule/gather.hpp"
#include "kernels/schedule/bwd_weights.hpp"
#endif

#ifdef CONVGRAD_UNIT_PART_DIRECT
#include "kernels/common/direct_conv_impl.hpp"
#endif

#ifdef CONVGRAD_UNIT_PART_PAIRS
#include "kernels/common/bf16dot_conv_impl.hpp"  // (on the traits' vdpbf16ps)
#include "kernels/common/grouped_reduce.hpp"
#include "kernels/common/grouped_schedule.hpp"
#include "kernels/common/grouped_pairs_impl.hpp"
#endif

#ifdef CONVGRAD_UNIT_PART_GEMM
#include "kernels/schedule/gemm.hpp"
#include "kernels/schedule/col2im.hpp"
#ifndef CONVGRAD_GEMM_PAIRS_ONLY
#include "kernels/schedule/few_oc.hpp"
#endif
#endif

#ifdef CONVGRAD_UNIT_PART_GROUPED
#include "kernels/common/grouped_reduce.hpp"
#include "kernels/common/grouped_schedule.hpp"
#include "kernels/common/grouped_conv_impl.hpp"
#endif

#ifdef CONVGRAD_UNIT_PART_DEPTHWISE
#include "kernels/common/dw_elements.hpp"
#include "kernels/common/dw_planes.hpp"
#include "kernels/common/dw_bwd_weights_impl.hpp"
#include "kernels/common/dw_conv_impl.hpp"
#include "kernels/common/dw_ncx_impl.hpp"
#endif

#ifdef CONVGRAD_UNIT_PART_TABLES
#include "kernels/ukernel/ukernel_set_impl.hpp"
#ifndef CONVGRAD_GEMM_PAIRS_ONLY
#include "kernels/pack/pack_set_impl.hpp"
#endif
#endif
// clang-format on

#pragma GCC diagnostic pop
