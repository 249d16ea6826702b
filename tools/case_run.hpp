// One case: a JSON graph, benchdnn rewrites, inputs from files or seeded, outputs to files,
// optional check against the reference and timing. Shared by `run` and `batch`.
#pragma once

#include <iosfwd>
#include <string>
#include <utility>
#include <vector>

#include "rewrite.hpp"

namespace convgrad::tool {

struct case_options {
    rewrite_options rewrite;
    std::vector<std::pair<size_t, std::string>> input_files;   // --input ID=FILE.npy
    std::vector<std::pair<size_t, std::string>> output_files;  // --output ID=FILE.npy
    bool check = false;
    bool perf = false;
    uint64_t seed = 1;
    impl_choice impl = impl_choice::best;
    std::string dump_json;  // write the rewritten graph with compiled shapes
};

struct case_result {
    bool pass = true;          // false when a check failed
    std::string kernels;       // kernel of each op, comma separated
    std::string check_summary; // worst check over the outputs ("" without --check)
    double ms = 0, gflops = 0; // with --perf
};

/// Runs a document. `detail`: print each op, tensor and check (the `run` subcommand); without
/// it nothing is printed. Throws convgrad::error on invalid graphs or files.
case_result run_case(const json::document &doc, const case_options &o, std::ostream &out, bool detail);

/// "ID=FILE" -> (ID, FILE); throws invalid_arguments naming `option`.
std::pair<size_t, std::string> parse_id_file(const std::string &s, const std::string &option);

}  // namespace convgrad::tool
