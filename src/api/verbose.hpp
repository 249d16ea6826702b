// CONVGRAD_VERBOSE: 1 prints one line per execution (op, problem, kernel, time); 2 also prints
// at compile time which kernels declined the problem and why.
#pragma once

#include <string>
#include <vector>

namespace convgrad {
struct compiled_op;
namespace detail {

int verbose_level();
void verbose_compile(const compiled_op &c, const std::vector<std::string> &refusals);
void verbose_exec(const compiled_op &c, double ms);

}  // namespace detail
}  // namespace convgrad
