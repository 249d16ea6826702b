#include "fill.hpp"

#include <algorithm>
#include <cmath>
#include <random>

namespace convgrad::tool {

fill_spec fill_for(data_type dt, double terms) {
    const double limit = dt == data_type::f16 ? 32768.0 : double(1 << 23);
    const int cap = dt == data_type::f32 ? 32 : 4;
    terms = std::max(terms, 1.0);
    fill_spec s;
    s.bound = std::clamp(int(std::floor(std::sqrt(limit / terms))), 1, cap);
    if (terms > limit) s.density = limit / terms;
    return s;
}

void fill_ints(host_tensor &t, uint64_t seed, const fill_spec &spec) {
    std::mt19937_64 rng(seed * 0x9E3779B97F4A7C15ull + 12345);
    std::uniform_int_distribution<int> dist(-spec.bound, spec.bound);
    std::uniform_real_distribution<double> keep(0.0, 1.0);
    const dim_t n = t.count();
    const bool sparse = spec.density < 1.0;
    for (dim_t i = 0; i < n; ++i) {
        int v = dist(rng);
        if (sparse && keep(rng) >= spec.density) v = 0;
        t.set(i, v);
    }
}



void fill_uniform(host_tensor &t, uint64_t seed) {
    std::mt19937_64 rng(seed * 0x9E3779B97F4A7C15ull + 777);
    std::uniform_real_distribution<double> dist(-1.0, 1.0);
    for (dim_t i = 0; i < t.count(); ++i) t.set(i, dist(rng));
}

}  // namespace convgrad::tool
