// The depthwise kernel on tensors that do not start on a cache line. glibc's malloc puts a large
// buffer 16 bytes past a line, so a std::vector's or a NumPy array's data does; the f32 kernel
// then starts its vectors `shift` lanes before channel 0 (dw_lane_shift), masking the lanes
// before it. Each tensor is placed in its own pages between inaccessible guard pages, either
// starting right after a guard page (at a given offset into the page) or ending right before
// one, so that a vector read before a tensor's first element or past its last one faults. Every
// op, the forward ones with a bias, 1-3 threads, outputs stored plainly and streamed, on each
// unit that runs here; each result equals the reference's exactly (small-integer data), and
// the bytes around each output stay untouched.
#include <gtest/gtest.h>
#include <omp.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <new>

#include "kernels/dw_test_util.hpp"
#include "util/kernel_check.hpp"

namespace convgrad {
namespace {

using dw_geometry = testing::conv_geometry;
using testing::tensor_buffer;

constexpr uint8_t guard_byte = 0xa5;

// Where a tensor lies in its pages: `offset` bytes into the page after a guard page, or (at_end)
// ending where the next guard page begins.
struct placement {
    bool at_end;
    size_t offset;
};

// A tensor's bytes alone in readable pages, with a guard page before and after them.
class guarded_bytes {
  public:
    guarded_bytes(size_t bytes, placement at) : bytes_(bytes) {
        page_ = size_t(sysconf(_SC_PAGESIZE));
        const size_t room = (at.offset + bytes + page_ - 1) / page_ * page_ + page_;
        size_ = room + 2 * page_;
        void *m = mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED) throw std::bad_alloc();
        base_ = static_cast<uint8_t *>(m);
        mprotect(base_, page_, PROT_NONE);
        mprotect(base_ + page_ + room, page_, PROT_NONE);
        std::memset(base_ + page_, guard_byte, room);
        data_ = at.at_end ? base_ + page_ + room - bytes : base_ + page_ + at.offset;
    }
    ~guarded_bytes() { munmap(base_, size_); }
    guarded_bytes(const guarded_bytes &) = delete;
    guarded_bytes &operator=(const guarded_bytes &) = delete;

    uint8_t *data() const { return data_; }
    // Whether every readable byte outside the tensor still holds the guard pattern.
    bool untouched_around() const {
        const uint8_t *lo = base_ + page_, *hi = base_ + size_ - page_;
        auto kept = [](const uint8_t *a, const uint8_t *b) {
            return std::all_of(a, b, [](uint8_t x) { return x == guard_byte; });
        };
        return kept(lo, data_) && kept(data_ + bytes_, hi);
    }

  private:
    size_t bytes_, page_ = 4096, size_ = 0;
    uint8_t *base_ = nullptr, *data_ = nullptr;
};

// Placements of inputs 0, 1, 2 (fwd: src, weights, bias; bwd_data: diff_dst, weights;
// bwd_weights: src, diff_dst) and of the output.
struct scenario {
    const char *what;
    placement in[3], out;
};
// clang-format off
const scenario scenarios[] = {
    // malloc's phase for every tensor: a shift of 4 lanes, 16-byte vectors' phase 0.
    {"all 16 bytes past a line", {{false, 16}, {false, 16}, {false, 16}}, {false, 16}},
    // The output shifted, its inputs starting a page: a read before them faults.
    {"output 16 past a line, inputs at a guard", {{false, 0}, {false, 0}, {false, 0}}, {false, 16}},
    // bwd_weights shifts by src (input 0): diff_dst at a guard.
    {"input 0 at 4 past a line, the others at a guard", {{false, 4}, {false, 0}, {false, 0}}, {false, 0}},
    // The largest shift (15 lanes; 7 on 8-lane vectors), the other tensors at other phases.
    {"output 60 past a line, inputs 36 and 8", {{false, 36}, {false, 8}, {false, 60}}, {false, 60}},
    {"every tensor ending at a guard", {{true, 0}, {true, 0}, {true, 0}}, {true, 0}},
};
// Channel counts whose pixels are whole vectors (so shifted) and not; one vector and a head and
// tail in one block (16), head and tail in different groups (48, 144), upsampling, 1-D, 3-D.
const dw_geometry geometries[] = {
    {"16 channels 3x3", 16, 2, {5, 11}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, false, false, data_type::f32},
    {"48 channels stride 2", 48, 2, {9, 12}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}, false, false, data_type::f32},
    {"96 channels x2 upsampler", 96, 1, {8, 10}, {4, 4}, {2, 2}, {1, 1}, {1, 1}, {1, 1}, false, false, data_type::f32},
    {"144 channels, threaded", 144, 3, {14, 14}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, false, false, data_type::f32},
    {"32 channels 1-D dilated", 32, 2, {40}, {5}, {1}, {4}, {4}, {2}, false, false, data_type::f32},
    {"64 channels 3-D", 64, 1, {4, 5, 6}, {3, 3, 3}, {1, 2, 1}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}, false, false, data_type::f32},
    // A channel multiplier (the input side rebuilt as planes, never shifted): 8 groups of 1 -> 2
    // channels (fwd, bwd_weights: 16 lanes of one plane) and of 2 -> 1 (bwd_data: the same).
    {"channel multiplier 1 -> 2", 8, 2, {6, 9}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, false, false, data_type::f32, 1, 2},
    {"channel multiplier 2 -> 1", 8, 1, {7, 8}, {3, 3}, {2, 1}, {1, 1}, {1, 1}, {1, 1}, false, false, data_type::f32, 2, 1},
    // A 1-D row too long for the shared lines' stash (4096 pixels): masked in place.
    {"16 channels, a 1-D row of 4200", 16, 1, {4200}, {3}, {1}, {1}, {1}, {1}, false, false, data_type::f32},
    {"33 channels (not shifted)", 33, 2, {6, 9}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, false, false, data_type::f32},
    {"32 channels bf16 (not shifted)", 32, 1, {6, 9}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, false, false, data_type::bf16},
};
// clang-format on

TEST(DepthwiseMisaligned, EqualsTheReferenceAndStaysInBounds) {
    int runs = 0, case_no = 0;
    for (const dw_geometry &c : geometries)
        for (op_kind kind : testing::conv_kinds) {
            ++case_no;
            const bool bias = kind == op_kind::Convolution || kind == op_kind::ConvTranspose;
            const op o = testing::make_geometry_op(c, kind, bias);
            const detail::resolved_op r = detail::resolve_op(o, o.inputs(), o.outputs());
            std::vector<tensor_buffer> in = testing::int_inputs(r, {11, 12, 13});
            tensor_buffer want(r.outputs[0]);
            testing::run_poisoned(r, detail::reference_impl().create, in, want);
            const size_t out_bytes = size_t(r.outputs[0].size_bytes());
            const int nthr = 1 + case_no % 3;
            for (const testing::dw_unit &u : testing::dw_units) {
                if (!detail::isa_available(u.isa)) continue;
                if (!detail::dw_why_not(r.prob, u.tile.vlen).empty()) continue;
                for (const scenario &sc : scenarios)
                    for (bool stream : {false, true}) {
                        std::vector<std::unique_ptr<guarded_bytes>> ins;
                        for (size_t i = 0; i < in.size(); ++i) {
                            const size_t b = size_t(r.inputs[i].size_bytes());
                            ins.push_back(
                                std::make_unique<guarded_bytes>(b, sc.in[std::min<size_t>(i, 2)]));
                            std::memcpy(ins.back()->data(), in[i].data(), b);
                        }
                        guarded_bytes out(out_bytes, sc.out);
                        detail::conv_args a = testing::conv_args_of(r, in, out.data());
                        auto at = [&](int i) -> const void * {
                            return i >= 0 ? ins[size_t(i)]->data() : nullptr;
                        };
                        a.src = at(r.src_input);
                        a.dst = at(r.dst_input);
                        a.wei = at(r.wei_input);
                        a.bias = at(r.bias_input);
                        detail::dw_plan pl = detail::make_dw_plan(r.prob, u.tile);
                        pl.nthr = nthr;
                        pl.stream_output = stream && kind != op_kind::ConvolutionBackwardWeights &&
                                           kind != op_kind::ConvTransposeBackwardWeights &&
                                           c.dt == data_type::f32;
                        u.run(pl, a);
                        const std::string label = std::string(u.name) + " " + c.what + " " +
                                                  to_string(kind) + ", " + sc.what +
                                                  (pl.stream_output ? ", streamed" : "");
                        EXPECT_EQ(std::memcmp(out.data(), want.data(), out_bytes), 0) << label;
                        EXPECT_TRUE(out.untouched_around()) << label;
                        for (const auto &g : ins) EXPECT_TRUE(g->untouched_around()) << label;
                        ++runs;
                    }
            }
        }
    if (runs == 0) GTEST_SKIP() << "no channels-last depthwise unit runs on this CPU";
}

}  // namespace
}  // namespace convgrad
