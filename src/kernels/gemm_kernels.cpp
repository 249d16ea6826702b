// The GEMM kernel as inventory entries (the rows are in kernels/inventory.cpp). It declines what
// is not a matrix product, and what its cost estimate gives to the direct kernel (the reason,
// with the figures, shows under CONVGRAD_VERBOSE=2; the mapping it chose, when it takes a
// problem, too).
#include "kernels/gemm_kernels.hpp"

namespace convgrad::detail {
namespace {

class gemm_kernel final : public kernel {
  public:
    gemm_kernel(const conv_problem &p, register_tile t, gemm_run_fn run) : run_(run) {
        pl_ = make_gemm_plan(p, t.vlen, t.nregs, tables_);  // the plan points into tables_
    }
    void execute(const conv_args &args) const override { run_(pl_, args); }
    std::string describe() const override { return detail::describe(pl_); }

  private:
    std::vector<dim_t> tables_;
    gemm_plan pl_;
    gemm_run_fn run_;
};

}  // namespace

std::unique_ptr<kernel> make_gemm_kernel(const conv_problem &p, register_tile t, gemm_run_fn run) {
    return std::make_unique<gemm_kernel>(p, t, run);
}

}  // namespace convgrad::detail
