// Seeded input data: small integers, as benchdnn fills, so that sums are exact in f32.
#pragma once

#include <cstdint>

#include "host_tensor.hpp"

namespace convgrad::tool {

struct fill_spec {
    int bound = 1;         // values in [-bound, bound]
    double density = 1.0;  // fraction of non-zero values
};

/// The range for the inputs of an op summing `terms` products into each output: every partial
/// sum stays an integer below 2^23 (f32, bf16) or below the f16 maximum (f16), within
/// benchdnn's ranges (f32 [-32, 32], bf16/f16 [-4, 4]); when even +-1 cannot keep the bound,
/// the density of non-zeros goes down instead.
fill_spec fill_for(data_type dt, double terms);

/// Fills in logical order (the same values whatever the strides).
void fill_ints(host_tensor &t, uint64_t seed, const fill_spec &spec);

/// Uniform values in [-1, 1), in logical order: real-valued data, for measuring rounding error.
void fill_uniform(host_tensor &t, uint64_t seed);

}  // namespace convgrad::tool
