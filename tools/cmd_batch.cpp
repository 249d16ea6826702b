// `convgrad batch HARNESS...`: benchdnn graph harness files, every --case checked.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "case_run.hpp"
#include "commands.hpp"
#include "runner.hpp"

namespace convgrad::tool {

namespace {

struct batch_args {
    std::vector<std::string> files;
    std::string cases_dir;
    int threads = 0;
    bool verbose = false;
    std::string shard;  // "I/N"
};

// Options in effect (benchdnn: they persist until --reset) and their text for the report.
struct settings {
    case_options opts;
    std::string text;
    void reset() {
        opts = case_options{};
        opts.check = true;
        text.clear();
    }
};

bool starts_with(const std::string &s, const char *p) { return s.rfind(p, 0) == 0; }

}  // namespace

void add_batch_command(CLI::App &app, int &exit_code) {
    auto args = std::make_shared<batch_args>();
    CLI::App *sub = app.add_subcommand(
        "batch",
        "Run benchdnn graph harness files: each `--reset [--dt=..] [--mb=..] [--in-shapes=..] "
        "[--op-attrs=..] --case=op/f32/NAME.json` line\nis run and checked against the reference; "
        "one line per case, then `N passed, N failed`.\n"
        "Example: convgrad batch /work/shared/cases/onednn/op/harness_f32_ci");
    sub->add_option("harness", args->files, "harness files")->required();  // missing: exit 2
    sub->add_option("--cases-dir", args->cases_dir,
                    "folder the --case paths are relative to (default: the parent of each harness "
                    "file's folder, e.g. cases/onednn for cases/onednn/op/harness_f32_ci)");
    sub->add_option("--threads", args->threads, "OpenMP threads");
    sub->add_option("--shard", args->shard,
                    "I/N: run only the cases whose index (counted over all files, from 0) is I modulo N");
    sub->add_flag("-v,--verbose", args->verbose, "print each case's ops, tensors and checks");
    sub->callback([args, sub, &exit_code] {
        set_threads(sub->count("--threads") ? std::optional<int>(args->threads) : std::nullopt);
        long shard_i = 0, shard_n = 1;
        if (!args->shard.empty()) {
            const size_t slash = args->shard.find('/');
            try {
                if (slash == std::string::npos) throw std::invalid_argument("no /");
                shard_i = std::stol(args->shard.substr(0, slash));
                shard_n = std::stol(args->shard.substr(slash + 1));
            } catch (const std::logic_error &) {
                shard_n = 0;
            }
            if (shard_n < 1 || shard_i < 0 || shard_i >= shard_n)
                throw CLI::ValidationError("--shard", "'" + args->shard + "' is not I/N with 0 <= I < N");
        }
        long case_index = 0;
        int passed = 0, failed = 0;
        for (const auto &file : args->files) {
            namespace fs = std::filesystem;
            const fs::path base = args->cases_dir.empty() ? fs::absolute(file).parent_path().parent_path()
                                                          : fs::path(args->cases_dir);
            std::ifstream in(file);
            if (!in) throw error(status::invalid_arguments, file + ": cannot open");
            std::string line;
            int lineno = 0;
            settings st;
            st.reset();
            while (std::getline(in, line)) {
                ++lineno;
                const size_t hash = line.find('#');
                if (hash != std::string::npos) line.resize(hash);
                std::istringstream ls(line);
                std::string tok;
                while (ls >> tok) {
                    const std::string where = file + ":" + std::to_string(lineno);
                    try {
                        if (tok == "--reset") {
                            st.reset();
                        } else if (starts_with(tok, "--dt=")) {
                            st.opts.rewrite.dt = parse_float_dt(tok.substr(5));
                            st.text += tok + " ";
                        } else if (starts_with(tok, "--mb=")) {
                            st.opts.rewrite.mb = std::stoll(tok.substr(5));
                            st.text += tok + " ";
                        } else if (starts_with(tok, "--in-shapes=")) {
                            st.opts.rewrite.in_shapes = tok.substr(12);
                            st.text += tok + " ";
                        } else if (starts_with(tok, "--op-attrs=")) {
                            st.opts.rewrite.op_attrs = tok.substr(11);
                            st.text += tok + " ";
                        } else if (starts_with(tok, "--case=")) {
                            if (case_index++ % shard_n != shard_i) continue;
                            const std::string rel = tok.substr(7);
                            const std::string label = st.text + tok;
                            try {
                                const auto t0 = std::chrono::steady_clock::now();
                                const auto doc = json::read_file((base / rel).string());
                                std::ostringstream detail;
                                const case_result r = run_case(doc, st.opts, detail, args->verbose);
                                if (args->verbose) std::cout << detail.str();
                                const double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
                                char tbuf[32];
                                std::snprintf(tbuf, sizeof tbuf, " (%.2fs)", sec);
                                std::cout << (r.pass ? "PASS " : "FAIL ") << label << "  [" << r.kernels
                                          << "] " << r.check_summary << tbuf << std::endl;
                                (r.pass ? passed : failed)++;
                            } catch (const std::exception &e) {
                                std::cout << "FAIL " << label << "  error: " << e.what() << std::endl;
                                ++failed;
                            }
                        } else {
                            throw error(status::invalid_arguments, "unsupported option '" + tok + "'");
                        }
                    } catch (const CLI::ValidationError &e) {
                        std::cout << "FAIL " << where << ": " << e.what() << " (rest of the line skipped)" << std::endl;
                        ++failed;
                        break;
                    } catch (const error &e) {
                        std::cout << "FAIL " << where << ": " << e.what() << " (rest of the line skipped)" << std::endl;
                        ++failed;
                        break;
                    } catch (const std::logic_error &e) {
                        std::cout << "FAIL " << where << ": bad value in '" << tok << "' (rest of the line skipped)"
                                  << std::endl;
                        ++failed;
                        break;
                    }
                }
            }
        }
        std::cout << passed << " passed, " << failed << " failed" << std::endl;
        exit_code = failed ? 1 : 0;
    });
}

}  // namespace convgrad::tool
