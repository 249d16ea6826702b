// `convgrad bench`: the built-in suite of network layers (or benchdnn descriptors), each op
// checked against the reference and timed.
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <map>
#include <fstream>
#include <iostream>
#include <sstream>

#include <nlohmann/json.hpp>

#include <cstdlib>

#include "baseline.hpp"
#include "commands.hpp"
#include "desc.hpp"
#include "fill.hpp"
#include "random_problems.hpp"
#include "runner.hpp"
#include "suite.hpp"

namespace convgrad::tool {

namespace {

struct bench_args {
    std::string op, dt = "f32", threads, json_file, tag = "nxc", without, prefer, fpmath = "strict",
                    stat = "median";
    int random = 0;
    uint64_t seed = 1;
    long long mb = 0;
    int offset = 0;  // bytes past a 64-byte boundary at which every convgrad tensor starts
    std::vector<std::string> descs, layers;
    double budget_ms = 500;
    double check_gflop = 0.5;
    bool list = false;
    bool no_onednn = false;
    bool require_onednn = false;
};

// Speed ratios of one (op, type, threads) group, for the geometric means.
// Sets an environment variable for a scope (nothing when the value is empty), restoring it after.
class scoped_env {
  public:
    scoped_env(const char *name, const std::string &value) : name_(name) {
        if (value.empty()) return;
        const char *old = std::getenv(name);
        had_ = old != nullptr;
        if (had_) saved_ = old;
        setenv(name, value.c_str(), 1);
        set_ = true;
    }
    ~scoped_env() {
        if (!set_) return;
        if (had_) setenv(name_, saved_.c_str(), 1);
        else unsetenv(name_);
    }
    scoped_env(const scoped_env &) = delete;
    scoped_env &operator=(const scoped_env &) = delete;

  private:
    const char *name_;
    std::string saved_;
    bool had_ = false, set_ = false;
};

struct ratio_group {
    double log_plain = 0, log_blocked = 0, log_best = 0;
    int n_plain = 0, n_blocked = 0, n_best = 0, below_08 = 0, below_05 = 0, n = 0;
    // The same against convgrad with the --without kernels disabled.
    double log_best_wo = 0;
    int n_best_wo = 0, below_05_wo = 0, below_08_wo = 0;
    void add(double x_plain, double x_blocked, double x_best) {
        ++n;
        if (!std::isnan(x_plain)) log_plain += std::log(x_plain), ++n_plain;
        if (!std::isnan(x_blocked)) log_blocked += std::log(x_blocked), ++n_blocked;
        if (!std::isnan(x_best)) {
            log_best += std::log(x_best), ++n_best;
            below_08 += x_best < 0.8, below_05 += x_best < 0.5;
        }
    }
    void add_without(double x_best) {
        if (std::isnan(x_best)) return;
        log_best_wo += std::log(x_best), ++n_best_wo;
        below_08_wo += x_best < 0.8, below_05_wo += x_best < 0.5;
    }
};

std::string fmt_ms(double ms) {
    if (std::isnan(ms)) return "n/a";
    char b[32];
    std::snprintf(b, sizeof b, "%.3f", ms);
    return b;
}
std::string fmt_ratio(double r) {
    if (std::isnan(r)) return "n/a";
    char b[32];
    std::snprintf(b, sizeof b, "%.2fx", r);
    return b;
}

struct problem {
    std::string name, note;
    conv_desc desc;
    std::vector<op_kind> kinds;
};

std::vector<std::string> split_list(const std::string &s) {
    std::vector<std::string> v;
    std::stringstream ss(s);
    std::string x;
    while (std::getline(ss, x, ',')) v.push_back(x);
    return v;
}

std::vector<op_kind> family_ops(bool deconv) {
    if (deconv)
        return {op_kind::ConvTranspose, op_kind::ConvTransposeBackwardData, op_kind::ConvTransposeBackwardWeights};
    return {op_kind::Convolution, op_kind::ConvolutionBackwardData, op_kind::ConvolutionBackwardWeights};
}

// The summary groups a run belongs to: its (op, type, threads), and all ops of that type and
// thread count.
std::array<std::string, 2> summary_keys(op_kind kind, data_type dt, int thr) {
    const std::string tail = std::string(" ") + to_string(dt) + " " + std::to_string(thr) + "t";
    return {std::string(to_string(kind)) + tail, "all ops" + tail};
}

json::document single(const op &o, const std::string &fpmath = "strict") {
    json::document d;
    d.fpmath_mode = fpmath;
    d.ops.push_back(o);
    d.attr_order.emplace_back();
    return d;
}

struct check_outcome {
    bool pass = true;
    double rel_err = NAN;  // --fpmath other than strict: max |result - strict f32| / max |strict f32|
    std::string text;  // "pass", "pass@mb1", "FAIL@mb1 (max_abs_err=...)"
};

// Checks the optimized kernel against the reference on the problem with its batch reduced so
// that the (slow) reference takes about `max_gflop` at most.
check_outcome check_problem(op_kind kind, const conv_desc &full, data_type dt, bool ncx, double full_flops,
                            double max_gflop, const std::string &fpmath, size_t offset) {
    conv_desc d = full;
    while (d.mb > 1 && full_flops * double(d.mb) / double(full.mb) > max_gflop * 1e9) d.mb = d.mb > 2 ? 2 : 1;
    const json::document doc = single(make_op(kind, d, dt, ncx), fpmath);
    graph_runner best(doc, impl_choice::best), ref(doc, impl_choice::reference);
    tensor_map m = best.allocate(offset);
    best.fill_inputs(m, 1);
    best.execute(m);
    tensor_map rm = ref.allocate_sharing_inputs(m, offset);
    ref.execute(rm);
    const auto &s = best.steps()[0];
    const size_t out = s.cp.outputs()[0].id();
    const check_result c = compare(m.at(out), rm.at(out),
                                   terms_per_output(kind, s.cp.problem_desc()), true);
    check_outcome r;
    r.pass = c.pass;
    r.text = c.pass ? "pass" : "FAIL";
    if (d.mb != full.mb) r.text += "@mb" + std::to_string(d.mb);
    if (!c.pass) r.text += " (" + c.summary() + ")";
    if (doc.fpmath_mode != "strict" && dt == data_type::f32) {
        // The mode's error on real-valued data: against the strict f32 reference, relative to
        // the largest reference value.
        const graph_runner strict_ref(single(make_op(kind, d, dt, ncx)), impl_choice::reference);
        tensor_map um = best.allocate();
        for (size_t id : best.inputs())
            if (best.lt(id).dtype() != data_type::s32) fill_uniform(um.at(id), 7 + id);
        best.execute(um);
        tensor_map sm = strict_ref.allocate_sharing_inputs(um);
        strict_ref.execute(sm);
        const host_tensor &got = um.at(out), &exp = sm.at(out);
        double err = 0, scale = 0;
        for (dim_t i = 0; i < got.count(); ++i) {
            err = std::max(err, std::fabs(got.get(i) - exp.get(i)));
            scale = std::max(scale, std::fabs(exp.get(i)));
        }
        r.rel_err = scale > 0 ? err / scale : err;
    }
    return r;
}

}  // namespace

void add_bench_command(CLI::App &app, int &exit_code) {
    auto args = std::make_shared<bench_args>();
    CLI::App *sub = app.add_subcommand(
        "bench",
        "Benchmark the suite of network layers (ResNet-50, ResNeXt, MobileNetV2, DeepLab, DCGAN, U-Net,\n"
        "FCN, HiFi-GAN...) or the given benchdnn descriptors: each op is checked against the reference\n"
        "(on a batch of 1-2 when the problem is big) and timed (median after a warm-up; --stat=min: the fastest).\n"
        "Examples: convgrad bench --threads=2 --json=bench.json\n"
        "          convgrad bench --op=ConvTransposeBackwardWeights mb32ic512ih8oc256oh16kh4sh2ph1");
    sub->add_option("desc", args->descs,
                    "benchdnn conv/deconv descriptors (NXC data); the ConvTranspose family reads them as "
                    "benchdnn's deconv driver (i*/ic = its src). Default: the built-in suite");
    sub->add_option("--op", args->op,
                    "only this op (with descriptors: which op; default the three Convolution-family ops)");
    sub->add_option("--dt", args->dt, "data types, comma separated: f32, bf16, f16 (default f32)");
    sub->add_option("--threads", args->threads, "thread counts, comma separated (default: all cores)");
    sub->add_option("--mb", args->mb, "batch size for every problem (overrides the suite's)");
    sub->add_option("--json", args->json_file, "write one record per (problem, op, type, threads) to FILE");
    sub->add_option("--budget-ms", args->budget_ms, "time spent timing each op after the warm-up (default 500)");
    sub->add_option("--stat", args->stat,
                    "statistic of each op's timed executions, convgrad's and oneDNN's alike: median (default) or "
                    "min, the fastest, steadier on a shared host for comparing two builds or options");
    sub->add_option("--check-gflop", args->check_gflop,
                    "largest problem checked at full batch, in GFLOP (default 0.5; bigger: batch 1-2)");
    sub->add_option("--tag", args->tag, "data layout of the timed tensors: nxc (default; XIO/XOI weights) or ncx "
                                        "(PyTorch's: NCX data, OIX/IOX weights)");
    sub->add_option("--random", args->random,
                    "instead of the suite, N random problems (1-D/2-D/3-D, channels 1-1024, kernels up to 1024 in "
                    "1-D and 16 in 2-D/3-D, strides, dilations, groups, depthwise, batch 1-64, the six ops in "
                    "turn, each 0.01-5 GFLOP)");
    sub->add_option("--seed", args->seed, "seed of --random (default 1): the same seed draws the same problems");
    sub->add_option("--without", args->without,
                    "also time each op with these kernels disabled (name prefixes, comma separated, as "
                    "CONVGRAD_DISABLE), e.g. --without=gemm: the 'w/o' columns");
    sub->add_option("--prefer", args->prefer,
                    "also time each op with these kernels preferred (name prefixes, as CONVGRAD_PREFER: tried "
                    "first, taking every problem they can compute, cost estimates ignored), e.g. --prefer=gemm: "
                    "the 'w/o' columns (with --without too: both apply)");
    sub->add_option("--fpmath", args->fpmath,
                    "fpmath_mode of the f32 ops (strict, bf16, f16, tf32, any; default strict): also measures the "
                    "mode's error against strict f32 on uniform [-1, 1) data (the 'err' column)");
    sub->add_option("--offset", args->offset,
                    "bytes past a 64-byte boundary at which convgrad's tensors start, 0-60 in steps of 4 (default "
                    "0; 16 is where glibc's malloc puts a large std::vector's or NumPy array's data); oneDNN's "
                    "stay aligned");
    sub->add_flag("--list", args->list, "list the suite and exit");
    sub->add_flag("--no-onednn", args->no_onednn, "do not run oneDNN side by side (when built with it)");
    sub->add_flag("--require-onednn", args->require_onednn,
                  "fail unless oneDNN runs side by side (the main job: a missing baseline is an error)");
    sub->add_option("--layers", args->layers, "only these suite layers, comma separated (names from --list)")
        ->delimiter(',');
    sub->callback([args, sub, &exit_code] {
        if (args->list) {
            for (const auto &l : default_suite())
                std::printf("%-26s %-14s %-40s %s\n", l.name, l.deconv ? "ConvTranspose" : "Convolution", l.desc, l.note);
            exit_code = 0;
            return;
        }
        std::optional<op_kind> only;
        if (!args->op.empty()) {
            only = parse_op_kind(args->op);
            if (!only) throw CLI::ValidationError("--op", "'" + args->op + "' is not one of the six op kinds");
        }
        std::vector<data_type> dts;
        for (const auto &s : split_list(args->dt)) dts.push_back(parse_float_dt(s));
        const bool vs_f32 = dts.size() > 1 && std::find(dts.begin(), dts.end(), data_type::f32) != dts.end();
        // f32 first, so that the other types can be compared with it ('x f32').
        if (vs_f32) std::stable_partition(dts.begin(), dts.end(), [](data_type t) { return t == data_type::f32; });
        std::vector<int> threads;
        for (const auto &s : split_list(args->threads)) {
            try {
                threads.push_back(std::stoi(s));
            } catch (const std::logic_error &) {
                throw CLI::ValidationError("--threads", "'" + s + "' is not a number");
            }
            if (threads.back() < 1 || threads.back() > max_thread_count)
                throw CLI::ValidationError("--threads", "must be between 1 and " + std::to_string(max_thread_count));
        }
        if (threads.empty()) threads.push_back(current_threads());
        if (sub->count("--mb") && args->mb < 1) throw CLI::ValidationError("--mb", "must be positive");
        if (args->tag != "nxc" && args->tag != "ncx") throw CLI::ValidationError("--tag", "must be nxc or ncx");
        if (args->stat != "median" && args->stat != "min")
            throw CLI::ValidationError("--stat", "must be median or min; got '" + args->stat + "'");
        const timing_stat stat = args->stat == "min" ? timing_stat::min : timing_stat::median;
        if (args->offset < 0 || args->offset > 60 || args->offset % 4 != 0)
            throw CLI::ValidationError("--offset", "must be a multiple of 4 from 0 to 60 bytes; got " +
                                                       std::to_string(args->offset));
        const bool ncx = args->tag == "ncx";
        if (fpmath_mode m; !parse_fpmath_mode(args->fpmath, m))
            throw CLI::ValidationError("--fpmath", "must be one of strict, bf16, f16, tf32, any; got '" + args->fpmath + "'");
        const bool fpmath = args->fpmath != "strict";
        if (args->random < 0) throw CLI::ValidationError("--random", "must be positive");
        if (args->random > 0 && !args->descs.empty())
            throw CLI::ValidationError("--random", "give either descriptors or --random");

        std::vector<problem> problems;
        if (!args->layers.empty() && (!args->descs.empty() || args->random > 0))
            throw CLI::ValidationError("--layers", "selects suite layers: give it, --random or descriptors, not two of them");
        if (args->random > 0) {
            for (const auto &r : random_problems(args->random, args->seed)) {
                if (only && *only != r.kind) continue;
                problems.push_back({r.desc.name, "", r.desc, {r.kind}});
            }
        } else if (args->descs.empty()) {
            for (const auto &name : args->layers) {
                const auto &s = default_suite();
                if (std::none_of(s.begin(), s.end(), [&](const suite_layer &l) { return l.name == name; }))
                    throw CLI::ValidationError("--layers", "no suite layer '" + name + "' (see --list)");
            }
            for (const auto &l : default_suite()) {
                if (only && is_conv_transpose_family(*only) != l.deconv) continue;
                if (!args->layers.empty() &&
                    std::find(args->layers.begin(), args->layers.end(), l.name) == args->layers.end())
                    continue;
                problem p{l.name, l.note, parse_desc(l.desc, l.deconv), {}};
                p.kinds = only ? std::vector<op_kind>{*only} : family_ops(l.deconv);
                problems.push_back(p);
            }
        } else {
            for (const auto &s : args->descs) {
                const bool deconv = only && is_conv_transpose_family(*only);
                problem p{"", "", parse_desc(s, deconv), {}};
                p.name = p.desc.name.empty() ? s : p.desc.name;
                p.kinds = only ? std::vector<op_kind>{*only} : family_ops(false);
                problems.push_back(p);
            }
        }
        if (sub->count("--mb"))
            for (auto &p : problems) p.desc.mb = args->mb;

        const bool tty = isatty(STDERR_FILENO);
        const size_t total = [&] {
            size_t n = 0;
            for (const auto &p : problems) n += p.kinds.size();
            return n * dts.size() * threads.size();
        }();
        if (args->require_onednn && (args->no_onednn || !onednn_available()))
            throw error(status::runtime_error,
                        args->no_onednn ? "bench: --require-onednn contradicts --no-onednn"
                                        : "bench: --require-onednn, but this convgrad was built without the oneDNN "
                                          "baseline (libdnnl-dev missing or unusable at configure time: see the "
                                          "'convgrad bench: oneDNN' line of the cmake output)");
        const bool with_onednn = onednn_available() && !args->no_onednn;
        std::map<int, double> peak;  // FMA peak per thread count, measured now
        for (int thr : threads) {
            peak[thr] = fma_peak_gflops(thr);
            std::printf("FMA peak on %d thread%s: %.1f GFLOP/s (f32, measured now)\n", thr, thr > 1 ? "s" : "",
                        peak[thr]);
        }
        std::printf("oneDNN side by side: %s\n", with_onednn ? "yes (oneDNN 2.6; 'x plain' / 'x blocked' = oneDNN "
                                                               "time / convgrad time, > 1 means convgrad is faster)"
                                                             : (args->no_onednn ? "no (--no-onednn)"
                                                                                : "no (built without libdnnl-dev)"));
        const bool without = !args->without.empty() || !args->prefer.empty();
        std::printf("data layout: %s\n", ncx ? "NCX data, OIX/IOX weights (--tag=ncx)" : "NXC data, XIO/XOI weights");
        std::printf("timing: %s\n", stat == timing_stat::min
                                        ? "the fastest execution of each op (--stat=min)"
                                        : "the median execution of each op");
        if (args->offset)
            std::printf("convgrad's tensors start %d bytes past a 64-byte boundary (--offset); oneDNN's are aligned\n",
                        args->offset);
        if (vs_f32) std::printf("'x f32': convgrad's own f32 time on the same layer, op and threads / this time\n");
        if (fpmath)
            std::printf("fpmath_mode: %s for the f32 ops; 'err' = max |result - strict f32| / max |strict f32| on "
                        "uniform [-1, 1) data (checked batch)\n", args->fpmath.c_str());
        if (without)
            std::printf("'ms w/o', 'x best w/o': the same op compiled with CONVGRAD_DISABLE=%s CONVGRAD_PREFER=%s\n",
                        args->without.c_str(), args->prefer.c_str());
        std::printf("%-26s %-28s %-4s %3s %8s %9s %9s %6s  %-22s %-9s %9s %9s %8s %8s%s\n", "problem", "op", "type",
                    "thr", "GFLOP", "ms", "GFLOP/s", "%peak", "kernel", "check", "dnnl_pl", "dnnl_blk", "x plain",
                    "x blocked", without ? "    ms w/o x best w/o" : "");
        std::map<std::string, ratio_group> groups;
        std::map<std::string, check_outcome> checks;
        // f32 time per (problem, op, threads), for the 'x f32' column of the bf16/f16 rows.
        std::map<std::string, double> f32_ms;
        std::map<std::string, std::pair<double, int>> f32_groups;  // sum of logs of 'x f32', count

        nlohmann::ordered_json records = nlohmann::ordered_json::array();
        size_t done = 0;
        bool all_pass = true;
        for (const auto &p : problems)
            for (op_kind kind : p.kinds)
                for (data_type dt : dts)
                    for (int thr : threads) {
                        ++done;
                        if (tty)
                            std::fprintf(stderr, "\r\033[K[%zu/%zu] %s %s %s %d threads...", done, total,
                                         p.name.c_str(), to_string(kind), to_string(dt), thr);
                        set_threads(thr);
                        const json::document doc = single(make_op(kind, p.desc, dt, ncx), args->fpmath);
                        graph_runner best(doc, impl_choice::best);
                        const double flops = best.flops();
                        // Checked once per (problem, op, type): the reference is slow.
                        const std::string check_key = p.name + "/" + p.desc.str() + "/" + to_string(kind) + "/" + to_string(dt);
                        if (!checks.count(check_key))
                            checks[check_key] = check_problem(kind, p.desc, dt, ncx, flops, args->check_gflop, args->fpmath,
                                                               size_t(args->offset));
                        const check_outcome chk = checks.at(check_key);
                        all_pass = all_pass && chk.pass;
                        double ms;
                        {
                            tensor_map m = best.allocate(size_t(args->offset));
                            best.fill_inputs(m, 1);
                            ms = time_ms([&] { best.execute(m); }, stat, 3, args->budget_ms);
                        }
                        const std::string kernel = best.steps()[0].cp.kernel_name();
                        double ms_wo = NAN;
                        if (without) {  // dispatch reads both variables at compile time
                            const scoped_env disable("CONVGRAD_DISABLE", args->without);
                            const scoped_env prefer("CONVGRAD_PREFER", args->prefer);
                            graph_runner wo(doc, impl_choice::best);
                            tensor_map m = wo.allocate(size_t(args->offset));
                            wo.fill_inputs(m, 1);
                            ms_wo = time_ms([&] { wo.execute(m); }, stat, 3, args->budget_ms);
                        }
                        baseline_time dnnl;
                        if (with_onednn) {
                            const int reps = int(std::clamp(args->budget_ms / std::max(ms, 1e-3), 3.0, 50.0));
                            dnnl = time_onednn_for(doc.ops[0], thr, reps, stat == timing_stat::min);
                        }
                        const double gflops = flops / (ms * 1e6);
                        const double x_plain = dnnl.plain_ms / ms, x_blocked = dnnl.blocked_ms / ms;
                        // oneDNN's best: the faster of its two timings that exist.
                        const double dnnl_best = std::isnan(dnnl.plain_ms)     ? dnnl.blocked_ms
                                                 : std::isnan(dnnl.blocked_ms) ? dnnl.plain_ms
                                                                               : std::min(dnnl.plain_ms, dnnl.blocked_ms);
                        for (const std::string &key : summary_keys(kind, dt, thr)) {
                            ratio_group &grp = groups[key];
                            grp.add(x_plain, x_blocked, dnnl_best / ms);
                            if (without) grp.add_without(dnnl_best / ms_wo);
                        }
                        if (tty) std::fprintf(stderr, "\r\033[K");
                        std::printf("%-26s %-28s %-4s %3d %8.3f %9.3f %9.2f %5.1f%%  %-22s %-9s %9s %9s %8s %8s",
                                    p.name.c_str(), to_string(kind), to_string(dt), thr, flops * 1e-9, ms, gflops,
                                    100.0 * gflops / peak[thr], kernel.c_str(), chk.text.c_str(),
                                    fmt_ms(dnnl.plain_ms).c_str(), fmt_ms(dnnl.blocked_ms).c_str(),
                                    fmt_ratio(x_plain).c_str(), fmt_ratio(x_blocked).c_str());
                        if (without)
                            std::printf(" %9s %10s", fmt_ms(ms_wo).c_str(), fmt_ratio(dnnl_best / ms_wo).c_str());
                        if (fpmath && !std::isnan(chk.rel_err)) std::printf("  err=%.2e", chk.rel_err);
                        const std::string same_layer = p.name + "/" + p.desc.str() + "/" + to_string(kind) + "/" +
                                                       std::to_string(thr);
                        double x_f32 = NAN;
                        if (vs_f32 && dt == data_type::f32) f32_ms[same_layer] = ms;
                        else if (vs_f32 && f32_ms.count(same_layer)) x_f32 = f32_ms[same_layer] / ms;
                        if (!std::isnan(x_f32)) {
                            std::printf("  x f32 %s", fmt_ratio(x_f32).c_str());
                            for (const std::string &key : summary_keys(kind, dt, thr)) {
                                f32_groups[key].first += std::log(x_f32);
                                f32_groups[key].second += 1;
                            }
                        }
                        std::printf("\n");
                        std::fflush(stdout);
                        nlohmann::ordered_json r;
                        r["name"] = p.name;
                        r["desc"] = p.desc.str();
                        r["op"] = to_string(kind);
                        r["dt"] = to_string(dt);
                        r["threads"] = thr;
                        r["gflop"] = flops * 1e-9;
                        r["ms"] = ms;
                        r["gflops"] = flops / (ms * 1e6);
                        r["kernel"] = kernel;
                        r["tag"] = args->tag;
                        r["stat"] = args->stat;
                        if (without) r["ms_without"] = std::isnan(ms_wo) ? nlohmann::ordered_json() : nlohmann::ordered_json(ms_wo);
                        r["check"] = chk.pass ? "pass" : "fail";
                        r["check_detail"] = chk.text;
                        r["fpmath_mode"] = args->fpmath;
                        if (!std::isnan(chk.rel_err)) r["fpmath_rel_err"] = chk.rel_err;
                        r["peak_gflops"] = std::isnan(peak[thr]) ? nlohmann::ordered_json() : nlohmann::ordered_json(peak[thr]);
                        r["onednn_plain_ms"] = std::isnan(dnnl.plain_ms) ? nlohmann::ordered_json()
                                                                         : nlohmann::ordered_json(dnnl.plain_ms);
                        r["onednn_blocked_ms"] = std::isnan(dnnl.blocked_ms) ? nlohmann::ordered_json()
                                                                             : nlohmann::ordered_json(dnnl.blocked_ms);
                        r["onednn_note"] = dnnl.note;
                        if (!std::isnan(x_f32)) r["x_own_f32"] = x_f32;
                        records.push_back(std::move(r));
                    }
        if (with_onednn) {
            std::printf("\ngeometric mean of the speed ratio over oneDNN (oneDNN time / convgrad time):\n");
            std::printf("  %-40s %9s %9s %9s %s%s\n", "op type threads", "x plain", "x blocked", "x best",
                        "< 0.8x / < 0.5x of oneDNN's best", without ? "    (w/o: x best, < 0.8x / < 0.5x)" : "");
            auto gm = [](double lg, int n) { return n ? std::exp(lg / n) : NAN; };
            for (const auto &[key, g] : groups) {
                std::printf("  %-40s %9s %9s %9s %4d / %-4d of %-4d", key.c_str(), fmt_ratio(gm(g.log_plain, g.n_plain)).c_str(),
                            fmt_ratio(gm(g.log_blocked, g.n_blocked)).c_str(), fmt_ratio(gm(g.log_best, g.n_best)).c_str(),
                            g.below_08, g.below_05, g.n);
                if (without)
                    std::printf("    w/o: %s, %d / %d", fmt_ratio(gm(g.log_best_wo, g.n_best_wo)).c_str(), g.below_08_wo,
                                g.below_05_wo);
                std::printf("\n");
            }
        }
        if (!f32_groups.empty()) {
            std::printf("\ngeometric mean of 'x f32' (convgrad f32 time / convgrad time in this type):\n");
            for (const auto &[key, g] : f32_groups)
                std::printf("  %-40s %9s  of %d\n", key.c_str(), fmt_ratio(std::exp(g.first / g.second)).c_str(),
                            g.second);
        }
        std::printf("\nproblems (benchdnn descriptors; ConvTranspose family in deconv terms):\n");
        for (const auto &p : problems)
            std::printf("  %-26s %s%s%s\n", p.name.c_str(), p.desc.str().c_str(), p.note.empty() ? "" : "  ",
                        p.note.c_str());
        std::printf("checks: against the reference kernel on seeded small integers (exact); '@mbN': checked "
                    "on the same problem with batch N (the reference is slow), also for the optimized kernel\n");
        if (!args->json_file.empty()) {
            std::ofstream f(args->json_file);
            if (!f) throw error(status::invalid_arguments, args->json_file + ": cannot open for writing");
            f << records.dump(2) << "\n";
            std::printf("wrote %zu records to %s\n", records.size(), args->json_file.c_str());
        }
        exit_code = all_pass ? 0 : 1;
    });
}

}  // namespace convgrad::tool
