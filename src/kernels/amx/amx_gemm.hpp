// Convolutions that are matrix products (kernels/common/gemm_plan.hpp: 1x1 kernels at stride 1,
// kernels that cover a 1x1 output, kernel == stride up-convolutions...) on the AMX microkernel.
//
//   C[M x N] = sum_k A[M x K] * B[K x N]   per group, every operand a view of a user tensor
//
// The mapping (which tensor is A, B and C, and the offset tables that read them through any
// layout and strides) is the GEMM kernel's plan; this kernel brings its own blocking and
// packers for the tiles. The amx_conv kernels put channels on K and on the columns and pixels
// on the rows, so a problem with few channels on one side fills a tenth of a tile (a
// ConvTranspose from 50 channels to 1 on a 1x1 input); as a matrix product its K is channels
// times taps, and every side is long.
//
// Schedule: work units are (group, block of mc rows, block of nc columns), a static split over
// the threads; per unit and K block of kc: B's block is packed into VNNI panels of 32 columns,
// then per strip of 32 rows A is packed once and the microkernel runs across the panels,
// accumulating into the unit's f32 block; at the end the block gets the bias and is rounded
// once into C. Each C element is summed by one unit in a fixed order: the result does not
// depend on the thread count.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/conv_problem.hpp"
#include "dispatch/registry.hpp"
#include "kernels/amx/amx_ukernel.hpp"
#include "kernels/common/gemm_plan.hpp"

namespace convgrad::detail::amx {

struct gemm_amx_plan {
    gemm_plan g;  // mapping and operand tables (pointing into the kernel's table storage)
    amx_backend backend = amx_backend::native;
    amx_dot dot = amx_dot::bf16;
    int64_t mc = 32, nc = 32, kc = 32;  // unit C block (multiples of 32), K block (of k_step)
    int64_t mblocks = 0, nblocks = 0;
    int nthr = 1;
    /// Bytes of scratch one execution allocates (per thread: A strip, B block, C block).
    double scratch_bytes() const;
};

/// Empty when the kernel can compute `p` on `backend` (a bf16/f16 matrix product, or f32 under
/// fpmath_mode bf16/f16; the native backend also needs the tiles granted); else why not.
std::string gemm_why_not(const conv_problem &p, amx_backend backend);

/// The plan; `tables` receives the offset tables the plan points into (kept alive, not
/// resized, by the caller). The problem must pass gemm_why_not.
gemm_amx_plan plan_gemm(const conv_problem &p, amx_backend backend, std::vector<dim_t> &tables);
void run_gemm(const gemm_amx_plan &pl, const conv_args &args);

// Dispatch-row shapes (kernels/inventory.cpp), as amx_conv_kernels.hpp's.
std::string gemm_cannot(const conv_problem &p);
/// gemm_cannot, or the tiles not granted, or not worth it: its tiles would be little fuller
/// than the amx_conv kernel's (which then keeps the problem), or too empty.
std::string gemm_why_not_native(const conv_problem &p);
std::unique_ptr<kernel> gemm_create_native(const conv_problem &p);
std::unique_ptr<kernel> gemm_create_emulated(const conv_problem &p);

}  // namespace convgrad::detail::amx
