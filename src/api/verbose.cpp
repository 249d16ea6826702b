#include "api/verbose.hpp"

#include <cstdio>
#include <cstdlib>

#include "api/compiled_op.hpp"

namespace convgrad::detail {

int verbose_level() {
    static const int level = [] {
        const char *e = std::getenv("CONVGRAD_VERBOSE");
        return e ? std::atoi(e) : 0;
    }();
    return level;
}

namespace {
// "f32", or "f32(math=bf16)" for an f32 op under fpmath_mode bf16/f16.
std::string type_label(const conv_problem &p) {
    std::string t = to_string(p.dt);
    if (p.math_dt != p.dt) t += std::string("(math=") + to_string(p.math_dt) + ")";
    return t;
}
}  // namespace

void verbose_compile(const compiled_op &c, const std::vector<std::string> &refusals) {
    if (verbose_level() < 2) return;
    for (const auto &r : refusals)
        std::fprintf(stderr, "convgrad,skip,%s,%s\n", to_string(c.source.kind()), r.c_str());
    std::fprintf(stderr, "convgrad,compile,%s,%s,%s,%s\n", to_string(c.source.kind()),
                 type_label(c.r.prob).c_str(), c.impl->name, c.r.prob.desc().c_str());
    const std::string plan = c.k ? c.k->describe() : std::string();
    if (!plan.empty())
        std::fprintf(stderr, "convgrad,plan,%s,%s,%s\n", to_string(c.source.kind()), c.impl->name,
                     plan.c_str());
}

void verbose_exec(const compiled_op &c, double ms) {
    std::fprintf(stderr, "convgrad,exec,%s,%s,%s,%s,%s,%g\n", to_string(c.source.kind()),
                 type_label(c.r.prob).c_str(), to_string(c.r.prob.dir), c.impl->name,
                 c.r.prob.desc().c_str(), ms);
}

}  // namespace convgrad::detail
