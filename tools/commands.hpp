// The subcommands of the convgrad tool. Each registers its options on the app; its callback
// runs the command and stores the exit status in `exit_code`.
#pragma once

#include <CLI/CLI.hpp>

#include "convgrad/types.hpp"

namespace convgrad::tool {

void add_run_command(CLI::App &app, int &exit_code);
void add_batch_command(CLI::App &app, int &exit_code);
void add_bench_command(CLI::App &app, int &exit_code);
void add_info_command(CLI::App &app, int &exit_code);

/// Parses f32/bf16/f16 (for --dt); throws CLI::ValidationError otherwise.
data_type parse_float_dt(const std::string &s);

}  // namespace convgrad::tool
