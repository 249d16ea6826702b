#include "case_run.hpp"

#include <algorithm>
#include <cstdio>
#include <ostream>

#include "convgrad/npy.hpp"
#include "core/checked.hpp"
#include "desc.hpp"
#include "runner.hpp"

namespace convgrad::tool {

std::pair<size_t, std::string> parse_id_file(const std::string &s, const std::string &option) {
    const size_t eq = s.find('=');
    const std::string id = eq == std::string::npos ? "" : s.substr(0, eq);
    if (id.empty() || eq + 1 >= s.size() ||
        !std::all_of(id.begin(), id.end(), [](char c) { return c >= '0' && c <= '9'; }))
        throw error(status::invalid_arguments, option + " '" + s + "': expected TENSOR_ID=FILE.npy");
    dim_t v = 0;
    if (!detail::parse_int64(id, v))
        throw error(status::invalid_arguments, option + " '" + s + "': tensor id " + id + " is too large");
    return {size_t(v), s.substr(eq + 1)};
}

namespace {

std::string fmt(const char *f, double v) {
    char b[64];
    std::snprintf(b, sizeof b, f, v);
    return b;
}

}  // namespace

case_result run_case(const json::document &doc_in, const case_options &o, std::ostream &out, bool detail) {
    json::document doc = doc_in;
    for (const auto &note : apply_rewrite(doc, o.rewrite))
        if (detail) out << "note: " << note << "\n";

    graph_runner runner(doc, o.impl);
    tensor_map mem = runner.allocate();

    std::vector<size_t> given;
    for (const auto &[id, file] : o.input_files) {
        if (std::find(runner.inputs().begin(), runner.inputs().end(), id) == runner.inputs().end()) {
            std::string list;
            for (size_t i : runner.inputs()) list += (list.empty() ? "" : ", ") + std::to_string(i);
            throw error(status::invalid_arguments, "--input " + std::to_string(id) + "=" + file +
                                                       ": tensor " + std::to_string(id) +
                                                       " is not an input of the graph (inputs: " + list + ")");
        }
        npy::load_file(file, mem.at(id).as_tensor());
        given.push_back(id);
    }
    for (const auto &[id, file] : o.output_files) (void)runner.lt(id);  // fail early on unknown ids
    runner.fill_inputs(mem, o.seed, given);

    case_result r;
    for (const auto &s : runner.steps()) r.kernels += (r.kernels.empty() ? "" : ",") + s.cp.kernel_name();
    if (detail) {
        for (const auto &s : runner.steps()) {
            out << s.source->describe() << ": " << s.cp.problem_desc() << " kernel=" << s.cp.kernel_name();
            const auto &pb = s.cp.pads_begin(), &pe = s.cp.pads_end();
            out << " pads=";
            for (size_t i = 0; i < pb.size(); ++i) out << (i ? "x" : "") << pb[i];
            out << "/";
            for (size_t i = 0; i < pe.size(); ++i) out << (i ? "x" : "") << pe[i];
            out << "\n";
            for (const auto &l : s.cp.inputs()) out << "  in  " << l.to_string() << "\n";
            for (const auto &l : s.cp.outputs()) out << "  out " << l.to_string() << "\n";
        }
    }

    runner.execute(mem);

    for (const auto &[id, file] : o.output_files) {
        npy::save_file(file, mem.at(id).as_tensor());
        if (detail) out << "wrote tensor " << id << " to " << file << "\n";
    }

    if (!o.dump_json.empty()) {
        json::document d = doc;
        for (auto &op_ : d.ops) {
            std::vector<logical_tensor> ins, outs;
            for (const auto &l : op_.inputs()) ins.push_back(runner.lt(l.id()));
            for (const auto &l : op_.outputs()) outs.push_back(runner.lt(l.id()));
            op_.set_inputs(ins);
            op_.set_outputs(outs);
        }
        json::write_file(d, o.dump_json);
        if (detail) out << "wrote the graph to " << o.dump_json << "\n";
    }

    if (o.check) {
        graph_runner ref(doc, impl_choice::reference);
        const bool same_kernels = [&] {
            for (size_t i = 0; i < runner.steps().size(); ++i)
                if (runner.steps()[i].cp.kernel_name() != ref.steps()[i].cp.kernel_name()) return false;
            return true;
        }();
        if (same_kernels) {
            r.check_summary = "PASS (the reference kernel ran; nothing to compare)";
            if (detail) out << "check: " << r.check_summary << "\n";
        } else {
            tensor_map ref_mem = ref.allocate_sharing_inputs(mem);
            ref.execute(ref_mem);
            // Exact data (seeded small integers, one op): results must match exactly.
            const bool exact = given.empty() && runner.steps().size() == 1;
            check_result worst;
            bool first = true;
            for (const auto &s : runner.steps()) {
                const double terms = terms_per_output(s.source->kind(), s.cp.problem_desc());
                for (const auto &l : s.cp.outputs()) {
                    const check_result c = compare(mem.at(l.id()), ref_mem.at(l.id()), terms, exact);
                    if (detail) {
                        out << "check tensor " << l.id() << " (" << to_string(l.dtype()) << ", "
                            << (exact ? "exact" : "tolerance") << "): " << c.summary();
                        if (!c.pass && c.worst_index >= 0)
                            out << " first/worst at element " << c.worst_index << ": got " << c.worst_got
                                << ", expected " << c.worst_exp;
                        out << "\n";
                    }
                    // Report the first failure, else the largest error.
                    if (first || (worst.pass && (!c.pass || c.max_abs > worst.max_abs))) worst = c;
                    first = false;
                    r.pass = r.pass && c.pass;
                }
            }
            r.check_summary = worst.summary();
            if (!r.pass) r.check_summary = "FAIL " + r.check_summary;
        }
    }

    if (o.perf) {
        r.ms = time_median_ms([&] { runner.execute(mem); });
        r.gflops = runner.flops() / (r.ms * 1e6);
        if (detail)
            out << "perf: " << fmt("%.4g", r.ms) << " ms per execution (median), "
                << fmt("%.4g", runner.flops() * 1e-9) << " GFLOP, " << fmt("%.4g", r.gflops) << " GFLOP/s, "
                << current_threads() << " threads\n";
    }
    return r;
}

}  // namespace convgrad::tool
