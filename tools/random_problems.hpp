// Random problems for `convgrad bench --random=N --seed=S`: layers drawn from the space real
// networks and users' reports span, to find the shapes where a kernel falls off a cliff.
#pragma once

#include <cstdint>
#include <vector>

#include "desc.hpp"

namespace convgrad::tool {

struct random_problem {
    conv_desc desc;  // in the op family's benchdnn meaning (deconv for the ConvTranspose family)
    op_kind kind;
    double gflop;
};

/// `n` problems, the same for the same seed: 1-D/2-D/3-D; channels 1-1024; kernels up to 1024
/// in 1-D and 16 in 2-D/3-D; strides, dilations, pads, groups, depthwise; batch 1-64; each of
/// the six ops equally often; each drawn again until it is 0.01-5 GFLOP.
std::vector<random_problem> random_problems(int n, uint64_t seed);

}  // namespace convgrad::tool
