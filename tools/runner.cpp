#include "runner.hpp"

#include <algorithm>
#include <chrono>
#include <set>

#include <omp.h>

#include "desc.hpp"
#include "fill.hpp"

namespace convgrad::tool {

graph_runner::graph_runner(const json::document &doc, impl_choice choice) {
    inputs_ = doc.graph_inputs();
    std::set<size_t> available(inputs_.begin(), inputs_.end());
    graph g = doc.to_graph();
    const auto parts = g.get_partitions();
    std::vector<bool> done(doc.ops.size(), false);
    // Dependency order: an op runs once all its inputs exist.
    for (size_t round = 0; round < doc.ops.size(); ++round) {
        bool progressed = false;
        for (size_t i = 0; i < doc.ops.size(); ++i) {
            if (done[i]) continue;
            const op &o = doc.ops[i];
            if (!std::all_of(o.inputs().begin(), o.inputs().end(),
                             [&](const logical_tensor &l) { return available.count(l.id()) > 0; }))
                continue;
            std::vector<logical_tensor> ins;
            for (const auto &l : o.inputs()) ins.push_back(lts_.count(l.id()) ? lts_.at(l.id()) : l);
            compiled_partition cp = parts[i].compile(ins, o.outputs(), choice);
            for (const auto &l : cp.inputs()) lts_.emplace(l.id(), l);
            for (const auto &l : cp.outputs()) {
                lts_[l.id()] = l;
                available.insert(l.id());
            }
            steps_.push_back({&o, std::move(cp)});
            done[i] = true;
            progressed = true;
        }
        if (!progressed) break;
    }
    for (size_t i = 0; i < doc.ops.size(); ++i)
        if (!done[i])
            throw error(status::invalid_graph_op,
                        doc.ops[i].describe() + ": its inputs are never computed (cycle or missing producer)");
}

const logical_tensor &graph_runner::lt(size_t id) const {
    auto it = lts_.find(id);
    if (it == lts_.end()) throw error(status::invalid_arguments, "the graph has no tensor with id " + std::to_string(id));
    return it->second;
}

std::pair<const graph_runner::step *, size_t> graph_runner::consumer(size_t id) const {
    for (const auto &s : steps_)
        for (size_t i = 0; i < s.source->inputs().size(); ++i)
            if (s.source->inputs()[i].id() == id) return {&s, i};
    return {nullptr, 0};
}

double graph_runner::flops() const {
    double f = 0;
    for (const auto &s : steps_) f += s.cp.flops();
    return f;
}

tensor_map graph_runner::allocate(size_t offset_bytes) const {
    tensor_map m;
    for (const auto &[id, l] : lts_) m.emplace(id, host_tensor(l, offset_bytes));
    // s32 shape inputs hold the shape each op was compiled for.
    for (size_t id : inputs_) {
        host_tensor &t = m.at(id);
        if (t.lt().dtype() != data_type::s32) continue;
        const auto [s, idx] = consumer(id);
        const dims &shape = s->cp.outputs()[0].shape();
        for (dim_t i = 0; i < t.count() && i < dim_t(shape.size()); ++i) t.set(i, double(shape[size_t(i)]));
    }
    return m;
}

tensor_map graph_runner::allocate_sharing_inputs(const tensor_map &other, size_t offset_bytes) const {
    tensor_map m;
    for (const auto &[id, l] : lts_) {
        if (std::find(inputs_.begin(), inputs_.end(), id) != inputs_.end() && other.count(id))
            m.emplace(id, other.at(id));
        else m.emplace(id, host_tensor(l, offset_bytes));
    }
    return m;
}

void graph_runner::fill_inputs(tensor_map &m, uint64_t seed, const std::vector<size_t> &skip) const {
    for (size_t id : inputs_) {
        if (std::find(skip.begin(), skip.end(), id) != skip.end()) continue;
        host_tensor &t = m.at(id);
        const data_type dt = t.lt().dtype();
        if (dt == data_type::s32) continue;
        // Size the values for the op that consumes them.
        const auto [s, idx] = consumer(id);
        const double terms = terms_per_output(s->source->kind(), s->cp.problem_desc());
        fill_ints(t, seed + 1000003ull * id, fill_for(dt, terms));
    }
}

void graph_runner::execute(tensor_map &m) const {
    for (const auto &s : steps_) {
        std::vector<tensor> ins, outs;
        for (const auto &l : s.cp.inputs()) ins.push_back(m.at(l.id()).as_tensor());
        for (const auto &l : s.cp.outputs()) outs.push_back(m.at(l.id()).as_tensor());
        s.cp.execute(ins, outs);
    }
}

double summarize_ms(std::vector<double> t, timing_stat s) {
    std::sort(t.begin(), t.end());
    if (s == timing_stat::min) return t[0];
    const size_t n = t.size();
    return n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
}

double time_ms(const std::function<void()> &run, timing_stat s, int min_reps, double budget_ms,
               int max_reps) {
    using clock = std::chrono::steady_clock;
    run();  // warm-up
    std::vector<double> t;
    const auto start = clock::now();
    while (int(t.size()) < max_reps) {
        const auto t0 = clock::now();
        run();
        const auto t1 = clock::now();
        t.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
        const double spent = std::chrono::duration<double, std::milli>(t1 - start).count();
        if (int(t.size()) >= min_reps && spent >= budget_ms) break;
    }
    return summarize_ms(std::move(t), s);
}

void set_threads(std::optional<int> n) {
    const std::string range = "between 1 and " + std::to_string(max_thread_count);
    if (n) {
        if (*n < 1 || *n > max_thread_count)
            throw error(status::invalid_arguments,
                        "--threads: must be " + range + ", got " + std::to_string(*n));
        omp_set_num_threads(*n);
    } else if (omp_get_max_threads() > max_thread_count) {
        throw error(status::invalid_arguments, "OMP_NUM_THREADS: must be " + range + ", got " +
                                                   std::to_string(omp_get_max_threads()));
    }
}
int current_threads() { return omp_get_max_threads(); }

}  // namespace convgrad::tool
