// AVX-512 instantiation of the direct and grouped convolution kernels (16 floats per vector, 32 registers).
#include <immintrin.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/float_convert.hpp"
#include "kernels/common/direct_plan.hpp"
#include "kernels/col2im_kernels.hpp"
#include "kernels/dw_kernels.hpp"
#include "kernels/dw_ncx_kernels.hpp"
#include "kernels/common/gemm_plan.hpp"
#include "kernels/pack/packed_formats.hpp"
#include "kernels/ukernel/brgemm_args.hpp"
#include "kernels/ukernel/ukernel_set.hpp"
#include "threading/parallel.hpp"
#include "threading/scratch_cache.hpp"

namespace convgrad::detail::avx512 {

#define CONVGRAD_UKERNEL_BF16

#include "kernels/common/convert_scalar.hpp"

#include "kernels/avx512/vector_traits.hpp"

#include "kernels/ukernel/brgemm_impl.hpp"
#include "kernels/common/kernel_helpers.hpp"
#include "kernels/pack/packers_impl.hpp"
#include "kernels/pack/gemm_operands_impl.hpp"
#include "kernels/schedule/gather.hpp"
#include "kernels/schedule/bwd_weights.hpp"
#include "kernels/schedule/gemm.hpp"
#include "kernels/schedule/col2im.hpp"
#include "kernels/common/direct_conv_impl.hpp"
#include "kernels/common/bf16dot_conv_impl.hpp"  // (run_bf16dot on the vdpbf16ps emulation)
#include "kernels/common/grouped_conv_impl.hpp"
#include "kernels/common/dw_elements.hpp"
#include "kernels/common/dw_planes.hpp"
#include "kernels/common/dw_bwd_weights_impl.hpp"
#include "kernels/common/dw_conv_impl.hpp"
#include "kernels/common/dw_ncx_impl.hpp"


#define UKERNEL_SET_NAME "avx512"
#define UKERNEL_SET_ISA cpu_isa::avx512
#define UKERNEL_SET_NREGS 32
#include "kernels/ukernel/ukernel_set_impl.hpp"
#include "kernels/pack/pack_set_impl.hpp"

}  // namespace convgrad::detail::avx512
