// The AVX-512 kernels compiled on the plain C++ emulation of their vector traits
// (vector_traits_emulated.hpp): the same kernel source, plans and register tiles (16 lanes, 32
// registers) as kernels/avx512/, runnable on any AVX2 machine. The inventory offers these as
// the AVX-512 rows' emulations; tests run them where AVX-512 is missing or capped, dispatch never.
// (Compiled with AVX2 flags only for speed: the source itself needs no instruction set.)
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/float_convert.hpp"
#include "kernels/col2im_kernels.hpp"
#include "kernels/few_oc_kernels.hpp"
#include "kernels/common/direct_plan.hpp"
#include "kernels/grouped_pairs_kernels.hpp"
#include "kernels/common/gemm_plan.hpp"
#include "kernels/dw_kernels.hpp"
#include "kernels/dw_ncx_kernels.hpp"
#include "kernels/pack/packed_formats.hpp"
#include "kernels/ukernel/brgemm_args.hpp"
#include "kernels/ukernel/ukernel_set.hpp"
#include "threading/parallel.hpp"
#include "threading/scratch_cache.hpp"

#ifdef __F16C__
#include <immintrin.h>  // (convert_scalar.hpp's f16 widening)
#endif

namespace convgrad::detail::avx512_emu {

// (Included in the order of dependence.)
// clang-format off

#define CONVGRAD_UKERNEL_BF16

#include "kernels/common/convert_scalar.hpp"

#include "kernels/avx512_emu/vector_traits_emulated.hpp"

#define UKERNEL_SET_NAME "avx512_emulated"
#define UKERNEL_SET_ISA cpu_isa::avx2
#define UKERNEL_SET_EMULATED
#include "kernels/avx512/avx512_kernels_impl.hpp"
// clang-format on

}  // namespace convgrad::detail::avx512_emu
