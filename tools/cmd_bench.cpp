// `convgrad bench`: not yet implemented (next commit).
#include "commands.hpp"

namespace convgrad::tool {
void add_bench_command(CLI::App &, int &) {}
}  // namespace convgrad::tool
