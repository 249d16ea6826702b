// Checking kernels of the inventory against the reference: wiring a problem's tensors into an
// op, running one kernel on a poisoned output, replaying a seeded sweep of problems whose
// reference results were computed once, and deciding how a row runs here (natively, emulated,
// or skipped with the reason), which tests/main.cpp summarizes after the run.
#pragma once

#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "core/resolve.hpp"
#include "dispatch/registry.hpp"
#include "threading/scratch_cache.hpp"
#include "util/tensor_buffer.hpp"

namespace convgrad::testing {

/// The tensors of one canonical convolution, for any of the six ops.
struct conv_shapes {
    dims src, dst, wei;   // big side, small side, weights in the op's weights format
    dims output_padding;  // ConvTranspose only
    dim_t src_channels = 0,
          dst_channels = 0;  // of the bias: dst's for Convolution, src's for ConvTranspose
};

/// Adds the op's inputs and output (ids 0, 1, [2 = bias], 3) for its kind, each tensor from
/// `make(id, shape)` (called in input order, then the output: a random maker draws in that order).
template <class MakeTensor>
void add_conv_tensors(op &o, op_kind kind, const conv_shapes &sh, bool bias, data_type dt,
                      MakeTensor &&make) {
    switch (kind) {
        case op_kind::Convolution:
            o.add_input(make(0, sh.src)).add_input(make(1, sh.wei));
            if (bias) o.add_input(logical_tensor(2, dt, {sh.dst_channels}));
            o.add_output(make(3, sh.dst));
            break;
        case op_kind::ConvolutionBackwardData:
            o.add_input(make(0, sh.dst)).add_input(make(1, sh.wei)).add_output(make(3, sh.src));
            break;
        case op_kind::ConvolutionBackwardWeights:
            o.add_input(make(0, sh.src)).add_input(make(1, sh.dst)).add_output(make(3, sh.wei));
            break;
        case op_kind::ConvTranspose:
            o.set_attr("output_padding", sh.output_padding);
            o.add_input(make(0, sh.dst)).add_input(make(1, sh.wei));
            if (bias) o.add_input(logical_tensor(2, dt, {sh.src_channels}));
            o.add_output(make(3, sh.src));
            break;
        case op_kind::ConvTransposeBackwardData:
            o.add_input(make(0, sh.src)).add_input(make(1, sh.wei)).add_output(make(3, sh.dst));
            break;
        case op_kind::ConvTransposeBackwardWeights:
            o.add_input(make(0, sh.dst)).add_input(make(1, sh.src)).add_output(make(3, sh.wei));
            break;
    }
}

using create_fn = std::unique_ptr<detail::kernel> (*)(const detail::conv_problem &);

/// A kernel's arguments: the op's inputs from `in` (by their ports in r), the output at `out`.
inline detail::conv_args conv_args_of(const detail::resolved_op &r, std::vector<tensor_buffer> &in,
                                      void *out) {
    detail::conv_args a;
    auto ptr = [&](int i) -> const void * { return i >= 0 ? in[size_t(i)].data() : nullptr; };
    a.src = ptr(r.src_input);
    a.dst = ptr(r.dst_input);
    a.wei = ptr(r.wei_input);
    a.bias = ptr(r.bias_input);
    a.out = out;
    return a;
}

/// Runs the kernel `create` builds on the op's inputs; the output is poisoned first, so every
/// value the kernel fails to write shows.
inline void run_poisoned(const detail::resolved_op &r, create_fn create,
                         std::vector<tensor_buffer> &in, tensor_buffer &out) {
    std::fill(out.bytes.begin(), out.bytes.end(), uint8_t(0x7f));
    create(r.prob)->execute(conv_args_of(r, in, out.data()));
}

/// Buffers for the op's inputs, each filled with small integers from its own seed (sums of
/// products stay exact in f32 for test-sized problems, so kernels must match exactly).
inline std::vector<tensor_buffer> int_inputs(const detail::resolved_op &r,
                                             const std::vector<uint64_t> &seeds) {
    std::vector<tensor_buffer> in;
    for (size_t i = 0; i < r.inputs.size(); ++i) {
        in.emplace_back(r.inputs[i]);
        in.back().fill_ints(seeds[i], -3, 3);
    }
    return in;
}

inline uint64_t hash_values(const std::vector<double> &v) {
    uint64_t h = 1469598103934665603ull;  // FNV-1a over the bytes
    for (double d : v) {
        const auto *b = reinterpret_cast<const uint8_t *>(&d);
        for (size_t i = 0; i < sizeof d; ++i) h = (h ^ b[i]) * 1099511628211ull;
    }
    return h;
}

/// One problem of a sweep, with what replaying it needs: its inputs' seeds and the hash of the
/// reference output (outputs of the bigger problems are too large to keep for every row). The
/// reference runs when a row first needs it, once per process.
struct swept_case {
    detail::resolved_op r;
    std::string text;
    std::vector<uint64_t> input_seeds;
    int nthr = 1;  // OpenMP threads the kernels run with

    uint64_t want_hash() const {
        if (!want_hash_) {
            std::vector<tensor_buffer> in = int_inputs(r, input_seeds);
            tensor_buffer ref(r.outputs[0]);
            run_poisoned(r, detail::reference_impl().create, in, ref);
            want_hash_ = hash_values(ref.values());
        }
        return *want_hash_;
    }

  private:
    mutable std::optional<uint64_t> want_hash_;
};

/// `count` cases from `make(rng)` (returning {op, text}), each resolved and given seeded inputs.
/// `threads(iter)` gives the kernels' thread count.
template <class MakeCase, class Threads>
std::vector<swept_case> reference_sweep(uint64_t seed, int count, MakeCase &&make,
                                        Threads &&threads) {
    std::mt19937_64 rng(seed);
    std::vector<swept_case> cases;
    for (int iter = 0; iter < count; ++iter) {
        auto [o, text] = make(rng);
        swept_case c;
        c.text = text;
        try {
            c.r = detail::resolve_op(o, o.inputs(), o.outputs());
        } catch (const error &e) {
            ADD_FAILURE() << "generator made an invalid case: " << e.what();
            continue;
        }
        for (size_t i = 0; i < c.r.inputs.size(); ++i) c.input_seeds.push_back(rng());
        c.nthr = threads(iter);
        cases.push_back(std::move(c));
    }
    return cases;
}

/// Scratch handed out while it lives is poisoned (detail::scratch_poison).
struct poisoned_scratch {
    const bool was = detail::scratch_poison(true);
    ~poisoned_scratch() { detail::scratch_poison(was); }
};

/// How a row of the inventory runs on this machine under CONVGRAD_MAX_ISA.
struct row_mode {
    create_fn create = nullptr;  // null: skipped
    bool emulated = false;
    std::string skip_reason;
    /// Set when `create` is the native build and the row has an emulation: the problems the
    /// native build cannot run here (row.cannot_natively) run on it instead.
    create_fn create_emulated = nullptr;
};

/// What check_row ran: cases compared, and how many of them on the emulation because the
/// native build could not run them here (with the first such reason).
struct row_runs {
    int runs = 0;
    int emulated = 0;
    std::string emulated_because;
};

/// Runs the row on every case it can compute (its `cannot` is empty: the cost estimate is
/// not asked) and expects the reference's values exactly: natively where `m` says so, except the
/// cases the native build cannot run on this machine, which go to the emulation.
inline row_runs check_row_cases(const detail::impl_desc &row, const row_mode &m,
                                const std::vector<swept_case> &cases) {
    row_runs done;
    const int saved_threads = omp_get_max_threads();
    for (const swept_case &c : cases) {
        if (!row.serves(c.r.prob).empty() || !row.cannot(c.r.prob).empty()) continue;
        create_fn create = m.create;
        if (m.create_emulated && row.cannot_natively) {
            const std::string why = row.cannot_natively(c.r.prob);
            if (!why.empty()) {
                create = m.create_emulated;
                if (done.emulated++ == 0) done.emulated_because = why;
            }
        }
        std::vector<tensor_buffer> in = int_inputs(c.r, c.input_seeds);
        tensor_buffer got(c.r.outputs[0]);
        omp_set_num_threads(c.nthr);
        // Scratch poisoned too: a kernel that reads scratch it did not write (a weights panel
        // it skipped packing, a tail it did not zero) gets NaN, not a lucky earlier value.
        bool threw = false;
        try {
            const poisoned_scratch guard;
            run_poisoned(c.r, create, in, got);
        } catch (const std::exception &e) {  // (a row that accepts a problem must compute it)
            ADD_FAILURE() << row.name << " on " << c.text << " " << c.r.prob.desc() << " threads "
                          << c.nthr << ": " << e.what();
            threw = true;
        }
        omp_set_num_threads(saved_threads);
        if (threw) continue;
        ++done.runs;
        const std::vector<double> have = got.values();
        if (hash_values(have) == c.want_hash()) continue;
        tensor_buffer ref(c.r.outputs[0]);  // recomputed only to say how many values differ
        run_poisoned(c.r, detail::reference_impl().create, in, ref);
        const std::vector<double> want = ref.values();
        size_t bad = 0;
        for (size_t i = 0; i < want.size(); ++i) bad += have[i] != want[i];
        ADD_FAILURE() << row.name << (create == m.create && !m.emulated ? "" : " (emulated)")
                      << " on " << c.text << " " << c.r.prob.desc() << " threads " << c.nthr << ": "
                      << bad << " of " << want.size() << " values differ";
    }
    return done;
}

/// check_row_cases' number of cases compared.
inline int check_row(const detail::impl_desc &row, const row_mode &m,
                     const std::vector<swept_case> &cases) {
    return check_row_cases(row, m, cases).runs;
}

/// Per row name: "native", "emulated" or "skipped: reason", for the summary tests/main.cpp prints.
inline std::map<std::string, std::string> &row_modes_seen() {
    static std::map<std::string, std::string> seen;
    return seen;
}

inline row_mode how_to_run(const detail::impl_desc &row) {
    row_mode m;
    const detail::cpu_features have = detail::effective_features();
    if (have.contains(row.needs())) {
        m.create = row.create;
        if (row.create_emulated && detail::isa_available(row.emulation_isa))
            m.create_emulated = row.create_emulated;
    } else if (row.create_emulated && detail::isa_available(row.emulation_isa)) {
        m.create = row.create_emulated;
        m.emulated = true;
    } else {
        m.skip_reason = std::string("this CPU (or CONVGRAD_MAX_ISA) lacks ") +
                        detail::cpu_features::from_missing(row.needs(), have).to_string() +
                        " for " + detail::to_string(row.isa) +
                        (row.create_emulated ? "" : ", and the row has no emulation");
    }
    // The mode is the same on every call of a run; a sweep may have refined it since ("native,
    // emulated where ..."), which is kept.
    row_modes_seen().try_emplace(
        row.name, m.create ? (m.emulated ? "emulated" : "native") : "skipped: " + m.skip_reason);
    return m;
}

/// The inventory's rows, as test parameters.
inline std::vector<const detail::impl_desc *> inventory_rows() {
    std::vector<const detail::impl_desc *> v;
    for (const auto &row : detail::kernel_inventory()) v.push_back(&row);
    return v;
}

/// "direct_brgemm_avx512" for "direct_brgemm:avx512" (test names take only [A-Za-z0-9_]).
inline std::string row_test_name(const ::testing::TestParamInfo<const detail::impl_desc *> &info) {
    std::string s = info.param->name;
    for (char &ch : s)
        if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
    return s;
}

/// The parameterized suite every inventory row runs (instantiated in test_kernels_vs_ref.cpp
/// as Inventory/KernelRow.<test>/<row>).
class KernelRow : public ::testing::TestWithParam<const detail::impl_desc *> {};

}  // namespace convgrad::testing
