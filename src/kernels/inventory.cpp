// The kernel inventory: every optimized kernel, one row each, in dispatch order (the first row
// whose features are present, that serves the direction and data type, is not disabled by
// CONVGRAD_DISABLE and does not decline the problem takes it; the reference comes after all).
// docs/kernels.md says how to add a row.
#include "kernels/inventory.hpp"

#include "kernels/amx/amx_conv_kernels.hpp"
#include "kernels/amx/amx_gemm.hpp"
#include "kernels/bf16dot_kernels.hpp"
#include "kernels/col2im_kernels.hpp"
#include "kernels/few_oc_kernels.hpp"
#include "kernels/direct_kernels.hpp"
#include "kernels/dw_kernels.hpp"
#include "kernels/dw_ncx_kernels.hpp"
#include "kernels/gemm_kernels.hpp"
#include "kernels/grouped_pairs_kernels.hpp"

namespace convgrad::detail {

// The run functions, defined in the per-ISA translation units (kernels/<isa>/), each compiled
// with its instruction set's flags. The AVX-512 unit's source also builds over plain C++ vector
// traits (avx512_emu/): the AVX-512 rows' emulations, for the tests on machines without AVX-512.
namespace avx512 {
#include "kernels/common/unit_entry_points.hpp"
void run_bf16dot(const direct_plan &pl, const conv_args &args);  // vdpbf16ps emulated in AVX-512F
void run_grouped_pairs(const direct_plan &pl, const conv_args &args);
void run_gemm_pairs(const gemm_plan &pl, const conv_args &args);
void run_col2im_pairs(const col2im_plan &pl, const conv_args &args);
}  // namespace avx512
namespace avx512_emu {
#include "kernels/common/unit_entry_points.hpp"
void run_bf16dot(const direct_plan &pl, const conv_args &args);  // vdpbf16ps in plain C++
void run_grouped_pairs(const direct_plan &pl, const conv_args &args);
void run_gemm_pairs(const gemm_plan &pl, const conv_args &args);
void run_col2im_pairs(const col2im_plan &pl, const conv_args &args);
}  // namespace avx512_emu
namespace avx512_bf16 {
void run_bf16dot(const direct_plan &pl, const conv_args &args);  // vdpbf16ps native
void run_grouped_pairs(const direct_plan &pl, const conv_args &args);
void run_gemm_pairs(const gemm_plan &pl, const conv_args &args);
void run_col2im_pairs(const col2im_plan &pl, const conv_args &args);
}  // namespace avx512_bf16
namespace avx2 {
#include "kernels/common/unit_entry_points.hpp"
}  // namespace avx2
namespace sse2 {
void run_direct(const direct_plan &pl, const conv_args &args);
void run_gemm(const gemm_plan &pl, const conv_args &args);
}  // namespace sse2

namespace {

// Register tiles: lanes of f32 per vector, and the vector registers of the instruction set.
constexpr register_tile zmm_tile{16, 32}, ymm_tile{8, 16}, xmm_tile{4, 16};

// Adapters from a row's constants to the plain functions a row holds.
template <register_tile t>
std::string grouped_cannot(const conv_problem &p) {
    return grouped_why_not(p, t.vlen);
}
template <register_tile t>
std::string dw_cannot(const conv_problem &p) {
    return dw_why_not(p, t.vlen);
}
// The f32 GEMM kernel against the direct kernel that would take the problem otherwise: on
// bf16 fwd/bwd_data problems where direct_bf16dot runs (vdpbf16ps at twice the FMA rate), that
// one (Zen 4: ResNet-50's 1x1 s2 projection 11.5 -> 6.5 ms, FCN's x8 data gradient 12.4 -> 9.4).
// Not bwd_weights: its K is the pixel axis, short on the GEMM-shaped layers (a 1x1 input: DCGAN's
// projection was 2x slower on it).
template <register_tile t>
std::string gemm_why_not(const conv_problem &p) {
    const bool bf16dot_takes = p.dir != conv_direction::bwd_weights &&
                               isa_available(cpu_isa::avx512_bf16) && bf16dot_why_not(p).empty();
    const double direct_speedup = bf16dot_takes ? 2.0 : 1.0;
    return detail::gemm_why_not(p, t.vlen, t.nregs, direct_speedup);
}
template <direct_run_fn run, register_tile t>
std::unique_ptr<kernel> direct(const conv_problem &p) {
    return make_direct_kernel(p, t, run, true);
}
template <direct_run_fn run, register_tile t>
std::unique_ptr<kernel> grouped(const conv_problem &p) {
    return make_direct_kernel(p, t, run, false);  // its bwd_weights splits the rows
}
template <dw_run_fn run, register_tile t>
std::unique_ptr<kernel> depthwise(const conv_problem &p) {
    return make_dw_kernel(p, t, run);
}
template <register_tile t>
std::string dw_ncx_cannot(const conv_problem &p) {
    return dw_ncx_why_not(p, t.vlen);
}
template <dw_ncx_run_fn run, register_tile t>
std::unique_ptr<kernel> depthwise_ncx(const conv_problem &p) {
    return make_dw_ncx_kernel(p, t, run);
}
template <gemm_run_fn run, register_tile t>
std::unique_ptr<kernel> gemm(const conv_problem &p) {
    return make_gemm_kernel(p, t, run);
}
template <direct_run_fn run, register_tile t>
std::unique_ptr<kernel> bf16dot(const conv_problem &p) {
    return make_bf16dot_kernel(p, t, run);
}
template <register_tile t>
std::string col2im_cannot(const conv_problem &p) {
    return col2im_why_not(p, t.vlen);
}
template <col2im_run_fn run, register_tile t>
std::unique_ptr<kernel> col2im(const conv_problem &p) {
    return make_col2im_kernel(p, t, run);
}
// The col2im kernel on the bf16-pairs microkernel: the bf16 problems the f32 col2im row takes,
// where vdpbf16ps outruns the f32 FMA.
std::string col2im_pairs_cannot(const conv_problem &p) {
    return col2im_pairs_why_not(p, zmm_tile.vlen);
}
std::string col2im_pairs_declines(const conv_problem &p) {
    std::string why = col2im_pairs_cannot(p);
    if (why.empty() && !fast_bf16_dot()) why = fast_bf16_dot_reason();
    return why;
}
template <col2im_run_fn run>
std::unique_ptr<kernel> col2im_pairs(const conv_problem &p) {
    return make_col2im_kernel(p, zmm_tile, run, true);
}

template <register_tile t>
std::string few_oc_cannot(const conv_problem &p) {
    return few_oc_why_not(p, t.vlen);
}
template <few_oc_run_fn run, register_tile t>
std::unique_ptr<kernel> few_oc(const conv_problem &p) {
    return make_few_oc_kernel(p, t, run);
}

template <direct_run_fn run, register_tile t>
std::unique_ptr<kernel> grouped_pairs(const conv_problem &p) {
    return make_grouped_pairs_kernel(p, t, run);
}

// A vdpbf16ps kernel emulated: in AVX-512F where the machine has it (checked bit for bit against
// the native instruction), else in plain C++. (The rows of direct_bf16dot, grouped_pairs and
// gemm_bf16dot.)
using create_fn = std::unique_ptr<kernel> (*)(const conv_problem &);
template <create_fn on_avx512, create_fn in_cpp>
std::unique_ptr<kernel> vdpbf16ps_emulated(const conv_problem &p) {
    return isa_available(cpu_isa::avx512) ? on_avx512(p) : in_cpp(p);
}

// The GEMM kernel can compute every matrix product; dispatch also asks its cost estimate.
std::string gemm_cannot(const conv_problem &p) {
    return gemm_shape_why_not(p);
}

// The GEMM kernel on the bf16-pairs microkernel: the bf16 problems the f32 GEMM row would take
// (its estimate against the same direct kernel), where vdpbf16ps outruns the f32 FMA. On
// converted operands, the f32 GEMM ran them at the f32 rate: a user's ConvTranspose3d 50 -> 1
// (batch 200) at 0.42-0.46x oneDNN's bf16 (Zen 5, 2 threads).
std::string gemm_pairs_cannot(const conv_problem &p) {
    if (p.dt != data_type::bf16)
        return std::string("multiplies bf16 pairs: takes bf16 tensors, not ") + to_string(p.dt);
    return gemm_shape_why_not(p);
}
// Also declined where its packers would copy the bf16 operands element by element (a weight
// gradient whose pixels on K are strided views, such as a ConvTranspose with stride along w):
// over 200 random problems in bf16 (Zen 5, 2 threads), 6 such took 1.4-2.4x the f32 GEMM's time.
std::string gemm_pairs_why_not(const conv_problem &p) {
    std::string why = gemm_pairs_cannot(p);
    if (why.empty() && !fast_bf16_dot()) why = fast_bf16_dot_reason();
    if (why.empty()) why = gemm_why_not<zmm_tile>(p);
    if (why.empty()) {
        std::vector<dim_t> tables;
        why = gemm_pairs_operands_why_not(make_gemm_plan(p, zmm_tile.vlen, zmm_tile.nregs, tables));
    }
    return why;
}

// Order: the depthwise kernels first (NCX planes with pixels on the lanes; channels on the lanes,
// one per group or planes of a few), then the grouped
// kernels (they take only few channels per group), then per instruction set the GEMM kernel (it
// takes only the matrix products its estimate gives it against that set's direct kernel), the
// col2im kernel (data gradients with few src channels per group) and that set's direct kernel,
// which takes all.
const std::vector<impl_desc> &table() {
    static const std::vector<impl_desc> rows = {
        {.name = "depthwise_ncx:avx512",
         .directions = all_directions,
         .dtypes = all_float_types,
         .isa = cpu_isa::avx512,
         .tile = zmm_tile,
         .cannot = dw_ncx_cannot<zmm_tile>,
         .why_not = dw_ncx_cannot<zmm_tile>,
         .create = depthwise_ncx<avx512::run_depthwise_ncx, zmm_tile>,
         .create_emulated = depthwise_ncx<avx512_emu::run_depthwise_ncx, zmm_tile>,
         .emulation_isa = cpu_isa::avx2,
         .guards_padded_taps = all_directions},
        {.name = "depthwise_ncx:avx2",
         .directions = all_directions,
         .dtypes = all_float_types,
         .isa = cpu_isa::avx2,
         .tile = ymm_tile,
         .cannot = dw_ncx_cannot<ymm_tile>,
         .why_not = dw_ncx_cannot<ymm_tile>,
         .create = depthwise_ncx<avx2::run_depthwise_ncx, ymm_tile>,
         .guards_padded_taps = all_directions},
        {.name = "depthwise:avx512",
         .directions = all_directions,
         .dtypes = all_float_types,
         .isa = cpu_isa::avx512,
         .tile = zmm_tile,
         .cannot = dw_cannot<zmm_tile>,
         .why_not = dw_cannot<zmm_tile>,
         .create = depthwise<avx512::run_depthwise, zmm_tile>,
         .create_emulated = depthwise<avx512_emu::run_depthwise, zmm_tile>,
         .emulation_isa = cpu_isa::avx2,
         .guards_padded_taps = all_directions},
        {.name = "depthwise:avx2",
         .directions = all_directions,
         .dtypes = all_float_types,
         .isa = cpu_isa::avx2,
         .tile = ymm_tile,
         .cannot = dw_cannot<ymm_tile>,
         .why_not = dw_cannot<ymm_tile>,
         .create = depthwise<avx2::run_depthwise, ymm_tile>,
         .guards_padded_taps = all_directions},
        // Channel pairs of 32/cg groups on vdpbf16ps's lanes (bf16 ops, f32 ops under
        // fpmath_mode bf16), where vdpbf16ps outruns the f32 FMA (fast_bf16_dot); like
        // direct_bf16dot, the tests also run it over the exact emulation of vdpbf16ps.
        {.name = "grouped_pairs:avx512_bf16",
         .directions = {conv_direction::fwd, conv_direction::bwd_data},
         .dtypes = {data_type::bf16, data_type::f32},
         .isa = cpu_isa::avx512_bf16,
         .tile = zmm_tile,
         .cannot = grouped_pairs_cannot,
         .why_not = grouped_pairs_why_not,
         .create = grouped_pairs<avx512_bf16::run_grouped_pairs, zmm_tile>,
         .create_emulated =
             vdpbf16ps_emulated<grouped_pairs<avx512::run_grouped_pairs, zmm_tile>,
                                grouped_pairs<avx512_emu::run_grouped_pairs, zmm_tile>>,
         .emulation_isa = cpu_isa::avx2,
         .guards_padded_taps = {conv_direction::fwd, conv_direction::bwd_data}},
        {.name = "grouped_lanes:avx512",
         .directions = all_directions,
         .dtypes = all_float_types,
         .isa = cpu_isa::avx512,
         .tile = zmm_tile,
         .cannot = grouped_cannot<zmm_tile>,
         .why_not = grouped_cannot<zmm_tile>,
         .create = grouped<avx512::run_grouped, zmm_tile>,
         .create_emulated = grouped<avx512_emu::run_grouped, zmm_tile>,
         .emulation_isa = cpu_isa::avx2},
        {.name = "grouped_lanes:avx2",
         .directions = all_directions,
         .dtypes = all_float_types,
         .isa = cpu_isa::avx2,
         .tile = ymm_tile,
         .cannot = grouped_cannot<ymm_tile>,
         .why_not = grouped_cannot<ymm_tile>,
         .create = grouped<avx2::run_grouped, ymm_tile>},

        // AMX tiles (bf16 and f16 ops, f32 ops under fpmath_mode bf16/f16): 16 f32 columns per
        // tile row, 8 tiles. Where AMX is not granted the tests run the same kernel source over the
        // exact emulation of the tile instructions (kernels/amx/amx_emulation.hpp).
        // Matrix-product shapes on the tiles, where their K and columns are long though the
        // channels of one side are few (amx_gemm.hpp): before amx_conv, which keeps the rest.
        // Taps in the padding (fwd, bwd_weights) read a zero-bordered copy of src, so those run
        // behind the guard; as the gemm rows, bwd_data never multiplies padding.
        {.name = "amx_gemm:amx",
         .directions = all_directions,
         .dtypes = all_float_types,
         .isa = cpu_isa::amx,
         .tile = {16, 8},
         .cannot = amx::gemm_cannot,
         .why_not = amx::gemm_why_not_native,
         .create = amx::gemm_create_native,
         .create_emulated = amx::gemm_create_emulated,
         .emulation_isa = cpu_isa::generic,
         .cannot_natively = amx::cannot_natively,
         .guards_padded_taps = {conv_direction::bwd_data}},
        {.name = "amx_conv:amx",
         .directions = all_directions,
         .dtypes = all_float_types,
         .isa = cpu_isa::amx,
         .tile = {16, 8},
         .cannot = amx::cannot_conv,
         .why_not = amx::why_not_native,
         .create = amx::create_native,
         .create_emulated = amx::create_emulated,
         .emulation_isa = cpu_isa::generic,
         .cannot_natively = amx::cannot_natively,
         .guards_padded_taps = all_directions},

        // Forwards and weight gradients to 1-4 channels: src channels on the lanes, before
        // the kernels that put the dst channels there (and fill one lane of 16).
        {.name = "few_oc:avx512",
         .directions = {conv_direction::fwd, conv_direction::bwd_weights},
         .dtypes = all_float_types,
         .isa = cpu_isa::avx512,
         .tile = zmm_tile,
         .cannot = few_oc_cannot<zmm_tile>,
         .why_not = few_oc_cannot<zmm_tile>,
         .create = few_oc<avx512::run_few_oc, zmm_tile>,
         .create_emulated = few_oc<avx512_emu::run_few_oc, zmm_tile>,
         .emulation_isa = cpu_isa::avx2,
         .guards_padded_taps = {conv_direction::fwd, conv_direction::bwd_weights}},
        // bf16 matrix products on vdpbf16ps, before the f32 GEMM row (the same problems).
        {.name = "gemm_bf16dot:avx512_bf16",
         .directions = all_directions,
         .dtypes = {data_type::bf16},
         .isa = cpu_isa::avx512_bf16,
         .tile = zmm_tile,
         .cannot = gemm_pairs_cannot,
         .why_not = gemm_pairs_why_not,
         .create = gemm<avx512_bf16::run_gemm_pairs, zmm_tile>,
         .create_emulated = vdpbf16ps_emulated<gemm<avx512::run_gemm_pairs, zmm_tile>,
                                               gemm<avx512_emu::run_gemm_pairs, zmm_tile>>,
         .emulation_isa = cpu_isa::avx2,
         .guards_padded_taps = {conv_direction::bwd_data}},
        {.name = "gemm:avx512",
         .directions = all_directions,
         .dtypes = all_float_types,
         .isa = cpu_isa::avx512,
         .tile = zmm_tile,
         .cannot = gemm_cannot,
         .why_not = gemm_why_not<zmm_tile>,
         .create = gemm<avx512::run_gemm, zmm_tile>,
         .create_emulated = gemm<avx512_emu::run_gemm, zmm_tile>,
         .emulation_isa = cpu_isa::avx2,
         .guards_padded_taps = {conv_direction::bwd_data}},
        // bf16 col2im on vdpbf16ps, before the f32 col2im row (the same problems).
        {.name = "col2im_bf16dot:avx512_bf16",
         .directions = {conv_direction::bwd_data},
         .dtypes = {data_type::bf16},
         .isa = cpu_isa::avx512_bf16,
         .tile = zmm_tile,
         .cannot = col2im_pairs_cannot,
         .why_not = col2im_pairs_declines,
         .create = col2im_pairs<avx512_bf16::run_col2im_pairs>,
         .create_emulated = vdpbf16ps_emulated<col2im_pairs<avx512::run_col2im_pairs>,
                                               col2im_pairs<avx512_emu::run_col2im_pairs>>,
         .emulation_isa = cpu_isa::avx2},
        {.name = "col2im:avx512",
         .directions = {conv_direction::bwd_data},
         .dtypes = all_float_types,
         .isa = cpu_isa::avx512,
         .tile = zmm_tile,
         .cannot = col2im_cannot<zmm_tile>,
         .why_not = col2im_cannot<zmm_tile>,
         .create = col2im<avx512::run_col2im, zmm_tile>,
         .create_emulated = col2im<avx512_emu::run_col2im, zmm_tile>,
         .emulation_isa = cpu_isa::avx2},
        // The direct kernel on vdpbf16ps (bf16 ops, f32 ops under fpmath_mode bf16), before the
        // f32 direct kernel: the gemm and col2im rows keep the shapes where they beat a direct
        // kernel (a gather wastes most of its taps on e.g. a ConvTranspose from 1x1 inputs).
        // Dispatch gives it problems only where vdpbf16ps outruns the f32 FMA (fast_bf16_dot:
        // AMD Zen 4+, or CONVGRAD_BF16_DOT=1). The tests also run it on plain AVX-512 over the
        // exact emulation of vdpbf16ps.
        {.name = "direct_bf16dot:avx512_bf16",
         .directions = all_directions,
         .dtypes = {data_type::bf16, data_type::f32},
         .isa = cpu_isa::avx512_bf16,
         .tile = zmm_tile,
         .cannot = bf16dot_cannot,
         .why_not = bf16dot_why_not,
         .create = bf16dot<avx512_bf16::run_bf16dot, zmm_tile>,
         .create_emulated = vdpbf16ps_emulated<bf16dot<avx512::run_bf16dot, zmm_tile>,
                                               bf16dot<avx512_emu::run_bf16dot, zmm_tile>>,
         .emulation_isa = cpu_isa::avx2,
         .guards_padded_taps = {conv_direction::fwd, conv_direction::bwd_data}},

        {.name = "direct_brgemm:avx512",
         .directions = all_directions,
         .dtypes = all_float_types,
         .isa = cpu_isa::avx512,
         .tile = zmm_tile,
         .cannot = direct_why_not,
         .why_not = direct_why_not,
         .create = direct<avx512::run_direct, zmm_tile>,
         .create_emulated = direct<avx512_emu::run_direct, zmm_tile>,
         .emulation_isa = cpu_isa::avx2,
         .guards_padded_taps = all_directions},

        {.name = "few_oc:avx2",
         .directions = {conv_direction::fwd, conv_direction::bwd_weights},
         .dtypes = all_float_types,
         .isa = cpu_isa::avx2,
         .tile = ymm_tile,
         .cannot = few_oc_cannot<ymm_tile>,
         .why_not = few_oc_cannot<ymm_tile>,
         .create = few_oc<avx2::run_few_oc, ymm_tile>,
         .guards_padded_taps = {conv_direction::fwd, conv_direction::bwd_weights}},
        {.name = "gemm:avx2",
         .directions = all_directions,
         .dtypes = all_float_types,
         .isa = cpu_isa::avx2,
         .tile = ymm_tile,
         .cannot = gemm_cannot,
         .why_not = gemm_why_not<ymm_tile>,
         .create = gemm<avx2::run_gemm, ymm_tile>,
         .guards_padded_taps = {conv_direction::bwd_data}},
        {.name = "col2im:avx2",
         .directions = {conv_direction::bwd_data},
         .dtypes = all_float_types,
         .isa = cpu_isa::avx2,
         .tile = ymm_tile,
         .cannot = col2im_cannot<ymm_tile>,
         .why_not = col2im_cannot<ymm_tile>,
         .create = col2im<avx2::run_col2im, ymm_tile>},
        {.name = "direct_brgemm:avx2",
         .directions = all_directions,
         .dtypes = all_float_types,
         .isa = cpu_isa::avx2,
         .tile = ymm_tile,
         .cannot = direct_why_not,
         .why_not = direct_why_not,
         .create = direct<avx2::run_direct, ymm_tile>,
         .guards_padded_taps = all_directions},

        {.name = "gemm:sse2",
         .directions = all_directions,
         .dtypes = all_float_types,
         .isa = cpu_isa::generic,
         .tile = xmm_tile,
         .cannot = gemm_cannot,
         .why_not = gemm_why_not<xmm_tile>,
         .create = gemm<sse2::run_gemm, xmm_tile>,
         .guards_padded_taps = {conv_direction::bwd_data}},
        {.name = "direct_brgemm:sse2",
         .directions = all_directions,
         .dtypes = all_float_types,
         .isa = cpu_isa::generic,
         .tile = xmm_tile,
         .cannot = direct_why_not,
         .why_not = direct_why_not,
         .create = direct<sse2::run_direct, xmm_tile>,
         .guards_padded_taps = all_directions},
    };
    return rows;
}

}  // namespace

const std::vector<impl_desc> &kernel_inventory() {
    return table();
}

std::vector<cpu_isa> inventory_isa_levels() {
    bool used[cpu_isa_count] = {};
    for (const impl_desc &r : table()) {
        used[int(r.isa)] = true;
        if (r.create_emulated) used[int(r.emulation_isa)] = true;
    }
    std::vector<cpu_isa> levels;
    for (int i = 0; i < cpu_isa_count; ++i)
        if (used[i]) levels.push_back(cpu_isa(i));
    return levels;
}

std::string impl_desc::serves(const conv_problem &p) const {
    if (!directions.has(p.dir))
        return std::string("serves ") + directions.to_string() + ", not " + to_string(p.dir);
    if (!dtypes.has(p.dt))
        return std::string("takes ") + dtypes.to_string() + ", not " + to_string(p.dt);
    return {};
}

std::string direction_set::to_string() const {
    std::string s;
    for (conv_direction d :
         {conv_direction::fwd, conv_direction::bwd_data, conv_direction::bwd_weights})
        if (has(d)) {
            if (!s.empty()) s += ',';
            s += detail::to_string(d);
        }
    return s;
}

std::string dtype_set::to_string() const {
    std::string s;
    for (data_type t : {data_type::f32, data_type::bf16, data_type::f16, data_type::s32})
        if (has(t)) {
            if (!s.empty()) s += ',';
            s += convgrad::to_string(t);
        }
    return s;
}

}  // namespace convgrad::detail
