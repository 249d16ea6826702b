// The direct (brgemm-style) kernels as dispatch entries: one per instruction set.
#include "kernels/direct_kernels.hpp"

#include "kernels/common/direct_plan.hpp"

namespace convgrad::detail {

// Defined in the per-ISA translation units.
namespace avx512 {
void run_direct(const direct_plan &pl, const conv_args &args);
void run_grouped(const direct_plan &pl, const conv_args &args);
}  // namespace avx512
namespace avx2 {
void run_direct(const direct_plan &pl, const conv_args &args);
void run_grouped(const direct_plan &pl, const conv_args &args);
}  // namespace avx2
namespace sse2 {
void run_direct(const direct_plan &pl, const conv_args &args);
}

namespace {

using run_fn = void (*)(const direct_plan &, const conv_args &);

class direct_kernel final : public kernel {
public:
    direct_kernel(const direct_plan &pl, run_fn run) : pl_(pl), run_(run) {}
    void execute(const conv_args &args) const override { run_(pl_, args); }
    std::string describe() const override { return detail::describe(pl_); }

private:
    direct_plan pl_;
    run_fn run_;
};

std::string why_not_direct(const conv_problem &) { return {}; }

// The lane-per-channel kernel for groups of few channels (depthwise included).
template <int vlen>
std::string why_not_grouped(const conv_problem &p) {
    if (p.g == 1) return "not grouped";
    if (p.icg != p.ocg) return "channels per group differ between src and dst";
    if (p.icg >= vlen) return "channels per group fill a vector: the direct kernel is better";
    if (vlen % p.icg != 0) return "channels per group do not divide the vector width";
    return {};
}

template <run_fn run, int vlen, int nregs>
std::unique_ptr<kernel> create(const conv_problem &p) {
    return std::make_unique<direct_kernel>(make_direct_plan(p, vlen, nregs), run);
}

}  // namespace

std::vector<impl_desc> grouped_impls() {
    return {
        {"grouped_lanes:avx512", cpu_isa::avx512, why_not_grouped<16>, create<avx512::run_grouped, 16, 32>},
        {"grouped_lanes:avx2", cpu_isa::avx2, why_not_grouped<8>, create<avx2::run_grouped, 8, 16>},
    };
}

std::vector<impl_desc> direct_impls() {
    return {
        {"direct_brgemm:avx512", cpu_isa::avx512, why_not_direct, create<avx512::run_direct, 16, 32>},
        {"direct_brgemm:avx2", cpu_isa::avx2, why_not_direct, create<avx2::run_direct, 8, 16>},
        {"direct_brgemm:sse2", cpu_isa::generic, why_not_direct, create<sse2::run_direct, 4, 16>},
    };
}

}  // namespace convgrad::detail
