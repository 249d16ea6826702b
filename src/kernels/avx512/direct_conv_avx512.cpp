// AVX-512 instantiation of the common kernel source (16 floats per vector, 32 registers),
// compiled once per part of it (kernels/common/unit_parts.hpp).
#include <immintrin.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/float_convert.hpp"
#include "kernels/common/direct_plan.hpp"
#include "kernels/grouped_pairs_kernels.hpp"
#include "kernels/col2im_kernels.hpp"
#include "kernels/few_oc_kernels.hpp"
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

#define UKERNEL_SET_NAME "avx512"
#define UKERNEL_SET_ISA cpu_isa::avx512
#include "kernels/avx512/avx512_kernels_impl.hpp"

}  // namespace convgrad::detail::avx512
