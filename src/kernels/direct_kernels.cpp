// The direct (brgemm-style) kernels as dispatch entries: one per instruction set.
#include "kernels/direct_kernels.hpp"

#include "kernels/common/direct_plan.hpp"

namespace convgrad::detail {

// Defined in the per-ISA translation units.
namespace avx512 {
void run_direct(const direct_plan &pl, const conv_args &args);
}
namespace avx2 {
void run_direct(const direct_plan &pl, const conv_args &args);
}
namespace sse2 {
void run_direct(const direct_plan &pl, const conv_args &args);
}

namespace {

using run_fn = void (*)(const direct_plan &, const conv_args &);

class direct_kernel final : public kernel {
public:
    direct_kernel(const direct_plan &pl, run_fn run) : pl_(pl), run_(run) {}
    void execute(const conv_args &args) const override { run_(pl_, args); }

private:
    direct_plan pl_;
    run_fn run_;
};

std::string why_not_direct(const conv_problem &) { return {}; }

template <run_fn run, int vlen, int nregs>
std::unique_ptr<kernel> create(const conv_problem &p) {
    return std::make_unique<direct_kernel>(make_direct_plan(p, vlen, nregs), run);
}

}  // namespace

std::vector<impl_desc> direct_impls() {
    return {
        {"direct_brgemm:avx512", cpu_isa::avx512, why_not_direct, create<avx512::run_direct, 16, 32>},
        {"direct_brgemm:avx2", cpu_isa::avx2, why_not_direct, create<avx2::run_direct, 8, 16>},
        {"direct_brgemm:sse2", cpu_isa::generic, why_not_direct, create<sse2::run_direct, 4, 16>},
    };
}

}  // namespace convgrad::detail
