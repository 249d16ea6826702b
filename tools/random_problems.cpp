#include "random_problems.hpp"

#include <algorithm>
#include <cmath>
#include <random>

namespace convgrad::tool {
namespace {

// Log-uniform integer in [lo, hi]: small and large sizes equally likely per octave.
dim_t log_uniform(std::mt19937_64 &rng, dim_t lo, dim_t hi) {
    std::uniform_real_distribution<double> u(std::log(double(lo)), std::log(double(hi) + 1.0));
    return std::clamp<dim_t>(dim_t(std::exp(u(rng))), lo, hi);
}

bool chance(std::mt19937_64 &rng, double p) {
    return std::uniform_real_distribution<double>(0, 1)(rng) < p;
}

// One canonical convolution (big side i, small side o) drawn from the space; not yet sized.
struct canon {
    int nsp;
    dim_t g, icg, ocg, mb, i[3], o[3], k[3], s[3], dl[3], pb[3], pe[3];
};

canon draw(std::mt19937_64 &rng) {
    canon c{};
    c.nsp = int(1 + rng() % 3);
    const double kind = std::uniform_real_distribution<double>(0, 1)(rng);
    if (kind < 0.15) {  // depthwise (sometimes with a channel multiplier)
        c.g = log_uniform(rng, 1, 1024);
        c.icg = 1;
        c.ocg = chance(rng, 0.8) ? 1 : 2;
    } else if (kind < 0.3) {  // grouped
        c.g = dim_t(1) << (1 + rng() % 6);
        c.icg = log_uniform(rng, 1, std::max<dim_t>(1, 1024 / c.g));
        c.ocg = log_uniform(rng, 1, std::max<dim_t>(1, 1024 / c.g));
    } else {
        c.g = 1;
        c.icg = log_uniform(rng, 1, 1024);
        c.ocg = log_uniform(rng, 1, 1024);
    }
    c.mb = log_uniform(rng, 1, 64);
    const dim_t kmax = c.nsp == 1 ? 1024 : 16, imax = c.nsp == 1 ? 16384 : c.nsp == 2 ? 512 : 96;
    for (int x = 0; x < 3; ++x)
        c.i[x] = c.o[x] = c.k[x] = c.s[x] = c.dl[x] = 1, c.pb[x] = c.pe[x] = 0;
    for (int x = 3 - c.nsp; x < 3; ++x) {
        c.k[x] = chance(rng, 0.25) ? 1 : log_uniform(rng, 1, kmax);
        c.dl[x] = chance(rng, 0.85) || c.k[x] == 1 ? 1 : log_uniform(rng, 2, 6);
        c.s[x] = chance(rng, 0.5)
                     ? 1
                     : log_uniform(rng, 2, std::max<dim_t>(2, std::min<dim_t>(c.k[x], 256)));
        const dim_t ke = (c.k[x] - 1) * c.dl[x] + 1;
        const dim_t half = (ke - 1) / 2;
        c.pb[x] = chance(rng, 0.4) ? 0 : chance(rng, 0.5) ? half : dim_t(rng() % (half + 1));
        c.pe[x] = chance(rng, 0.7) ? c.pb[x] : dim_t(rng() % (half + 1));
        // The big side: at least one window, up to the axis limit (a kernel up to the input).
        const dim_t lo = std::max<dim_t>(1, ke - c.pb[x] - c.pe[x]);
        c.i[x] = chance(rng, 0.1) ? lo : log_uniform(rng, lo, std::max(lo, imax));
        c.o[x] = (c.i[x] + c.pb[x] + c.pe[x] - ke) / c.s[x] + 1;
        // Trim the big side to the last window, so both families describe the same problem
        // without output_padding: i = (o-1)*s + ke - pb - pe.
        c.i[x] = (c.o[x] - 1) * c.s[x] + ke - c.pb[x] - c.pe[x];
    }
    return c;
}

double gflop_of(const canon &c) {
    double v = 2.0 * double(c.mb) * double(c.g) * double(c.icg) * double(c.ocg);
    for (int x = 0; x < 3; ++x) v *= double(c.o[x]) * double(c.k[x]);
    return v * 1e-9;
}

}  // namespace

std::vector<random_problem> random_problems(int n, uint64_t seed) {
    static const op_kind kinds[6] = {op_kind::Convolution,
                                     op_kind::ConvolutionBackwardData,
                                     op_kind::ConvolutionBackwardWeights,
                                     op_kind::ConvTranspose,
                                     op_kind::ConvTransposeBackwardData,
                                     op_kind::ConvTransposeBackwardWeights};
    std::mt19937_64 rng(seed);
    std::vector<random_problem> out;
    for (int j = 0; j < n; ++j) {
        canon c;
        double gf;
        do {
            c = draw(rng);
            gf = gflop_of(c);
        } while (gf < 0.01 || gf > 5.0);
        random_problem r;
        r.kind = kinds[j % 6];
        r.gflop = gf;
        conv_desc &d = r.desc;
        const bool deconv = is_conv_transpose_family(r.kind);
        d.nsp = c.nsp;
        d.g = c.g;
        d.mb = c.mb;
        // The ConvTranspose family's descriptor names its own src (the canonical small side) i*/ic.
        d.ic = (deconv ? c.ocg : c.icg) * c.g;
        d.oc = (deconv ? c.icg : c.ocg) * c.g;
        for (int x = 0; x < 3; ++x) {
            d.i[x] = deconv ? c.o[x] : c.i[x];
            d.o[x] = deconv ? c.i[x] : c.o[x];
            d.k[x] = c.k[x], d.s[x] = c.s[x], d.dl[x] = c.dl[x] - 1, d.pb[x] = c.pb[x],
            d.pe[x] = c.pe[x];
        }
        d.name = "random" + std::to_string(j);
        out.push_back(r);
    }
    return out;
}

}  // namespace convgrad::tool
