// The GEMM kernel as inventory entries (the rows are in kernels/inventory.cpp). It declines what
// is not a matrix product, and what its cost estimate gives to the direct kernel (the reason,
// with the figures, shows under CONVGRAD_VERBOSE=2; the mapping it chose, when it takes a
// problem, too).
#include "kernels/gemm_kernels.hpp"

#include "kernels/pack/padded_src.hpp"
#include "threading/parallel.hpp"
#include "threading/scratch_cache.hpp"

namespace convgrad::detail {
namespace {

class gemm_kernel final : public kernel {
  public:
    gemm_kernel(const conv_problem &p, register_tile t, gemm_run_fn run) : run_(run) {
        pl_ = make_gemm_plan(p, t.vlen, t.nregs, tables_);  // the plan points into tables_
    }
    void execute(const conv_args &args) const override {
        if (!pl_.pad.needed) {
            run_(pl_, args);
            return;
        }
        // Taps in the padding: the tables index a zero-bordered copy of src.
        scratch_buffer<char> copy(size_t(pl_.pad.elems) * element_size(pl_.p.dt));
        copy_padded_src(pl_.user, pl_.pad, args.src, copy.data(), pl_.nthr);
        conv_args a = args;
        a.src = copy.data();
        run_(pl_, a);
    }
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
