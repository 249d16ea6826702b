// AVX512_BF16 instantiation of the microkernels (the bf16-pairs kernel on the native
// vdpbf16ps), of the direct convolution on it (run_bf16dot), of the grouped one
// (run_grouped_pairs) and of the GEMM kernel's schedule on it (run_gemm_pairs). Its own unit
// with its own flags (-mavx512bf16), so that no other code is compiled with them.
#include <immintrin.h>

#include <cstdlib>
#include <cstring>
#include <utility>

#include "core/float_convert.hpp"
#include "kernels/common/direct_plan.hpp"
#include "kernels/common/gemm_plan.hpp"
#include "kernels/grouped_pairs_kernels.hpp"
#include "kernels/pack/packed_formats.hpp"
#include "kernels/ukernel/brgemm_args.hpp"
#include "kernels/ukernel/ukernel_set.hpp"
#include "threading/parallel.hpp"
#include "threading/scratch_cache.hpp"

namespace convgrad::detail::avx512_bf16 {

#define CONVGRAD_NATIVE_VDPBF16PS
#define CONVGRAD_UKERNEL_BF16
#include "kernels/common/convert_scalar.hpp"  // (the traits' conversions use it)

#include "kernels/avx512/vector_traits.hpp"  // (the microkernel uses the traits)

#define UKERNEL_SET_NREGS 32  // (the microkernel tables size their tiles by it)

// The parts serve the full units too: this one uses only what the vdpbf16ps kernel needs of
// them (not the f32 direct kernel, which the AVX-512 unit compiles), so some of their static
// functions go unused here.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#include "kernels/ukernel/brgemm_impl.hpp"
#include "kernels/common/kernel_helpers.hpp"
#include "kernels/pack/packers_impl.hpp"
#include "kernels/pack/gemm_operands_impl.hpp"
#include "kernels/schedule/gather.hpp"
#include "kernels/schedule/bwd_weights.hpp"
#define CONVGRAD_GEMM_PAIRS_ONLY  // (run_gemm_pairs only; the f32 run_gemm is the AVX-512 unit's)
#include "kernels/schedule/gemm.hpp"
#include "kernels/common/data_operands.hpp"
#include "kernels/common/bf16dot_conv_impl.hpp"
#include "kernels/common/grouped_reduce.hpp"
#include "kernels/common/grouped_schedule.hpp"
#include "kernels/common/grouped_pairs_impl.hpp"
#pragma GCC diagnostic pop

#define UKERNEL_SET_NAME "avx512_bf16"
#define UKERNEL_SET_ISA cpu_isa::avx512_bf16
#include "kernels/ukernel/ukernel_set_impl.hpp"

}  // namespace convgrad::detail::avx512_bf16
