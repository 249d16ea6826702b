// Microkernel calls in a pipeline: each call's C is finished (rounded to the output type and
// stored) during the next call's tile steps, as its side work (amx_ukernel.hpp, side_work),
// from the other of two C buffers. A schedule runs its calls through one c_pipeline per thread
// and flushes it when the thread's work is done.
#pragma once

#include <algorithm>
#include <cstdint>

#include "kernels/amx/amx_ukernel.hpp"

namespace convgrad::detail::amx {

class c_pipeline {
  public:
    c_pipeline(amx_backend backend, amx_dot dot) : backend_(backend), dot_(dot) {}
    c_pipeline(const c_pipeline &) = delete;
    c_pipeline &operator=(const c_pipeline &) = delete;

    /// Runs the call `a` (its C, ldc and side work are set here) with the previous call's rows
    /// as side work. `to` says where this call's rows go (all but its C, ldc and rows, which
    /// are the call's); they are finished during the next call, or by flush().
    void run(ukernel_args &a, const c_rows &to) {
        side_work w;
        if (pending_) w.finish = rows_[cur_ ^ 1];
        a.C = c_[cur_];
        a.ldc = ukernel_max_n;
        a.accumulate = false;
        a.side = &w;
        ukernel_trusted(backend_, dot_, a);
        a.side = nullptr;
        push(a.M, a.m0, to);
    }

    /// A block that no product reaches, shaped as the call `a` would be: rows of zeros (plus
    /// the bias), stored now.
    void zeros(const ukernel_args &a, const c_rows &to) {
        static constexpr float zero_row[ukernel_max_n] = {};
        c_rows r = to;
        r.C = zero_row;
        r.ldc = 0;
        r.rows = a.M;
        r.rows0 = a.m0 > 0 && a.m0 < a.M ? a.m0 : 0;
        finish_rows(backend_, r);
    }

    /// Finishes the last call's rows.
    void flush() {
        if (!pending_) return;
        finish_rows(backend_, rows_[cur_ ^ 1]);
        pending_ = false;
    }

  private:
    void push(int rows, int m0, const c_rows &to) {
        c_rows &r = rows_[cur_];
        r = to;
        r.C = c_[cur_];
        r.ldc = ukernel_max_n;
        r.rows = rows;
        r.rows0 = m0 > 0 && m0 < rows ? m0 : 0;  // two segments, base1 the schedule's
        pending_ = true;
        cur_ ^= 1;
    }

    amx_backend backend_;
    amx_dot dot_;
    alignas(64) float c_[2][ukernel_max_m * ukernel_max_n];
    c_rows rows_[2];
    int cur_ = 0;  // the buffer the next call writes; cur_ ^ 1 holds the pending call's C
    bool pending_ = false;
};

}  // namespace convgrad::detail::amx
