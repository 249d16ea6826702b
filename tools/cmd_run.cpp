// `convgrad run CASE.json`: one JSON graph with benchdnn's rewrites, inputs and outputs as .npy.
#include <iostream>

#include "case_run.hpp"
#include "commands.hpp"
#include "runner.hpp"

namespace convgrad::tool {

data_type parse_float_dt(const std::string &s) {
    if (s == "f32") return data_type::f32;
    if (s == "bf16") return data_type::bf16;
    if (s == "f16") return data_type::f16;
    throw CLI::ValidationError("--dt", "'" + s + "' is not f32, bf16 or f16");
}

namespace {

struct run_args {
    std::string case_file, dt, in_shapes, op_attrs, impl = "best", dump_json;
    long long mb = 0;
    std::vector<std::string> inputs, outputs;
    bool check = false, perf = false;
    unsigned long long seed = 1;
    int threads = 0;
};

}  // namespace

void add_run_command(CLI::App &app, int &exit_code) {
    auto args = std::make_shared<run_args>();
    CLI::App *sub = app.add_subcommand(
        "run",
        "Run a oneDNN Graph JSON case (ops run one after the other through intermediate tensors).\n"
        "Inputs not given with --input are seeded small integers (exact sums, as benchdnn fills).\n"
        "Example: convgrad run conv_bwd_d_2d.json --dt=bf16 --in-shapes=0:1x128x14x14*acdb --check");
    // (No CLI11 ExistingFile check: a missing file is an error like any other, exit status 2.)
    sub->add_option("case", args->case_file, "JSON graph file")->required();
    sub->add_option("--dt", args->dt, "rewrite every float tensor to f32, bf16 or f16");
    sub->add_option("--mb", args->mb, "batch size of the data inputs (not for ConvolutionBackwardData, "
                                      "ConvolutionBackwardWeights, ConvTransposeBackwardWeights, as in benchdnn)");
    sub->add_option("--in-shapes", args->in_shapes,
                    "input shapes: ID:AxBxC[*TAG]+ID:..., TAG a oneDNN format tag (abcd, acdb, abcde, acdeb...)");
    sub->add_option("--op-attrs", args->op_attrs,
                    "attributes: OPID:NAME:VALUE*NAME:VALUE+OPID:..., lists written 1x2x3");
    sub->add_option("--input", args->inputs, "ID=FILE.npy: read input tensor ID from a .npy file (repeatable)");
    sub->add_option("--output", args->outputs, "ID=FILE.npy: write tensor ID (any tensor) after the run (repeatable)");
    sub->add_flag("--check", args->check, "compare every output with the reference kernel; exit 1 on failure");
    sub->add_flag("--perf", args->perf, "time the graph: median ms per execution and GFLOP/s");
    sub->add_option("--seed", args->seed, "seed of the generated inputs (default 1)");
    sub->add_option("--impl", args->impl, "best (default) or reference")->check(CLI::IsMember({"best", "reference"}));
    sub->add_option("--threads", args->threads, "OpenMP threads (default: OMP_NUM_THREADS or all cores)");
    sub->add_option("--dump-json", args->dump_json, "write the rewritten graph, with the compiled shapes, to FILE");
    sub->callback([args, sub, &exit_code] {
        case_options o;
        if (!args->dt.empty()) o.rewrite.dt = parse_float_dt(args->dt);
        if (sub->count("--mb")) o.rewrite.mb = args->mb;
        o.rewrite.in_shapes = args->in_shapes;
        o.rewrite.op_attrs = args->op_attrs;
        for (const auto &s : args->inputs) o.input_files.push_back(parse_id_file(s, "--input"));
        for (const auto &s : args->outputs) o.output_files.push_back(parse_id_file(s, "--output"));
        o.check = args->check;
        o.perf = args->perf;
        o.seed = args->seed;
        o.impl = args->impl == "reference" ? impl_choice::reference : impl_choice::best;
        o.dump_json = args->dump_json;
        set_threads(sub->count("--threads") ? std::optional<int>(args->threads) : std::nullopt);
        const json::document doc = json::read_file(args->case_file);
        const case_result r = run_case(doc, o, std::cout, true);
        if (o.check) std::cout << (r.pass ? "PASS" : "FAIL") << "\n";
        exit_code = r.pass ? 0 : 1;
    });
}

}  // namespace convgrad::tool
