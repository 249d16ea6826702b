// The GEMM kernel as dispatch entries: one per instruction set. It declines what is not a matrix
// product, and what its cost estimate gives to the direct kernel (the reason, with the figures,
// shows under CONVGRAD_VERBOSE=2; the mapping it chose, when it takes a problem, too).
#include "kernels/gemm_kernels.hpp"

#include "kernels/common/gemm_plan.hpp"

namespace convgrad::detail {

// Defined in the per-ISA translation units.
namespace avx512 {
void run_gemm(const gemm_plan &pl, const conv_args &args);
}
namespace avx2 {
void run_gemm(const gemm_plan &pl, const conv_args &args);
}
namespace sse2 {
void run_gemm(const gemm_plan &pl, const conv_args &args);
}

namespace {

using run_fn = void (*)(const gemm_plan &, const conv_args &);

class gemm_kernel final : public kernel {
  public:
    gemm_kernel(const conv_problem &p, int vlen, int nregs, run_fn run) : run_(run) {
        pl_ = make_gemm_plan(p, vlen, nregs, tables_);  // the plan points into tables_
    }
    void execute(const conv_args &args) const override { run_(pl_, args); }
    std::string describe() const override { return detail::describe(pl_); }

  private:
    std::vector<dim_t> tables_;
    gemm_plan pl_;
    run_fn run_;
};

template <int vlen, int nregs>
std::string why_not(const conv_problem &p) {
    return gemm_why_not(p, vlen, nregs);
}

template <run_fn run, int vlen, int nregs>
std::unique_ptr<kernel> create(const conv_problem &p) {
    return std::make_unique<gemm_kernel>(p, vlen, nregs, run);
}

}  // namespace

std::vector<impl_desc> gemm_impls() {
    return {
        {"gemm:avx512", cpu_isa::avx512, why_not<16, 32>, create<avx512::run_gemm, 16, 32>},
        {"gemm:avx2", cpu_isa::avx2, why_not<8, 16>, create<avx2::run_gemm, 8, 16>},
        {"gemm:sse2", cpu_isa::generic, why_not<4, 16>, create<sse2::run_gemm, 4, 16>},
    };
}

}  // namespace convgrad::detail
