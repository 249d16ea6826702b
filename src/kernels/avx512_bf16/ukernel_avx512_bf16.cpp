// AVX512_BF16 instantiation of the microkernels (the bf16-pairs kernel on the native
// vdpbf16ps), of the direct convolution on it (run_bf16dot), of the grouped one
// (run_grouped_pairs) and of the GEMM and col2im kernels' schedules on it (run_gemm_pairs,
// run_col2im_pairs), compiled once per
// part (kernels/common/unit_parts.hpp). Its own unit with its own flags (-mavx512bf16), so that
// no other code is compiled with them.
#include <immintrin.h>

#include <cstdlib>
#include <cstring>
#include <utility>

#include "core/float_convert.hpp"
#include "kernels/col2im_kernels.hpp"
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

// Only the kernels on bf16 pairs: the f32 GEMM, col2im, few-channel kernels and packers are the
// AVX-512 unit's.
#define CONVGRAD_GEMM_PAIRS_ONLY
#define UKERNEL_SET_NAME "avx512_bf16"
#define UKERNEL_SET_ISA cpu_isa::avx512_bf16
#include "kernels/common/unit_parts.hpp"  // (the part this compilation is: src/CMakeLists.txt)

}  // namespace convgrad::detail::avx512_bf16
