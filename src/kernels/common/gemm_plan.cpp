#include "kernels/common/gemm_plan.hpp"

#include <algorithm>
#include <cstdio>

#include "kernels/common/direct_plan.hpp"
#include "kernels/plan/cache_sizes.hpp"
#include "kernels/ukernel/brgemm_args.hpp"  // (ukernel_rows_that_fit)
#include "threading/parallel.hpp"

namespace convgrad::detail {
namespace {

dim_t div_up(dim_t a, dim_t b) {
    return (a + b - 1) / b;
}
dim_t round_up(dim_t a, dim_t b) {
    return div_up(a, b) * b;
}

// The three axes of the product and the tensors they index.
enum axis : int { ax_p = 0, ax_i = 1, ax_o = 2 };
const char *axis_name(int a) {
    return a == ax_p ? "P" : a == ax_i ? "I" : "O";
}
const char *tensor_name(gemm_tensor t) {
    return t == gemm_tensor::src ? "src" : t == gemm_tensor::wei ? "wei" : "dst";
}
gemm_tensor tensor_of(int a, int b) {
    const int mask = (1 << a) | (1 << b);
    if (mask == ((1 << ax_p) | (1 << ax_i))) return gemm_tensor::src;
    if (mask == ((1 << ax_p) | (1 << ax_o))) return gemm_tensor::dst;
    return gemm_tensor::wei;
}

// The natural product of each direction: C(m_axis, n_axis) = A(m_axis, k_axis) B(k_axis, n_axis).
struct product {
    int m, n, k;
};
product natural(conv_direction d) {
    switch (d) {
        case conv_direction::fwd:
            return {ax_p, ax_o, ax_i};  // dst = src * wei^T
        case conv_direction::bwd_data:
            return {ax_p, ax_i, ax_o};  // src = dst * wei
        case conv_direction::bwd_weights:
            return {ax_o, ax_i, ax_p};  // wei = dst^T * src
    }
    return {ax_p, ax_o, ax_i};
}

// Offset tables of the three axes into the two tensors each one indexes, built into one vector.
struct axis_tables {
    dim_t len[3] = {0, 0, 0};
    // [axis][which of its two tensors]: start of the offsets and of the runs in the storage.
    dim_t off[3][2] = {}, run[3][2] = {};
    double avg_run[3][2] = {};
    gemm_tensor tens[3][2] = {};
    dim_t bias_ch = -1;  // start of the channel-of-I table (bias of bwd_data), or of O's identity
};

int slot(const axis_tables &t, int a, gemm_tensor x) {
    return t.tens[a][0] == x ? 0 : 1;
}

// Builds the tables. `tap_major`: I = (tap, channel) with the channel fastest, else (channel, tap).
axis_tables build_tables(const conv_problem &p, bool tap_major, std::vector<dim_t> &v) {
    axis_tables t;
    const dim_t P = p.mb * p.osp(), ksp = p.ksp(), I = p.icg * ksp, O = p.ocg;
    t.len[ax_p] = P;
    t.len[ax_i] = I;
    t.len[ax_o] = O;
    t.tens[ax_p][0] = gemm_tensor::src, t.tens[ax_p][1] = gemm_tensor::dst;
    t.tens[ax_i][0] = gemm_tensor::src, t.tens[ax_i][1] = gemm_tensor::wei;
    t.tens[ax_o][0] = gemm_tensor::dst, t.tens[ax_o][1] = gemm_tensor::wei;
    v.clear();
    v.reserve(size_t(4 * (P + I + O) + I + O));
    for (int a = 0; a < 3; ++a)
        for (int s = 0; s < 2; ++s) {
            t.off[a][s] = dim_t(v.size());
            v.resize(v.size() + size_t(t.len[a]));
        }
    dim_t *pd = v.data();
    for (dim_t q = 0; q < P; ++q) {
        dim_t r = q;
        const dim_t ow = r % p.o[2];
        r /= p.o[2];
        const dim_t oh = r % p.o[1];
        r /= p.o[1];
        const dim_t od = r % p.o[0], n = r / p.o[0];
        pd[t.off[ax_p][0] + q] = n * p.src.n + od * p.s[0] * p.src.sp[0] +
                                 oh * p.s[1] * p.src.sp[1] + ow * p.s[2] * p.src.sp[2];
        pd[t.off[ax_p][1] + q] =
            n * p.dst.n + od * p.dst.sp[0] + oh * p.dst.sp[1] + ow * p.dst.sp[2];
    }
    for (dim_t i = 0; i < I; ++i) {
        const dim_t ic = tap_major ? i % p.icg : i / ksp, tap = tap_major ? i / p.icg : i % ksp;
        const dim_t kw = tap % p.k[2], kh = (tap / p.k[2]) % p.k[1], kd = tap / (p.k[2] * p.k[1]);
        pd[t.off[ax_i][0] + i] = ic * p.src.c + kd * p.dl[0] * p.src.sp[0] +
                                 kh * p.dl[1] * p.src.sp[1] + kw * p.dl[2] * p.src.sp[2];
        pd[t.off[ax_i][1] + i] =
            ic * p.wei.ic + kd * p.wei.sp[0] + kh * p.wei.sp[1] + kw * p.wei.sp[2];
    }
    for (dim_t o = 0; o < O; ++o) {
        pd[t.off[ax_o][0] + o] = o * p.dst.c;
        pd[t.off[ax_o][1] + o] = o * p.wei.oc;
    }
    // Runs: how many entries from j on step by +1.
    for (int a = 0; a < 3; ++a)
        for (int s = 0; s < 2; ++s) {
            t.run[a][s] = dim_t(v.size());
            v.resize(v.size() + size_t(t.len[a]));
            const dim_t *tab = v.data() + t.off[a][s];
            dim_t *run = v.data() + t.run[a][s];
            dim_t nruns = 0;
            for (dim_t j = t.len[a]; j-- > 0;) {
                const bool cont = j + 1 < t.len[a] && tab[j + 1] == tab[j] + 1;
                run[j] = cont ? run[j + 1] + 1 : 1;
                nruns += cont ? 0 : 1;
            }
            t.avg_run[a][s] = nruns ? double(t.len[a]) / double(nruns) : 1.0;
        }
    // Channel of each bias-carrying index: fwd's bias is per O, bwd_data's per input channel of I.
    t.bias_ch = dim_t(v.size());
    if (p.dir == conv_direction::bwd_data) {
        for (dim_t i = 0; i < I; ++i) v.push_back(tap_major ? i % p.icg : i / ksp);
    } else {
        for (dim_t o = 0; o < O; ++o) v.push_back(o);
    }
    return t;
}

// The fraction of the FMA ports' peak a register tile of mr rows x nv vectors reaches: per
// k step it issues mr*nv FMAs and mr + nv loads (two of each per cycle), and needs about 8
// independent accumulators to hide the FMA latency.
double tile_efficiency(dim_t mr, dim_t nv) {
    const double f = double(mr * nv);
    return f / std::max(f, double(mr + nv)) * std::min(1.0, f / 8.0);
}

// Cycles per element to copy (pack or store) an operand whose contiguous runs along the copied
// rows average `run` elements: vector copies within runs, a scalar step per run start. Runs only
// across the rows (the transposed direction) make an element-by-element copy of contiguous
// reads or writes; no runs at all, a gather. (Scalar steps convert through a type switch and
// an offset table: about 3-4 cycles each.)
double copy_cost(double run, int vlen) {
    return 4.0 / std::max(run, 1.0) + 2.0 / vlen;
}
double copy_cost(double along, double across, int vlen) {
    return std::min(copy_cost(along, vlen), across >= 8 ? 3.0 : 4.0);
}

// Column blocks of up to 1024 (long runs of C rows written to memory, e.g. NCX pixels; the B
// block kc x nc stays in L2) and the f32 block of C a unit accumulates (mc x nc) within the L2
// budget of the machine's caches (kernels/plan/cache_sizes.hpp).
constexpr dim_t max_nc = 1024;

const cache_budget &budget() {
    static const cache_budget b = budget_of(machine_caches());
    return b;
}

// K block: mr rows of A and an NR-wide panel of B within the L1 budget.
dim_t block_kc(dim_t mr, dim_t NR) {
    return std::max<dim_t>(16, (budget().l1_panel / 4) / (mr + NR));
}

dim_t block_nc(dim_t N, dim_t NR) {
    return std::max(NR, std::min(round_up(std::max<dim_t>(N, 1), NR), max_nc / NR * NR));
}
// Row blocks: the f32 block of C within the L2 budget; all of M when a unit accumulates in the
// user's tensor (no block), so each packed B block serves every row. (The user's ConvTranspose3d
// 50 -> 1, M = 200: B, 50 x 784 gathered from its strided weights, was packed once per block of
// 70 rows, and its packing cost more than the products.)
dim_t block_mc(dim_t M, dim_t mr, dim_t nc, bool c_block) {
    const dim_t max_block = budget().l2_block / 4;  // floats
    const dim_t all = round_up(std::max<dim_t>(M, 1), mr);
    return c_block ? std::max(mr, std::min(all, max_block / nc / mr * mr)) : all;
}

// Column blocks within C's runs where the blocks of nc columns cross their ends (NCX pixels:
// one run per image, 3136 of them for 56 x 56): the block shrunk to a divisor of the run
// length, preferably whole panels of NR (down to a quarter of nc: B's rows are then read in
// place), else whole vectors (down to half). A block crossing an image's end cannot accumulate
// in the user's C, and the f32 block of C that it takes instead bounds the row blocks
// (block_mc): ResNet-50 res2's 1x1 data gradient in NCX, 64 rows, packed all of its 51 MB B
// from memory once per block of 30 rows, three times.
void align_column_blocks(gemm_plan &pl, dim_t NR, int vlen) {
    if (pl.N <= pl.nc || gemm_column_blocks_are_runs(pl)) return;
    const dim_t run = pl.c.col_run[0], nc = pl.nc;
    if (run < 2 * dim_t(vlen) || pl.N % run != 0) return;
    for (const auto &[step, lowest] : {std::pair{NR, nc / 4}, std::pair{dim_t(vlen), nc / 2}})
        for (dim_t d = nc / step * step; d >= std::max(step, lowest); d -= step)
            if (run % d == 0) {
                pl.nc = d;
                if (gemm_column_blocks_are_runs(pl)) return;
                pl.nc = nc;
            }
}

// Whether the units can accumulate in the user's C (gemm_c_in_place, and the columns of each
// block one run): f32, or bf16/f16 with all of K in one block (the microkernel rounds it there).
bool c_unblocked(bool c_in_place, data_type dt, dim_t K, dim_t kc, bool column_runs) {
    return c_in_place && column_runs && (dt == data_type::f32 || K <= kc);
}

// `c_in_place`: the problem lets C be the user's tensor (no bias, no prefill: gemm_c_in_place).
// `widens`: bf16/f16 operands are widened as they are packed (charged, see e.pack).
gemm_estimate estimate(const axis_tables &t, const product &pr, bool transposed, int nv, int vlen,
                       int nregs, dim_t K, data_type dt, bool c_in_place, bool widens) {
    gemm_estimate e;
    e.transposed = transposed;
    e.nv = nv;
    e.mr = ukernel_rows_that_fit(nregs, nv);
    const int m_ax = transposed ? pr.n : pr.m, n_ax = transposed ? pr.m : pr.n;
    const dim_t M = t.len[m_ax], N = t.len[n_ax], NR = dim_t(nv) * vlen;
    const dim_t mr = std::max<dim_t>(1, std::min<dim_t>(e.mr, M));
    const dim_t nc = block_nc(N, NR), kc = block_kc(mr, NR);
    const gemm_tensor ct = tensor_of(m_ax, n_ax);
    const bool runs = t.avg_run[n_ax][slot(t, n_ax, ct)] >= double(std::min(N, nc));
    const dim_t mc = block_mc(M, mr, nc, !c_unblocked(c_in_place, dt, K, kc, runs));
    e.fma = double(M) * double(div_up(N, NR) * nv) * double(K) / 2.0 / tile_efficiency(mr, nv);
    // Per microkernel call: its C tile read and written, pointers set up; it matters when K is
    // short (a K of 1 is an outer product, bound by the C traffic).
    e.fma += double(div_up(M, mr) * div_up(N, NR) * div_up(std::max<dim_t>(K, 1), kc)) *
             double(2 * mr * nv + 12);
    // Copy cost of operand X[a][b] copied along b.
    auto cost = [&](int a, int b) {
        const gemm_tensor x = tensor_of(a, b);
        return copy_cost(t.avg_run[b][slot(t, b, x)], t.avg_run[a][slot(t, a, x)], vlen);
    };
    // A (M x K) is read in place when it is f32 with k contiguous, else copied once per column
    // block of C; B (K x N) is packed once per row block.
    const gemm_tensor at = tensor_of(m_ax, pr.k);
    // (The packer reads A in place only when a whole K block is one run.)
    const bool a_in_place = dt == data_type::f32 &&
                            t.avg_run[pr.k][slot(t, pr.k, at)] >= double(std::min<dim_t>(K, kc));
    // bf16/f16 operands are widened as they are packed, at the rate the direct kernel's
    // estimate charges for its in-cache copies (direct_copy_cost). Without it the GEMM kernel
    // took f16 problems whose f32 twins it declined, where it was slower: FCN's x8
    // ConvTranspose data gradient (its A, the windows of a 520x520 image, 22M elements) 13.2-16.4
    // ms against 9.2-11.8 on the direct kernel (Zen 4, 2 threads). Not for bwd_weights (the
    // caller's `widens`): a bf16 weight gradient the GEMM kernel declines goes to
    // direct_bf16dot, which the f32 direct estimate does not model, and 3 of 4 random ones that
    // the charge moved there ran 1.5-3.8x slower (a fourth, 664 -> 8 channels, 6.0 -> 5.6 ms).
    const double widen = widens ? 4.0 / vlen : 0.0;
    const double a_copy = cost(m_ax, pr.k) + widen, b_pack = cost(pr.k, n_ax) + widen;
    e.pack = (a_in_place ? 0.0 : double(M) * double(K) * double(div_up(N, nc)) * a_copy) +
             double(K) * double(N) * double(div_up(M, mc)) * b_pack;
    // (An A in place beyond the L2 is read from memory again: about 0.4 cycles an element.)
    const double a_bytes = double(M) * double(K) * double(element_size(dt));
    e.a_again = a_in_place ? (a_bytes > double(machine_caches().l2) ? 0.4 : 0.0) : a_copy;
    e.b_again = b_pack;
    // C is stored once; contiguous rows store as vectors, other layouts element by element.
    e.store = double(M) * double(N) * cost(m_ax, n_ax);
    return e;
}

// Cycles per element of the direct kernel's copy of a data tensor (in, or for the output out):
// none for f32 with contiguous channels (read in place); bf16/f16 with contiguous channels are
// widened (rounded) by vectors per chunk, from and into cache, or, when one image's copies
// exceed the L2 budget (direct_plan::chunk_fits_l2), through memory: the f32 copy is written
// and read back. NCX is counted as element by element, like the GEMM kernel's copies of it.
// (Measured, 1 thread, f16: the vector conversion within L2 kept ResNet-50's 1x1 weight
// gradient on the direct kernel, 22 ms against the GEMM kernel's 33, where an element-by-element
// charge had chosen the GEMM kernel; 3-D U-Net's 10 MB images converted at about 2 cycles per
// element, and the GEMM kernel, converting per block, ran 1.2x faster there.)
// An input copied by rows of a big image (direct_plan::in_rows_copied) is streamed from memory
// once, its copy staying in L2: about 1 cycle per element (measured, f16, 2 threads: 0.6 on
// 3-D U-Net's up-convolution data gradient, 1.0 on ResNet-50's res3 projection).
double direct_copy_cost(data_type dt, const data_layout &l, bool fits_l2, int vlen,
                        bool by_rows = false) {
    if (l.c != 1) return 3.0 + 2.0 / vlen;
    if (dt == data_type::f32) return 0.0;
    return by_rows ? 1.0 : fits_l2 ? 4.0 / vlen : 2.0;
}

// The direct kernel's time on the same problem by the same measure: the channels of the output
// (fwd, bwd_weights: output channels; bwd_data: input channels) on the lanes, pixels (or, for
// bwd_weights, input channels; with few of them (tap, channel) pairs) as tile rows (the shared
// tiles cover only the interior rows: optimistic on small images), every tap of a stride phase
// computed for every output pixel of that phase (taps in padding on zeros), short reductions
// per tap, and copies of the data tensors that are not f32 with contiguous channels.
double direct_estimate(const conv_problem &p, int vlen, int nregs) {
    const bool bwd_d = p.dir == conv_direction::bwd_data,
               bwd_w = p.dir == conv_direction::bwd_weights;
    const dim_t lanes = bwd_d ? p.icg : p.ocg;
    const dim_t nvec = div_up(lanes, vlen);
    const int blk =
        bwd_w ? direct_max_nv(nregs) : direct_block_nv(direct_max_nv(nregs), vlen, lanes);
    const int nv = int(std::min<dim_t>(blk, nvec));  // the plan's tile
    const double lane_use = double(lanes) / double(nvec * vlen);
    const direct_plan pl = make_direct_plan(p, vlen, nregs, machine_caches(), true, true);
    // bwd_weights' tiles are rows (input channel), or with few channels rows (tap, channel) of
    // the taps along w, and along d and h too (direct_bwd_w_shares_hd).
    dim_t w_rows = p.icg;
    if (bwd_w) {
        w_rows *= std::min(p.k[2], direct_bwd_w_taps_along_w(pl));
        if (direct_bwd_w_shares_hd(pl)) w_rows *= p.k[0] * p.k[1];
    }
    const dim_t rows = bwd_w ? w_rows : bwd_d ? p.mb * p.isp() : p.mb * p.osp();
    const dim_t mr = std::max<dim_t>(1, std::min<dim_t>(ukernel_rows_that_fit(nregs, nv), rows));
    double useful = 1.0;
    if (bwd_d) {  // taps per phase run over every src pixel of the phase
        dim_t nph = 1;
        for (int x = 0; x < 3; ++x) nph *= std::min(p.s[x], p.i[x]);
        useful = std::min(1.0, double(p.osp()) * double(nph) / double(std::max<dim_t>(p.isp(), 1)));
    }
    // Each batch element (tap, or row for bwd_weights) of its microkernel reduces only this
    // many values, and costs a few cycles of pointer set-up and accumulator traffic on top.
    const dim_t kred = bwd_w   ? p.o[2]
                       : bwd_d ? p.ocg
                               : p.icg * (direct_flattens_w(pl) ? p.k[2] : 1);
    // (fwd/bwd_data load one pointer per tile row and batch element, and so does bwd_weights
    // for its src^T rows. Measured, 1 thread: DCGAN's 1x1-input projection's weight gradient,
    // one pixel per row, ran 1.9x slower on the direct kernel than on the GEMM kernel, where an
    // overhead of half a value per row had estimated it faster.)
    const double per_batch = double(kred) / (double(kred) + (bwd_w ? 2.0 : 3.0));
    const double macs = p.macs();
    double cycles = macs / vlen / 2.0 / (lane_use * tile_efficiency(mr, nv) * useful * per_batch);
    // bwd_weights also zeroes f32 partial weights, reduces them and stores them in the user's
    // layout: a few passes over the weights, from memory once they outgrow L2. With few pixels
    // that, not the FMAs, bounds the time. (Measured, 1 thread: 402 -> 715 channels, kernel 9,
    // one 31-pixel row: 4.3x slower than the GEMM kernel, which writes its C once, where an
    // estimate without these passes said 0.72x.)
    if (bwd_w) {
        const double wei = double(p.ksp()) * double(p.icg) * double(p.ocg) * double(p.g);
        cycles += wei * (4.0 * wei > double(machine_caches().l2) ? 1.5 : 0.5);
    }
    // (The copies stay in cache when an image is computed in chunks of rows; the input rows
    // that the windows of two chunks read are copied for each.)
    // (By rows, either the output is copied by rows and the input per image, or only the input
    // is copied, by rows: in_rows_copied.)
    const bool by_rows = pl.in_rows_copied,
               out_fits = pl.chunk_fits_l2 || (pl.out_rows_per_chunk > 0 && !by_rows),
               in_fits = pl.chunk_fits_l2 || by_rows;
    double in_copies = 1.0;
    if (by_rows) {
        const int X = pl.out_row_axis;
        const dim_t out_rows = bwd_d ? p.i[X] : p.o[X], in_rows = bwd_d ? p.o[X] : p.i[X];
        // At most 1024 chunks are visited and the rest scaled from them: an extent of 2^40 rows
        // (an empty batch, from fuzz_op) made this loop hang the compile.
        const dim_t R = std::max<dim_t>(pl.out_rows_per_chunk, 1),
                    nchunks = out_rows / R + (out_rows % R != 0);
        const dim_t visited = std::min<dim_t>(nchunks, 1024);
        dim_t copied = 0;
        for (dim_t c = 0; c < visited; ++c) {
            dim_t a0, a1;
            direct_input_rows(p, X, c * R, c * R + std::min(R, out_rows - c * R), &a0, &a1);
            copied += a1 - a0;
        }
        const double scale = double(nchunks) / double(std::max<dim_t>(visited, 1));
        in_copies = std::max(1.0, double(copied) * scale / double(std::max<dim_t>(in_rows, 1)));
    }
    // An output the microkernel rounds in place costs its conversion in registers only.
    const bool fwd = p.dir == conv_direction::fwd;
    const double rounded = 2.0 / vlen;
    cycles += double(p.mb * p.isp() * p.ic()) *
              (bwd_d && pl.out_rounded_in_kernel
                   ? rounded
                   : direct_copy_cost(p.dt, p.src, fwd ? in_fits : out_fits, vlen, fwd && by_rows) *
                         (fwd ? in_copies : 1.0));
    cycles +=
        double(p.mb * p.osp() * p.oc()) *
        (fwd && pl.out_rounded_in_kernel
             ? rounded
             : direct_copy_cost(p.dt, p.dst, fwd ? out_fits : in_fits, vlen, bwd_d && by_rows) *
                   (bwd_d ? in_copies : 1.0));
    return cycles / double(p.g);
}

// The estimated time of the GEMM kernel must be below this fraction of the direct kernel's:
// the direct kernel is tuned for the shapes it serves, and the estimates are rough.
constexpr double margin = 0.8;

// Whether the windows of a matrix-product problem read every src element (else bwd_data must
// set the others to the bias or zero): per axis, the taps of consecutive windows tile src.
bool windows_cover_src(const conv_problem &p) {
    for (int x = 0; x < 3; ++x) {
        const bool ok = p.k[x] == 1 ? (p.i[x] == p.o[x] && (p.s[x] == 1 || p.o[x] == 1))
                                    : (p.dl[x] == 1 && (p.s[x] == p.k[x] || p.o[x] == 1) &&
                                       p.o[x] * p.k[x] == p.i[x]);
        if (!ok) return false;
    }
    return true;
}

// bwd_data whose windows skip src elements first sets all of src (gemm_plan::prefill).
bool prefills_src(const conv_problem &p) {
    return p.dir == conv_direction::bwd_data && !windows_cover_src(p);
}
// The product adds a bias to C: fwd's to dst, bwd_data's (ConvTranspose's) to src.
bool adds_bias(const conv_problem &p) {
    return p.with_bias && (p.dir == conv_direction::fwd || p.dir == conv_direction::bwd_data);
}

struct choice {
    axis_tables t;
    bool tap_major = true;
    gemm_estimate best;
    double tiles_cost = 0;
    double direct = 0;
};

// The tile kernel's cost of a mapping, per element of each operand by how its packer reads it
// (kernels/amx/amx_gemm.cpp): rows of runs are copied, runs along the rows are transposed as
// pairs, anything else goes element by element; C is also accumulated and stored.
double tiles_cost(const axis_tables &t, const std::vector<dim_t> &v, const product &pr, bool tr) {
    const int m = tr ? pr.n : pr.m, n = tr ? pr.m : pr.n, k = pr.k;
    auto cost = [&](int r, int c) {
        const gemm_tensor x = tensor_of(r, c);
        const dim_t col_run = v[size_t(t.run[c][slot(t, c, x)])];
        const dim_t row_run = v[size_t(t.run[r][slot(t, r, x)])];
        const double per = col_run >= std::min<dim_t>(t.len[c], 32)   ? 1.0
                           : row_run >= std::min<dim_t>(t.len[r], 32) ? 2.0
                                                                      : 6.0;
        return per * double(t.len[r]) * double(t.len[c]);
    };
    return cost(m, k) + cost(k, n) + 2.0 * cost(m, n);
}

// `p` is the problem over src's padded copy when `pad.needed` (the direct kernel's estimate is
// of the problem as given, `user`).
choice choose(const conv_problem &user, const gemm_padded_src &pad, int vlen, int nregs,
              gemm_mapping mapping, std::vector<dim_t> &storage) {
    const conv_problem &p = pad.p;
    choice c;
    c.direct = direct_estimate(user, vlen, nregs);
    const product pr = natural(p.dir);
    // (As gemm_c_in_place: no bias added by the product, no prefill of src.)
    const bool c_in_place = !adds_bias(p) && !prefills_src(p);
    bool first = true;
    for (bool tap_major : {true, false}) {
        if (!tap_major && p.ksp() == 1) break;  // the same tables
        std::vector<dim_t> v;
        const axis_tables t = build_tables(p, tap_major, v);
        const dim_t K = t.len[pr.k];
        for (bool tr : {false, true})
            for (int nv = 1; nv <= 4; ++nv) {
                const gemm_estimate e =
                    estimate(t, pr, tr, nv, vlen, nregs, K, p.dt, c_in_place,
                             p.dt != data_type::f32 && p.dir != conv_direction::bwd_weights);
                // Tiles: the cheapest packing, then the f32 estimate among equals.
                const double tc = mapping == gemm_mapping::tiles ? tiles_cost(t, v, pr, tr) : 0;
                if (first || tc < c.tiles_cost ||
                    (tc == c.tiles_cost && e.total() < c.best.total())) {
                    first = false;
                    c.best = e;
                    c.tiles_cost = tc;
                    c.tap_major = tap_major;
                }
            }
    }
    c.t = build_tables(p, c.tap_major, storage);
    // The padded copy: zeros and copied channels runs (NXC) or rows (NCX) as memcpy; a user
    // tensor whose channels are strided is read element by element into a channels-last copy.
    if (pad.needed)
        c.best.pack += double(pad.elems) * (user.src.c == 1 || !pad.nxc ? 0.5 : 3.0) / double(p.g);
    // bwd_data whose windows skip src elements first sets all of src, element by element.
    if (prefills_src(p)) c.best.store += 3.0 * double(p.mb * p.isp() * p.icg);
    return c;
}

std::string fmt(double x) {
    char b[32];
    std::snprintf(b, sizeof b, "%.3g", x);
    return b;
}

}  // namespace

gemm_padded_src padded_src_of(const conv_problem &p) {
    gemm_padded_src r;
    r.p = p;
    if (p.dir == conv_direction::bwd_data) return r;
    // Extents of the copy along each axis: from the first window's start (padding included) to
    // the last window's end. In double first: the products may not fit in 64 bits.
    double ext[3], img = double(p.ic());  // elements of one image's copy
    for (int x = 0; x < 3; ++x) {
        const double e =
            double(p.o[x] - 1) * double(p.s[x]) + double(p.k[x] - 1) * double(p.dl[x]) + 1.0;
        ext[x] = p.o[x] == 0 ? 0.0 : e;
        if (p.pb[x] > 0 || ext[x] - double(p.pb[x]) > double(p.i[x])) r.needed = true;
        img *= std::max(ext[x], 1.0);
    }
    if (!r.needed) return r;
    const double elems = img * double(p.mb);
    for (int x = 0; x < 3; ++x)
        if (p.pb[x] < 0) {
            r.why_not = "a negative begin padding: the windows start inside src";
            return r;
        }
    // At most twice src's elements (and within conv_problem::scratch_bound, which counts two f32
    // copies of src), plus a little for tiny tensors.
    const double src_elems = double(p.mb) * double(p.ic()) * double(p.isp());
    if (elems > 2.0 * src_elems + double(1 << 16)) {
        r.why_not = "its zero-padded copy of src would hold " + fmt(elems) +
                    " elements, more than twice src's " + fmt(src_elems);
        return r;
    }
    // (The copy's strides and size as 64-bit integers: an empty batch does not bound them.)
    if (img > 0x1p60 || elems > 0x1p60) {
        r.why_not = "its zero-padded copy of src would be too large to address";
        return r;
    }
    conv_problem &q = r.p;
    r.nxc = p.src.c == 1 || p.ic() == 1;
    r.elems = dim_t(elems);
    const dim_t C = p.ic();
    dim_t e[3];
    for (int x = 0; x < 3; ++x) {
        e[x] = std::max<dim_t>(dim_t(ext[x]), 1);
        q.i[x] = e[x];
        q.pb[x] = 0;
        q.pe[x] = 0;
    }
    if (r.nxc)
        q.src = {e[0] * e[1] * e[2] * C, 1, {e[1] * e[2] * C, e[2] * C, C}};
    else
        q.src = {C * e[0] * e[1] * e[2], e[0] * e[1] * e[2], {e[1] * e[2], e[2], 1}};
    return r;
}

std::string gemm_shape_why_not(const conv_problem &p) {
    if (p.dir != conv_direction::bwd_data) return padded_src_of(p).why_not;
    return gemm_disjoint_why_not(p);
}

std::string gemm_disjoint_why_not(const conv_problem &p) {
    static const char *ax[3] = {"d", "h", "w"};
    for (int x = 3 - p.nsp; x < 3; ++x) {
        const dim_t ke = (p.k[x] - 1) * p.dl[x] + 1;
        const std::string a = std::string(" along ") + ax[x];
        if (p.pb[x] != 0) return "not a matrix product: begin padding" + a;
        if (p.o[x] > 1 && p.s[x] < ke)
            return "not a matrix product: kernel windows overlap" + a + " (extent " +
                   std::to_string(ke) + " > stride " + std::to_string(p.s[x]) + ")";
        if ((p.o[x] - 1) * p.s[x] + ke > p.i[x])
            return "not a matrix product: windows reach the end padding" + a;
    }
    return {};
}

std::string gemm_tables_why_not(const conv_problem &p) {
    // The offset tables hold a few entries per pixel, (input channel, tap) and output channel:
    // a problem whose tables alone would be huge is left to the direct kernel, which needs none
    // (found by fuzz_op: a 343 GB reserve while dispatching).
    const double entries =
        5.0 * (double(p.mb) * double(p.osp()) + double(p.icg) * double(p.ksp()) + double(p.ocg));
    constexpr double max_table_entries = double(1 << 26);
    if (entries > max_table_entries)
        return "its offset tables would hold " + fmt(entries) + " entries, above the limit of 2^26";
    return {};
}

std::string gemm_why_not(const conv_problem &p, int vlen, int nregs, double direct_speedup) {
    std::string why = gemm_shape_why_not(p);
    if (why.empty()) why = gemm_tables_why_not(p);
    if (!why.empty()) return why;
    std::vector<dim_t> storage;
    const choice c = choose(p, padded_src_of(p), vlen, nregs, gemm_mapping::f32_registers, storage);
    const double direct = c.direct / direct_speedup;
    if (c.best.total() < margin * direct) return {};
    return "the direct kernel is estimated faster: " + fmt(direct) + " cycles per group vs " +
           fmt(c.best.total()) + " for the best matrix-product mapping (" +
           (c.best.transposed ? "transposed, " : "") + std::to_string(c.best.mr) + "x" +
           std::to_string(c.best.nv) + " vectors)";
}

// The most rows any thread gets from M rows in blocks of mc, the blocks split statically.
static dim_t max_thread_rows(dim_t M, dim_t mc, int nthr) {
    const dim_t blocks = div_up(M, mc);
    dim_t most = 0;
    for (int t = 0; t < nthr; ++t) {
        int64_t s, e;
        balance211(blocks, nthr, t, s, e);
        most = std::max(most, std::min(M, e * mc) - std::min(M, s * mc));
    }
    return most;
}

dim_t equal_row_blocks(dim_t M, dim_t mc, dim_t mc_cached, dim_t mr, int nthr) {
    // (The fewest blocks, a multiple of the threads, of at most mc_cached rows.)
    const dim_t equal = div_up(M, round_up(div_up(M, mc_cached), dim_t(nthr)));
    // (Worth it from half a tile less on the busiest thread: each block's short tile costs.)
    return max_thread_rows(M, equal, nthr) + mr / 2 < max_thread_rows(M, mc, nthr) ? equal : mc;
}

gemm_plan make_gemm_plan(const conv_problem &user, int vlen, int nregs, std::vector<dim_t> &tables,
                         gemm_mapping mapping) {
    gemm_plan pl;
    pl.user = user;
    pl.pad = padded_src_of(user);
    pl.p = pl.pad.p;
    const conv_problem &p = pl.p;
    pl.vlen = vlen;
    const choice c = choose(user, pl.pad, vlen, nregs, mapping, tables);
    pl.est = c.best;
    pl.direct_estimate = c.direct;
    const axis_tables &t = c.t;
    const product nat = natural(p.dir);
    const int m_ax = c.best.transposed ? nat.n : nat.m, n_ax = c.best.transposed ? nat.m : nat.n,
              k_ax = nat.k;
    const dim_t *base = tables.data();
    auto operand = [&](int r, int col) {
        gemm_operand o;
        o.t = tensor_of(r, col);
        const int sr = slot(t, r, o.t), sc = slot(t, col, o.t);
        o.row = base + t.off[r][sr];
        o.row_run = base + t.run[r][sr];
        o.col = base + t.off[col][sc];
        o.col_run = base + t.run[col][sc];
        o.gstride = o.t == gemm_tensor::src   ? p.icg * p.src.c
                    : o.t == gemm_tensor::dst ? p.ocg * p.dst.c
                                              : p.ocg * p.wei.oc;
        return o;
    };
    pl.a = operand(m_ax, k_ax);
    pl.b = operand(k_ax, n_ax);
    pl.c = operand(m_ax, n_ax);
    pl.M = t.len[m_ax];
    pl.N = t.len[n_ax];
    pl.K = t.len[k_ax];
    pl.nv = c.best.nv;
    pl.mr = c.best.mr;
    const dim_t NR = dim_t(pl.nv) * vlen, mr = pl.mr;
    pl.kc = std::max<dim_t>(16, block_kc(mr, NR) / 16 * 16);
    pl.kc = std::max<dim_t>(1, std::min(pl.kc, pl.K));
    pl.nc = block_nc(pl.N, NR);
    align_column_blocks(pl, NR, vlen);
    // bwd_data writes src; the elements no window reads are not written by the product.
    pl.prefill = prefills_src(p);
    const bool bias = adds_bias(p);
    pl.c_block = !c_unblocked(!bias && !pl.prefill && pl.K > 0, p.dt, pl.K, pl.kc,
                              gemm_column_blocks_are_runs(pl));
    pl.mc = block_mc(pl.M, mr, pl.nc, pl.c_block);
    pl.nthr = threads_for(p.macs());
    const dim_t mc_cached = pl.mc;  // (the block the caches allow, before the threads' split)
    auto units = [&] { return p.g * div_up(pl.M, pl.mc) * div_up(pl.N, pl.nc); };
    // Enough blocks for the threads: A (M x K) is read again for each column block, B (K x N)
    // packed again for each row block, so the side whose extra blocks cost less is split first
    // (by the estimate's costs per element); a K split (partial sums) only when that is not
    // enough. (Column blocks first everywhere: ResNet-50's 1x1 stride-2 projection, 6272 rows of
    // 256 x 512, read its A from memory 4 times in 128-column blocks on 2 threads: 8.4 ms
    // against 5.7 on the direct kernel, where 1 thread took 9.5 against 9.1. Rows first by
    // M > N alone: its NCX weight gradient, 512 x 256 with B an NCX src transposed as it is
    // packed, packed all of B for each of 4 row blocks: 9.2-9.9 -> 19.3-20.6 ms.)
    auto split_columns = [&] {
        while (units() < 2 * pl.nthr && pl.nc > NR && pl.nc / 2 >= 64) {
            pl.nc = round_up(pl.nc / 2, NR);
            align_column_blocks(pl, NR, vlen);
        }
    };
    auto split_rows = [&] {
        while (units() < 2 * pl.nthr && pl.mc > 2 * mr) pl.mc = round_up(pl.mc / 2, mr);
    };
    // A C that is one f32 block (rows and columns) over a long K (a weight gradient: C is the
    // weights, K the pixels) is split along K first: each part packs its own K range of B
    // once, where row blocks each pack all of B again. (NCX, 2 threads, Zen 5, 3 alternated
    // rounds: DCGAN 128 -> 3's ConvTranspose weight gradient, C 128 x 48 over 32768 pixels,
    // 1.69-1.83x in f32, bf16 and f16; ResNet-50 res2's 1x1, 256 x 64, 1.36x; wav2vec2's first
    // layer in bf16/f16 1.2x. A C beyond one block, whose rows a K split then cuts into blocks
    // of the f32 block's budget, ran slower: res3's projection, 512 x 256, 0.44x.)
    const bool k_first = pl.nthr > 1 && units() < 2 * pl.nthr && pl.K >= 8 * pl.kc * pl.nthr &&
                         pl.nc >= pl.N &&
                         block_mc(pl.M, mr, pl.nc, true) >= round_up(std::max<dim_t>(pl.M, 1), mr);
    if (k_first) {
        pl.ksplit = pl.nthr;
    } else {
        if (double(pl.M) * pl.est.a_again > double(pl.N) * pl.est.b_again) split_rows();
        split_columns();
        split_rows();
        if (units() < 2 * pl.nthr && pl.nthr > 1 && pl.K >= 2 * pl.kc) pl.ksplit = pl.nthr;
    }
    // Row blocks of whole tiles give the threads unequal rows when the tiles do not divide
    // among them: the user's ConvTranspose3d 50 -> 1's data gradient, 200 rows in tiles of 14
    // on 2 threads, had blocks of 56 rows, 112 and 88 a thread. Where the rows are the only
    // split, one block a thread of equal rows (or a multiple of the threads, if one a thread
    // exceeds the block the caches allowed) ends with a short tile each instead: that layer
    // 0.125 -> 0.105 ms (Zen 4, 2 threads; blocks of 50 rows, four, 0.114: each packs B).
    if (pl.nthr > 1 && p.g == 1 && pl.ksplit == 1 && div_up(pl.N, pl.nc) == 1 &&
        pl.mc < mc_cached && pl.M > pl.mc)
        pl.mc = equal_row_blocks(pl.M, pl.mc, mc_cached, mr, pl.nthr);
    // (Narrower column blocks are still runs of the rows that were; a K split keeps blocks.)
    if (!pl.c_block && (pl.ksplit > 1 || !gemm_column_blocks_are_runs(pl))) {
        pl.c_block = true;
        pl.mc = std::min(pl.mc, block_mc(pl.M, mr, pl.nc, true));
    }
    // A C in place far beyond the caches (2 groups of 1 -> 312 channels, kernel 12, 479 MB of
    // dst): with all of M in one block, each column block of each group swept the whole of C,
    // every line read for ownership and written back in pieces, 70 ms against oneDNN's 19.
    // Row blocks whose C rows (every group and column) fit half the L2 then go out whole, and
    // streamed.
    const double c_bytes = 4.0 * double(p.g) * double(pl.M) * double(pl.N);
    if (!pl.c_block && p.dt == data_type::f32 &&
        output_streams_past_caches(c_bytes, pl.nthr, machine_caches())) {
        const double row_bytes = 4.0 * double(p.g) * double(pl.N);
        const dim_t rows = dim_t(std::max(double(mr), double(machine_caches().l2) / 2 / row_bytes));
        pl.mc = std::min(pl.mc, std::max<dim_t>(16 * mr, rows / mr * mr));
        pl.stream_c = pl.kc >= pl.K;
    }
    pl.mblocks = div_up(pl.M, pl.mc);
    pl.nblocks = div_up(pl.N, pl.nc);
    if (bias) {
        const int bias_ax = p.dir == conv_direction::fwd ? ax_o : ax_i;
        pl.bias_axis = bias_ax == m_ax ? 0 : 1;
        pl.bias_ch = base + t.bias_ch;
        pl.bias_chg = p.dir == conv_direction::fwd ? p.ocg : p.icg;
    }
    return pl;
}

std::string gemm_pairs_operands_why_not(const gemm_plan &pl) {
    dim_t stride;
    const bool a_rows =
        pl.K == 0 || pl.a.col_run[0] >= pl.K ||
        (pl.M > 0 && pl.a.row_run[0] >= pl.M && uniform_steps(pl.a.col, pl.K, stride));
    if (!a_rows)
        return "A (" + std::string(tensor_name(pl.a.t)) +
               ") has k neither contiguous nor in even steps over contiguous rows: its bf16 pairs "
               "would be copied element by element";
    if (!uniform_steps(pl.b.row, pl.K, stride) || !uniform_steps(pl.b.col, pl.N, stride))
        return "B (" + std::string(tensor_name(pl.b.t)) +
               ") is not in even steps along k and n: its VNNI pairs would be packed element by "
               "element";
    return {};
}

std::string describe(const gemm_plan &pl) {
    auto name = [&](const gemm_operand &o) { return std::string(tensor_name(o.t)); };
    // C in the user's tensor when every column block is one run (gemm_c_in_place).
    const bool runs = gemm_c_in_place(pl) && gemm_column_blocks_are_runs(pl);
    const std::string c_how = !runs                       ? ""
                              : pl.p.dt == data_type::f32 ? " output=in place"
                                                          : " output=rounded in place";
    std::string s = "C=" + name(pl.c) + "[" + std::to_string(pl.M) + "x" + std::to_string(pl.N) +
                    "] A=" + name(pl.a) + " B=" + name(pl.b) + " K=" + std::to_string(pl.K) +
                    " groups=" + std::to_string(pl.p.g) + (pl.est.transposed ? " transposed" : "") +
                    " tile=" + std::to_string(pl.mr) + "x" + std::to_string(pl.nv * pl.vlen) +
                    " mc=" + std::to_string(pl.mc) + " nc=" + std::to_string(pl.nc) +
                    " kc=" + std::to_string(pl.kc) + " ksplit=" + std::to_string(pl.ksplit) +
                    (pl.prefill ? " prefill" : "") + c_how +
                    (pl.stream_c ? " streamed past the caches" : "") +
                    (pl.pad.needed ? " src_padded_copy=" + std::to_string(pl.pad.elems) : "") +
                    " est=" + fmt(pl.est.total()) + " (fma " + fmt(pl.est.fma) + ", pack " +
                    fmt(pl.est.pack) + ", store " + fmt(pl.est.store) +
                    ") direct_est=" + fmt(pl.direct_estimate) +
                    " caches: " + to_string(machine_caches());
    (void)axis_name;
    return s;
}

}  // namespace convgrad::detail
