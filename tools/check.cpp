#include "check.hpp"

#include <cmath>
#include <cstdio>

namespace convgrad::tool {

std::string check_result::summary() const {
    char buf[256];
    std::snprintf(buf, sizeof buf, "max_abs_err=%.3g max_rel_err=%.3g mismatches=%lld/%lld %s",
                  max_abs, max_rel, (long long)mismatches, (long long)count, pass ? "PASS" : "FAIL");
    return buf;
}

namespace {
double ulp_of(data_type dt, double v) {
    const int mant = dt == data_type::bf16 ? 7 : dt == data_type::f16 ? 10 : 23;
    const double a = std::fabs(v);
    if (a == 0) return dt == data_type::f16 ? std::ldexp(1.0, -24) : std::ldexp(1.0, -133);
    int e;
    std::frexp(a, &e);  // a in [2^(e-1), 2^e)
    if (dt == data_type::f16 && e - 1 < -14) return std::ldexp(1.0, -24);
    return std::ldexp(1.0, e - 1 - mant);
}
}  // namespace

check_result compare(const host_tensor &got, const host_tensor &exp, double terms, bool exact) {
    check_result r;
    r.count = exp.count();
    if (got.count() != exp.count() || got.lt().shape() != exp.lt().shape()) {
        r.pass = false;
        r.mismatches = r.count;
        return r;
    }
    const data_type dt = exp.lt().dtype();
    double scale = 0;  // RMS of the expected values: the size of the result
    if (!exact && dt == data_type::f32) {
        double s2 = 0;
        for (dim_t i = 0; i < r.count; ++i) {
            const double e = exp.get(i);
            if (std::isfinite(e)) s2 += e * e;
        }
        scale = r.count ? std::sqrt(s2 / double(r.count)) : 0;
    }
    const double eps = std::ldexp(1.0, -23);
    const double f32_factor = 4 * eps * std::sqrt(std::max(terms, 1.0));
    for (dim_t i = 0; i < r.count; ++i) {
        const double g = got.get(i), e = exp.get(i);
        double diff;
        bool ok;
        if (std::isnan(g) || std::isnan(e)) {
            ok = std::isnan(g) && std::isnan(e);
            diff = ok ? 0 : INFINITY;
        } else if (std::isinf(g) || std::isinf(e)) {
            ok = g == e;
            diff = ok ? 0 : INFINITY;
        } else {
            diff = std::fabs(g - e);
            if (exact) ok = diff == 0;
            else if (dt == data_type::f32) ok = diff <= f32_factor * std::max(std::fabs(e), scale);
            else ok = diff <= ulp_of(dt, e);
        }
        const double rel = e != 0 ? diff / std::fabs(e) : (diff == 0 ? 0 : INFINITY);
        if (!ok) ++r.mismatches;
        if (diff > r.max_abs || (r.worst_index < 0 && !ok)) {
            r.max_abs = std::max(r.max_abs, diff);
            r.worst_index = i;
            r.worst_got = g;
            r.worst_exp = e;
        }
        if (rel > r.max_rel) r.max_rel = rel;
    }
    r.pass = r.mismatches == 0;
    return r;
}

}  // namespace convgrad::tool
