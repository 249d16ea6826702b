// Runs a JSON graph op after op through intermediate tensors: compile every op in dependency
// order, allocate every tensor, fill the inputs, execute, check against the reference.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "convgrad/json.hpp"
#include "check.hpp"
#include "host_tensor.hpp"

namespace convgrad::tool {

using tensor_map = std::map<size_t, host_tensor>;

class graph_runner {
public:
    /// Builds the graph (throws what graph::add_op and partition::compile throw, with the op).
    graph_runner(const json::document &doc, impl_choice choice);

    struct step {
        const op *source;  // in the document
        compiled_partition cp;
    };
    const std::vector<step> &steps() const { return steps_; }
    /// Graph inputs (consumed, never produced), in first-use order.
    const std::vector<size_t> &inputs() const { return inputs_; }
    /// Compiled logical tensor of any tensor id of the graph.
    const logical_tensor &lt(size_t id) const;
    /// The op consuming a graph input first, and at which input index.
    std::pair<const step *, size_t> consumer(size_t id) const;
    double flops() const;

    /// Memory for every tensor id (inputs zeroed; s32 shape inputs hold the compiled shapes),
    /// each starting `offset_bytes` past a 64-byte boundary.
    tensor_map allocate(size_t offset_bytes = 0) const;
    /// Same input tensors (shared memory), fresh outputs: for a second run to compare with.
    tensor_map allocate_sharing_inputs(const tensor_map &other, size_t offset_bytes = 0) const;
    /// Fills every float input not in `skip` with seeded small integers; returns whether all
    /// the data is exact (integers sized so that sums are exact).
    void fill_inputs(tensor_map &m, uint64_t seed, const std::vector<size_t> &skip = {}) const;
    /// Executes every op in order.
    void execute(tensor_map &m) const;

private:
    std::vector<step> steps_;
    std::vector<size_t> inputs_;
    std::map<size_t, logical_tensor> lts_;
};

/// Which statistic of a timed op's executions is reported. The median is the default. The
/// fastest execution is steadier on a shared host, where other work only ever adds time: it is
/// what an A/B comparison of two builds or options wants (`convgrad bench --stat=min`).
enum class timing_stat { median, min };

/// The statistic `s` of the execution times `t` (milliseconds; at least one).
double summarize_ms(std::vector<double> t, timing_stat s);

/// Milliseconds per execution, statistic `s`: one warm-up, then at least `min_reps` runs and
/// more while under `budget_ms` (at most `max_reps`).
double time_ms(const std::function<void()> &run, timing_stat s, int min_reps = 3,
               double budget_ms = 1000, int max_reps = 100);

/// time_ms with the median.
inline double time_median_ms(const std::function<void()> &run, int min_reps = 3,
                             double budget_ms = 1000, int max_reps = 100) {
    return time_ms(run, timing_stat::median, min_reps, budget_ms, max_reps);
}

/// Sets the OpenMP thread count from --threads when given (1..max_thread_count, else an error
/// naming the option); when not given, checks that OMP_NUM_THREADS is within the limit.
void set_threads(std::optional<int> n);
int current_threads();

}  // namespace convgrad::tool
