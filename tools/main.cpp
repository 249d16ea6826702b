// convgrad: run oneDNN Graph JSON cases and benchdnn harness files, benchmark the kernels on a
// suite of real network layers, and show what the library detected.
#include <cstdio>

#include "commands.hpp"
#include "convgrad/version.hpp"

int main(int argc, char **argv) {
    CLI::App app{std::string("convgrad ") + convgrad::version_string +
                 ": the oneDNN Graph convolution ops and their gradients.\n"
                 "Run JSON graphs (run), benchdnn harness files (batch), the benchmark suite (bench),\n"
                 "or show the detected CPU and kernels (info). `convgrad SUBCOMMAND --help` for details."};
    app.set_version_flag("--version", std::string("convgrad ") + convgrad::version().string);
    app.require_subcommand(1);
    int exit_code = 0;
    convgrad::tool::add_run_command(app, exit_code);
    convgrad::tool::add_batch_command(app, exit_code);
    convgrad::tool::add_bench_command(app, exit_code);
    convgrad::tool::add_info_command(app, exit_code);
    try {
        app.parse(argc, argv);
    } catch (const CLI::ValidationError &e) {
        // An option's value breaks its rule (--threads=0, --offset=6): an error like the others
        // (status 2, docs/cli.md), not a command-line syntax error.
        app.exit(e);
        return 2;
    } catch (const CLI::ParseError &e) {
        return app.exit(e);
    } catch (const convgrad::error &e) {
        std::fprintf(stderr, "convgrad: error (%s): %s\n", convgrad::to_string(e.code()), e.what());
        return 2;
    } catch (const std::exception &e) {
        std::fprintf(stderr, "convgrad: error: %s\n", e.what());
        return 2;
    }
    return exit_code;
}
