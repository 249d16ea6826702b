// The parts the backward-weights paths share (amx_bwd_weights.cpp: the pixel, one-tap and rows
// paths; amx_bwd_weights_folded.cpp: w taps folded into the columns): pixel walks, the
// packers' staging, the split of work items, transposed pixel pairs, and the final sums.
#pragma once

#include <algorithm>
#include <cstdint>

#include "kernels/amx/amx_bwd_weights.hpp"
#include "kernels/amx/amx_pair_ops.hpp"
#include "kernels/amx/amx_rows.hpp"
#include "threading/parallel.hpp"
#include "threading/scratch_cache.hpp"

namespace convgrad::detail::amx::bww {

inline int64_t div_up(int64_t a, int64_t b) {
    return (a + b - 1) / b;
}

// Output pixel coordinates (image, od, oh, ow) of a chunk, stepped without divisions.
struct pixel_walk {
    const conv_problem &p;
    int64_t img, o[3];
    pixel_walk(const conv_problem &pr, int64_t q) : p(pr) {
        for (int x = 2; x >= 0; --x) {
            o[x] = q % p.o[x];
            q /= p.o[x];
        }
        img = q;
    }
    void next() {
        for (int x = 2; x >= 0; --x) {
            if (++o[x] < p.o[x]) return;
            o[x] = 0;
        }
        ++img;
    }
    /// The pixel's offset in diff_dst (channel 0 of group g).
    int64_t dst_offset(int64_t g) const {
        int64_t d = img * p.dst.n + g * p.ocg * p.dst.c;
        for (int x = 0; x < 3; ++x) d += o[x] * p.dst.sp[x];
        return d;
    }
    /// Its source pixel through tap (kd, kh, kw): whether it is inside the image, and then its
    /// offset in src (channel 0 of group g). (Outside, the offset is not computed: with
    /// padding and dilation near the dim_t range, the index times a stride may not fit.)
    bool src_offset(const int64_t tap[3], int64_t g, int64_t &off) const {
        off = img * p.src.n + g * p.icg * p.src.c;
        for (int x = 0; x < 3; ++x) {
            const int64_t i = o[x] * p.s[x] + tap[x] * p.dl[x] - p.pb[x];
            if (i < 0 || i >= p.i[x]) return false;
            off += i * p.src.sp[x];
        }
        return true;
    }
};

// The staging of every packer here: the channels of up to `slots` pixels in the tiles' type (a
// transposed block of pixel pairs), a pixel of zeros (outside the image, or the pad of an odd
// count) and the f32 room of their conversion; and the pair ops of the backend.
struct pixel_slots {
    static constexpr int slots = 2 * max_transposed_pairs;
    const conv_problem &p;
    amx_dot to;
    row_io io = row_io::here();
    const pair_ops &ops;
    int64_t n;  // channels per slot: the larger of icg and ocg
    scratch_buffer<uint16_t> bits;
    scratch_buffer<float> tmp;
    pixel_slots(const conv_problem &pr, amx_dot dot, amx_backend backend)
        : p(pr),
          to(dot),
          ops(pair_ops_for(backend)),
          n(std::max(pr.icg, pr.ocg)),
          bits(size_t((slots + 1) * n)),
          tmp(size_t(n)) {
        std::fill(bits.data() + slots * n, bits.data() + (slots + 1) * n, uint16_t(0));
    }
    const uint16_t *zeros() const { return bits.data() + slots * n; }
    /// c channels of tensor t at `off` (channel stride cs), read in place or converted into
    /// `slot`.
    const uint16_t *view(const void *t, int64_t off, int64_t cs, int64_t c, int slot) {
        return io.view_in(p.dt, t, off, cs, c, to, bits.data() + slot * n, tmp.data());
    }
};

// Work items of the two multi-tap paths: (slice, group, tap part). A slice is a partial sum of
// all the weights; when there are too few slices and groups for the threads (few pixels, many
// weights: HiFi-GAN's 16-tap layer has one slice), each takes part of the taps, each tap's sums
// still the work of one item in chunk order: the same bits on any number of threads. Each part
// transposes diff_dst for its chunks itself.
struct tap_split {
    int64_t slices, g, parts;
    tap_split(int64_t sl, int64_t groups, int64_t ksp)
        : slices(sl), g(groups), parts(std::clamp<int64_t>(div_up(4, sl * groups), 1, ksp)) {}
    int64_t items() const { return slices * g * parts; }
    /// Item i's slice, group and taps [t0, t1).
    void decode(int64_t i, int64_t ksp, int64_t &slice, int64_t &grp, int64_t &t0,
                int64_t &t1) const {
        const int64_t part = i % parts, sg = i / parts;
        slice = sg / g, grp = sg % g;
        balance211(ksp, int(parts), int(part), t0, t1);
    }
};

// Pixel pairs into the columns of a transposed panel, a block of max_transposed_pairs pairs at a
// time: add(v0, v1) queues a pair (views that stay valid until the block is written: slots
// 2j and 2j + 1 of px), flush() writes the queued pairs.
class pair_columns {
  public:
    pair_columns(const pair_ops &ops, int64_t n, uint16_t *col, int64_t ld)
        : ops_(ops), n_(n), col_(col), ld_(ld) {}
    /// The slot of the next pair's first pixel (the second's is one more).
    int slot() const { return 2 * pairs_; }
    void add(const uint16_t *v0, const uint16_t *v1) {
        px_[2 * pairs_] = v0;
        px_[2 * pairs_ + 1] = v1;
        if (++pairs_ == max_transposed_pairs) flush();
    }
    void flush() {
        if (pairs_ == 0) return;
        ops_.transpose_pairs(px_, pairs_, n_, col_, ld_);
        col_ += 2 * pairs_;
        pairs_ = 0;
    }

  private:
    const pair_ops &ops_;
    int64_t n_;
    uint16_t *col_;
    int64_t ld_;
    const uint16_t *px_[2 * max_transposed_pairs];
    int pairs_ = 0;
};

/// Sums the slices ([slice][g][tap][ocg][icg], or [..][icg][ocg] when `ic_major`) in slice
/// order into the first, rounds once, stores at the user's weight strides.
void store_sums(const bwd_weights_plan &pl, const conv_args &args, float *partials, int64_t slices,
                bool ic_major = false);

/// diff_dst^T of one unit of K of a group, in tile steps [step][ocg][32 pixels] at `out`: element
/// e of the unit is the pixel at row e / wq, column e % wq (wq 0: one row, column e) from offset
/// d0; zeros past o_w, past `rows` rows and past the unit, through `steps` steps. (The rows and
/// folded paths' A.)
void dst_unit_steps(const conv_problem &p, const conv_args &args, pixel_slots &px, int64_t d0,
                    int64_t rows, int64_t wq, int64_t steps, uint16_t *out);

/// The folded path (bwd_weights_plan::folded). Returns false, having written nothing to the
/// weights, when src or diff_dst holds an infinity or NaN (padding joins as zero products).
bool run_folded(const bwd_weights_plan &pl, const conv_args &args);

}  // namespace convgrad::detail::amx::bww
