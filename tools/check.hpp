// Comparing a result with the reference's.
#pragma once

#include <string>

#include "host_tensor.hpp"

namespace convgrad::tool {

struct check_result {
    dim_t count = 0;
    dim_t mismatches = 0;
    double max_abs = 0, max_rel = 0;
    dim_t worst_index = -1;  // logical index of the largest error
    double worst_got = 0, worst_exp = 0;
    bool pass = true;
    std::string summary() const;  // "max_abs_err=0 max_rel_err=0 PASS"
};

/// `exact`: the inputs are small integers whose sums are exact, so every element must equal the
/// reference's (f32: bit for bit in value; bf16/f16: the exact sum rounded once, which both
/// compute). Otherwise f32 may differ by a few ulps times sqrt(terms) of the output's scale,
/// bf16/f16 by one unit in the last place of the output type.
check_result compare(const host_tensor &got, const host_tensor &exp, double terms, bool exact);

}  // namespace convgrad::tool
