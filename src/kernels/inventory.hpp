// The kernel inventory: one table (kernels/inventory.cpp) with a row per optimized kernel, in
// dispatch order. A row says what the kernel serves (directions, data types), what it needs
// (an instruction-set level, hence CPU features), how it blocks (register tile), and how to ask
// it (why_not, cannot) and build it (create). Everything else reads the table: dispatch
// (dispatch/registry.cpp), the kernel tests (tests/kernels/test_inventory_vs_ref.cpp), the ctest
// ISA caps (the levels the rows use), the kernel benchmarks and `convgrad info`.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/conv_problem.hpp"
#include "dispatch/cpu_features.hpp"

namespace convgrad::detail {

/// A kernel prepared for one problem at compile time; execute() may run concurrently.
class kernel {
  public:
    virtual ~kernel() = default;
    virtual void execute(const conv_args &args) const = 0;
    /// How the kernel mapped the problem, for CONVGRAD_VERBOSE=2 (empty: nothing to add).
    virtual std::string describe() const { return {}; }
    /// True when the kernel multiplies in conv_problem::math_dt itself (it rounds f32 inputs to
    /// bf16/f16 while packing them), so execute needs no separate rounding pass for an f32 op
    /// under fpmath_mode bf16/f16.
    virtual bool rounds_to_math_type() const { return false; }
};

/// The directions of the core computation a kernel computes, as a set.
class direction_set {
  public:
    constexpr direction_set() = default;
    constexpr direction_set(std::initializer_list<conv_direction> ds) {
        for (conv_direction d : ds) bits_ |= 1u << unsigned(d);
    }
    constexpr bool has(conv_direction d) const { return bits_ & (1u << unsigned(d)); }
    std::string to_string() const;  // "fwd,bwd_data,bwd_weights"

  private:
    unsigned bits_ = 0;
};
inline constexpr direction_set all_directions{conv_direction::fwd, conv_direction::bwd_data,
                                              conv_direction::bwd_weights};

/// The tensor data types a kernel takes, as a set.
class dtype_set {
  public:
    constexpr dtype_set(std::initializer_list<data_type> ts) {
        for (data_type t : ts) bits_ |= 1u << unsigned(t);
    }
    constexpr bool has(data_type t) const { return bits_ & (1u << unsigned(t)); }
    std::string to_string() const;  // "f32,bf16,f16"

  private:
    unsigned bits_ = 0;
};
inline constexpr dtype_set all_float_types{data_type::f32, data_type::bf16, data_type::f16};

/// The register blocking a kernel is built with: lanes per vector, and vector registers its
/// blocking may hold (accumulators plus operands). A structural type, so a row's create and
/// why_not can be instantiated on the same constant the row shows.
struct register_tile {
    int vlen;
    int nregs;
};

/// One row of the inventory. (Named impl_desc since dispatch hands it around as "the
/// implementation chosen"; the reference kernel is described by one too, outside the table.)
struct impl_desc {
    const char *name;  // "family:isa": what CONVGRAD_VERBOSE prints, CONVGRAD_DISABLE matches
    direction_set directions;
    dtype_set dtypes;
    cpu_isa isa;  // the level it is compiled for: it needs features_of(isa)
    register_tile tile;
    /// Empty when the kernel can compute the problem correctly, else why not. Tests run a row
    /// on every problem it can compute, whatever its cost estimate would choose.
    std::string (*cannot)(const conv_problem &p);
    /// Empty when dispatch should give the problem to this kernel: it can compute it and, where
    /// the kernel has a cost estimate, is estimated worth it. Else the reason (for verbose).
    std::string (*why_not)(const conv_problem &p);
    std::unique_ptr<kernel> (*create)(const conv_problem &p);
    /// An emulated build of the same kernel source, for the tests on machines that lack `isa`
    /// (the AVX-512 rows on the plain C++ traits of avx512_emu/, AMX on its tile emulation,
    /// vdpbf16ps in AVX-512F or plain C++). It needs features_of(emulation_isa).
    std::unique_ptr<kernel> (*create_emulated)(const conv_problem &p) = nullptr;
    cpu_isa emulation_isa = cpu_isa::generic;
    /// For a row whose native build needs more than features_of(isa) on some problems (AMX
    /// tiles of f16 need AMX-FP16 besides AMX-BF16): empty when `create` runs `p` on this
    /// machine, else why not. The tests then run `p` on the emulation instead. Null: needs()
    /// says it all.
    std::string (*cannot_natively)(const conv_problem &p) = nullptr;
    /// The directions in which the kernel gives the reference's result when an infinite or NaN
    /// value meets a tap that reads padding: it leaves such taps out, as the reference does,
    /// never multiplies padding (gemm's bwd_data scatters its products), or checks what it packs
    /// and computes by the reference. Dispatch puts the other directions' kernels behind a check
    /// of the weights or of diff_dst's border (dispatch/padded_tap_guard.hpp).
    direction_set guards_padded_taps{};  // (none unless a row says so)

    cpu_features needs() const { return features_of(isa); }
    /// Empty when the row serves this direction and data type, else why not.
    std::string serves(const conv_problem &p) const;
};

/// The optimized kernels, in dispatch order (the registry appends the reference).
const std::vector<impl_desc> &kernel_inventory();

/// The instruction-set levels the inventory's rows (and their emulations) are built for, in
/// CONVGRAD_MAX_ISA order: the caps under which the kernel tests must run to reach every row.
std::vector<cpu_isa> inventory_isa_levels();

}  // namespace convgrad::detail
