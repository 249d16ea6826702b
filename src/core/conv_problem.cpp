#include "core/conv_problem.hpp"

#include <sstream>

namespace convgrad::detail {

const char *to_string(conv_direction d) {
    switch (d) {
        case conv_direction::fwd: return "fwd";
        case conv_direction::bwd_data: return "bwd_data";
        case conv_direction::bwd_weights: return "bwd_weights";
    }
    return "?";
}

double conv_problem::macs() const {
    return double(mb) * double(g) * double(ocg) * double(icg) * double(osp()) * double(ksp());
}

std::string conv_problem::desc() const {
    // benchdnn's conv descriptor: only the spatial axes the problem has, dilation 0-based.
    std::ostringstream os;
    const char *names[3] = {"d", "h", "w"};
    auto axes = [&](const char *prefix, const dim_t *v, dim_t bias) {
        for (int a = max_spatial - nsp; a < max_spatial; ++a) os << prefix << names[a] << v[a] - bias;
    };
    os << "g" << g << "mb" << mb << "ic" << ic();
    axes("i", i, 0);
    os << "oc" << oc();
    axes("o", o, 0);
    axes("k", k, 0);
    axes("s", s, 0);
    axes("p", pb, 0);
    bool any_pe = false, any_dl = false;
    for (int a = 0; a < max_spatial; ++a) {
        any_dl |= dl[a] != 1;
        any_pe |= pe[a] != pb[a];
    }
    if (any_dl) axes("d", dl, 1);
    if (any_pe) {
        for (int a = max_spatial - nsp; a < max_spatial; ++a) os << "_pe" << names[a] << pe[a];
    }
    return os.str();
}

}  // namespace convgrad::detail
