#include "kernels/amx/amx_gemm.hpp"

#include <algorithm>
#include <cstring>

#include "kernels/amx/amx_bwd_weights.hpp"  // amx_dot_of
#include "kernels/amx/amx_conv_kernels.hpp"
#include "kernels/amx/amx_elements.hpp"
#include "kernels/amx/amx_pair_ops.hpp"
#include "kernels/pack/padded_src.hpp"
#include "threading/parallel.hpp"
#include "threading/scratch_cache.hpp"

namespace convgrad::detail::amx {
namespace {

constexpr int64_t tile_cols = 32;  // C columns (and rows) of one microkernel call
constexpr int64_t b_ld = 2 * tile_cols;
constexpr int64_t max_kc = 1024;  // K block: a strip of A (32 x kc) stays near L1, B's in L2
constexpr int64_t max_mc = 128, max_nc = 256;

int64_t round_up(int64_t x, int64_t m) {
    return (x + m - 1) / m * m;
}

// Where the packers read: the operand's tensor, its type, and whether its elements already
// have the tiles' type (copied as bits).
struct source {
    data_type dt;
    const void *base;
    amx_dot dot;
    bool same() const {
        return (dt == data_type::bf16 && dot == amx_dot::bf16) ||
               (dt == data_type::f16 && dot == amx_dot::f16);
    }
    const uint16_t *bits(dim_t off) const { return static_cast<const uint16_t *>(base) + off; }
};

// n consecutive elements at `off`, in the tiles' type.
void narrow_run(const source &s, dim_t off, dim_t n, uint16_t *out) {
    if (s.same()) {
        std::memcpy(out, s.bits(off), size_t(n) * sizeof(uint16_t));
        return;
    }
    for (dim_t j = 0; j < n; ++j) out[j] = narrow_element(s.dt, s.base, off + j, s.dot);
}

// n elements at off + col[j] (col_run: runs of consecutive offsets), in the tiles' type.
void narrow_runs(const source &s, dim_t off, const dim_t *col, const dim_t *run, dim_t n,
                 uint16_t *out) {
    for (dim_t j = 0; j < n;) {
        const dim_t len = std::min(run[j], n - j);
        narrow_run(s, off + col[j], len, out + j);
        j += len;
    }
}

// K of a block as the microkernel runs it: whole tile steps, the packers writing zeros in both
// operands past kcnt (a step's tail would make every call store C, load the tail's tile
// configuration and reload C; zeros times zeros add nothing, whatever the other values).
int64_t stepped_k(int64_t kcnt) {
    return round_up(kcnt, k_step);
}

// A rows [m, m + rows) x k [k0, k0 + kcnt) as rows of `lda` elements, zero from kcnt to
// stepped_k(kcnt). `tmp` holds 16 rows of 2 * tile_cols elements.
void pack_a(const gemm_operand &a, const source &s, dim_t goff, dim_t m, int rows, dim_t k0,
            dim_t kcnt, uint16_t *dst, int64_t lda, const pair_ops &ops, uint16_t *tmp) {
    if (a.col_run[k0] >= kcnt) {  // k contiguous: a run per row
        for (int r = 0; r < rows; ++r)
            narrow_run(s, goff + a.row[m + r] + a.col[k0], kcnt, dst + r * lda);
    } else if (a.row_run[m] >= rows && s.same() && kcnt >= 2) {
        // Rows contiguous, k strided (A is a transposed view: the weight gradient's pixels on
        // K): pairs of k interleaved along the rows, then 16 pairs at a time transposed as
        // 32-bit words into the rows.
        const dim_t pairs = kcnt / 2;
        const uint32_t *words[16];
        for (dim_t q0 = 0; q0 < pairs; q0 += 16) {
            const int nq = int(std::min<dim_t>(16, pairs - q0));
            for (int q = 0; q < nq; ++q) {
                const dim_t k = k0 + 2 * (q0 + q);
                ops.interleave(s.bits(goff + a.row[m] + a.col[k]),
                               s.bits(goff + a.row[m] + a.col[k + 1]), rows, tmp + q * b_ld);
                words[q] = reinterpret_cast<const uint32_t *>(tmp + q * b_ld);
            }
            ops.transpose_words(words, nq, rows, reinterpret_cast<uint32_t *>(dst) + q0, lda / 2);
        }
        if (kcnt & 1)
            for (int r = 0; r < rows; ++r)
                dst[r * lda + kcnt - 1] = *s.bits(goff + a.row[m + r] + a.col[k0 + kcnt - 1]);
    } else {
        for (int r = 0; r < rows; ++r)
            narrow_runs(s, goff + a.row[m + r], a.col + k0, a.col_run + k0, kcnt, dst + r * lda);
    }
    for (int r = 0; r < rows; ++r)
        std::fill(dst + r * lda + kcnt, dst + r * lda + stepped_k(kcnt), uint16_t(0));
}

// pack_b when B's columns are not one run.
void pack_b_strided(const gemm_operand &b, const source &s, dim_t goff, dim_t k0, dim_t kcnt,
                    dim_t n, int cols, uint16_t *dst, const pair_ops &ops) {
    const dim_t full = b.row_run[k0] >= kcnt && s.same() ? kcnt / 2 : 0;
    if (full > 0) {  // k contiguous per column: each pair is a 32-bit word, transposed
        const uint32_t *words[16];
        for (int j0 = 0; j0 < cols; j0 += 16) {
            const int nj = std::min(16, cols - j0);
            for (int j = 0; j < nj; ++j)
                words[j] = reinterpret_cast<const uint32_t *>(
                    s.bits(goff + b.col[n + j0 + j] + b.row[k0]));
            ops.transpose_words(words, nj, full, reinterpret_cast<uint32_t *>(dst) + j0, b_ld / 2);
        }
    }
    // The rest element by element (the last pair of odd kcnt, or all of it).
    for (dim_t k = 2 * full; k < round_up(kcnt, 2); ++k) {
        uint16_t *pairs = dst + (k / 2) * b_ld + (k & 1);
        for (int j = 0; j < cols; ++j)
            pairs[2 * j] =
                k < kcnt ? narrow_element(s.dt, s.base, goff + b.row[k0 + k] + b.col[n + j], s.dot)
                         : uint16_t(0);
    }
}

// B k [k0, k0 + kcnt) x columns [n, n + cols) (cols <= 32) as VNNI pairs [kp / 2][b_ld], rows
// from kcnt to stepped_k(kcnt) zero. `tmp` holds 3 * tile_cols elements.
void pack_b(const gemm_operand &b, const source &s, dim_t goff, dim_t k0, dim_t kcnt, dim_t n,
            int cols, uint16_t *dst, const pair_ops &ops, uint16_t *tmp) {
    uint16_t *lo = tmp, *hi = tmp + tile_cols, *zeros = tmp + 2 * tile_cols;
    std::fill(zeros, zeros + cols, uint16_t(0));
    if (b.col_run[n] >= cols) {  // columns contiguous: rows k, k + 1 interleaved
        for (dim_t k = 0; k < kcnt; k += 2) {
            const dim_t r0 = goff + b.row[k0 + k] + b.col[n];
            const uint16_t *l = s.same() ? s.bits(r0) : (narrow_run(s, r0, cols, lo), lo);
            const uint16_t *h = zeros;
            if (k + 1 < kcnt) {
                const dim_t r1 = goff + b.row[k0 + k + 1] + b.col[n];
                h = s.same() ? s.bits(r1) : (narrow_run(s, r1, cols, hi), hi);
            }
            ops.interleave(l, h, cols, dst + (k / 2) * b_ld);
        }
    } else {
        pack_b_strided(b, s, goff, k0, kcnt, n, cols, dst, ops);
    }
    const int64_t k_even = round_up(kcnt, 2);
    std::fill(dst + (k_even / 2) * b_ld, dst + (stepped_k(kcnt) / 2) * b_ld, uint16_t(0));
}

// C rows [m0, m0 + mcnt) x columns [n0, n0 + ncnt) from the f32 block (rows ld apart) into the
// output, plus the bias, rounded once.
void store_c(const gemm_amx_plan &pl, void *out, dim_t g, dim_t m0, dim_t mcnt, dim_t n0,
             dim_t ncnt, float *blk, dim_t ld, const float *bias) {
    const gemm_plan &gp = pl.g;
    const gemm_operand &c = gp.c;
    const dim_t goff = g * c.gstride;
    if (bias) {
        const float *bg = bias + g * gp.bias_chg;
        for (dim_t r = 0; r < mcnt; ++r) {
            float *row = blk + r * ld;
            if (gp.bias_axis == 0) {
                const float v = bg[gp.bias_ch[m0 + r]];
                for (dim_t n = 0; n < ncnt; ++n) row[n] += v;
            } else {
                for (dim_t n = 0; n < ncnt; ++n) row[n] += bg[gp.bias_ch[n0 + n]];
            }
        }
    }
    c_rows cr;
    cr.dt = gp.p.dt;
    cr.out = out;
    cr.rows = 1;
    if (c.col_run[n0] < ncnt && c.row_run[m0] >= mcnt && mcnt > 1) {
        // C's rows are consecutive in memory and its columns are not (NCX pixels as rows):
        // each column of the block is gathered, then stored as runs of 32.
        float col[tile_cols];
        cr.C = col;
        for (dim_t n = 0; n < ncnt; ++n)
            for (dim_t r = 0; r < mcnt; r += tile_cols) {
                cr.cols = int(std::min(tile_cols, mcnt - r));
                for (int x = 0; x < cr.cols; ++x) col[x] = blk[(r + x) * ld + n];
                cr.base = goff + c.row[m0 + r] + c.col[n0 + n];
                finish_rows(pl.backend, cr);
            }
        return;
    }
    // Rows one stride apart (pixels of NXC data, channels of weights): 32 rows at a time.
    const dim_t stride = mcnt > 1 ? c.row[m0 + 1] - c.row[m0] : 0;
    bool uniform = true;
    for (dim_t r = 2; r < mcnt && uniform; ++r)
        uniform = c.row[m0 + r] - c.row[m0 + r - 1] == stride;
    if (uniform && c.col_run[n0] >= ncnt) {
        cr.ldc = ld;
        cr.row_stride = stride;
        for (dim_t r = 0; r < mcnt; r += tile_cols)
            for (dim_t n = 0; n < ncnt; n += tile_cols) {
                cr.C = blk + r * ld + n;
                cr.rows = int(std::min(tile_cols, mcnt - r));
                cr.cols = int(std::min(tile_cols, ncnt - n));
                cr.base = goff + c.row[m0 + r] + c.col[n0 + n];
                finish_rows(pl.backend, cr);
            }
        return;
    }
    for (dim_t r = 0; r < mcnt; ++r) {
        const float *row = blk + r * ld;
        const dim_t roff = goff + c.row[m0 + r];
        for (dim_t n = 0; n < ncnt;) {
            // Runs of consecutive columns, 32 at a time, by the backend's conversions.
            const dim_t len = std::min({c.col_run[n0 + n], ncnt - n, tile_cols});
            cr.C = row + n;
            cr.cols = int(len);
            cr.base = roff + c.col[n0 + n];
            finish_rows(pl.backend, cr);
            n += len;
        }
    }
}

// bwd_data whose windows do not read every src element: those are the bias (or zero).
void prefill(const gemm_amx_plan &pl, void *out, const float *bias) {
    const conv_problem &p = pl.g.p;
    const data_layout &l = p.src;
    const dim_t rows = p.mb * p.ic();
    parallel(pl.nthr, [&](int ithr, int nthr) {
        dim_t s, e;
        balance211(rows, nthr, ithr, s, e);
        for (dim_t r = s; r < e; ++r) {
            const dim_t c = r % p.ic(), n = r / p.ic();
            const float v = bias ? bias[c] : 0.f;
            for (dim_t d = 0; d < p.i[0]; ++d)
                for (dim_t h = 0; h < p.i[1]; ++h)
                    for (dim_t w = 0; w < p.i[2]; ++w)
                        store_element(p.dt, out,
                                      n * l.n + c * l.c + d * l.sp[0] + h * l.sp[1] + w * l.sp[2],
                                      v);
        }
    });
}

// Per thread: a strip of A, B's block of panels, C's block, and the packers' rows.
struct thread_scratch {
    int64_t lda, a, b, c, tmp;
    explicit thread_scratch(const gemm_amx_plan &pl)
        : lda(stepped_k(pl.kc)),
          a(tile_cols * lda),
          b(pl.nc / tile_cols * (stepped_k(pl.kc) / 2) * b_ld),
          c(pl.mc * pl.nc),
          tmp(16 * b_ld) {}
    double bytes() const { return 2.0 * (a + b + tmp) + 4.0 * c; }
};

}  // namespace

double gemm_amx_plan::scratch_bytes() const {
    const double bias = g.bias_axis >= 0 ? 4.0 * g.p.g * g.bias_chg : 0.0;
    const double copy = g.pad.needed ? double(g.pad.elems) * element_size(g.p.dt) : 0.0;
    return copy + bias + nthr * thread_scratch(*this).bytes();
}

std::string gemm_why_not(const conv_problem &p, amx_backend backend) {
    amx_dot dot;
    std::string why = amx_dot_of(p, dot);
    if (why.empty()) why = gemm_shape_why_not(p);
    if (why.empty()) why = gemm_tables_why_not(p);
    if (why.empty() && backend == amx_backend::native && !native_usable(dot))
        why = std::string("AMX not granted: ") + native_unusable_reason(dot);
    return why;
}

gemm_amx_plan plan_gemm(const conv_problem &p, amx_backend backend, std::vector<dim_t> &tables) {
    gemm_amx_plan pl;
    pl.g = make_gemm_plan(p, 16, 32, tables, gemm_mapping::tiles);
    pl.backend = backend;
    if (!amx_dot_of(p, pl.dot).empty())
        throw error(status::invalid_arguments, "AMX GEMM: not a bf16/f16 problem");
    const gemm_plan &g = pl.g;
    const int64_t kparts = std::max<int64_t>(1, (g.K + max_kc - 1) / max_kc);
    pl.kc = std::max<int64_t>(k_step, round_up((g.K + kparts - 1) / kparts, k_step));
    pl.mc = std::min(max_mc, round_up(std::max<int64_t>(g.M, 1), tile_cols));
    pl.nc = std::min(max_nc, round_up(std::max<int64_t>(g.N, 1), tile_cols));
    pl.nthr = threads_for(g.p.macs());
    auto units = [&] { return g.p.g * ((g.M + pl.mc - 1) / pl.mc) * ((g.N + pl.nc - 1) / pl.nc); };
    // Enough units for the threads: narrower column blocks first, then fewer rows.
    while (units() < 2 * pl.nthr && pl.nc > tile_cols) pl.nc = round_up(pl.nc / 2, tile_cols);
    while (units() < 2 * pl.nthr && pl.mc > tile_cols) pl.mc = round_up(pl.mc / 2, tile_cols);
    pl.nthr = int(std::max<int64_t>(1, std::min<int64_t>(pl.nthr, units())));
    pl.mblocks = (g.M + pl.mc - 1) / pl.mc;
    pl.nblocks = (g.N + pl.nc - 1) / pl.nc;
    return pl;
}

void run_gemm(const gemm_amx_plan &pl, const conv_args &args) {
    const gemm_plan &g = pl.g;
    const conv_problem &p = g.p;
    if (g.M == 0 || g.N == 0) return;
    const dim_t nbias = g.bias_axis >= 0 ? p.g * g.bias_chg : 0;
    scratch_buffer<float> bias{size_t(nbias)};
    load_elements(p.dt, args.bias, p.bias_stride, nbias, bias.data());
    const float *biasp = nbias ? bias.data() : nullptr;
    if (g.prefill) prefill(pl, args.out, biasp);

    const void *tensors[3] = {args.src, args.wei, args.dst};
    const source sa{p.dt, tensors[int(g.a.t)], pl.dot}, sb{p.dt, tensors[int(g.b.t)], pl.dot};
    const pair_ops &ops = pair_ops_for(pl.backend);
    const thread_scratch ts(pl);
    const dim_t units = p.g * pl.mblocks * pl.nblocks;
    parallel(
        pl.nthr,
        [&](int ithr, int nthr) {
            scratch_buffer<uint16_t> a(size_t(ts.a)), b(size_t(ts.b)), tmp(size_t(ts.tmp));
            scratch_buffer<float> c(size_t(ts.c));
            dim_t s, e;
            balance211(units, nthr, ithr, s, e);
            for (dim_t u = s; u < e; ++u) {
                const dim_t nb = u % pl.nblocks, mb = (u / pl.nblocks) % pl.mblocks;
                const dim_t gi = u / (pl.nblocks * pl.mblocks);
                const dim_t m0 = mb * pl.mc, mcnt = std::min(pl.mc, g.M - m0);
                const dim_t n0 = nb * pl.nc, ncnt = std::min(pl.nc, g.N - n0);
                // An empty K (the weight gradient of an empty batch) sums to zero.
                if (g.K == 0) std::fill(c.data(), c.data() + ts.c, 0.f);
                for (dim_t k0 = 0; k0 < g.K; k0 += pl.kc) {
                    const dim_t kcnt = std::min(pl.kc, g.K - k0);
                    const int64_t panel = (stepped_k(kcnt) / 2) * b_ld;
                    for (dim_t j = 0; j < ncnt; j += tile_cols)
                        pack_b(g.b, sb, gi * g.b.gstride, k0, kcnt, n0 + j,
                               int(std::min(tile_cols, ncnt - j)), b.data() + j / tile_cols * panel,
                               ops, tmp.data());
                    for (dim_t i = 0; i < mcnt; i += tile_cols) {
                        const int rows = int(std::min(tile_cols, mcnt - i));
                        pack_a(g.a, sa, gi * g.a.gstride, m0 + i, rows, k0, kcnt, a.data(), ts.lda,
                               ops, tmp.data());
                        const uint16_t *ap = a.data();
                        for (dim_t j = 0; j < ncnt; j += tile_cols) {
                            const uint16_t *bp = b.data() + j / tile_cols * panel;
                            ukernel_args k;
                            k.M = rows;
                            k.N = int(std::min(tile_cols, ncnt - j));
                            k.K = int(stepped_k(kcnt));
                            k.A = &ap;
                            k.B = &bp;
                            k.lda = ts.lda;
                            k.ldb = b_ld;
                            k.C = c.data() + i * pl.nc + j;
                            k.ldc = pl.nc;
                            k.accumulate = k0 > 0;
                            ukernel_trusted(pl.backend, pl.dot, k);
                        }
                    }
                }
                store_c(pl, args.out, gi, m0, mcnt, n0, ncnt, c.data(), pl.nc, biasp);
            }
        },
        thread_tile_hooks(pl.backend));
}

namespace {

class gemm_kernel final : public kernel {
  public:
    gemm_kernel(const conv_problem &p, amx_backend backend)
        : pl_(plan_gemm(p, backend, tables_)) {}  // (tables_ is declared first)
    void execute(const conv_args &args) const override {
        if (!pl_.g.pad.needed) {
            run_gemm(pl_, args);
            return;
        }
        // Taps in the padding: the tables index a zero-bordered copy of src.
        scratch_buffer<char> copy(size_t(pl_.g.pad.elems) * element_size(pl_.g.p.dt));
        copy_padded_src(pl_.g.user, pl_.g.pad, args.src, copy.data(), pl_.nthr);
        conv_args a = args;
        a.src = copy.data();
        run_gemm(pl_, a);
    }
    // The packers round f32 inputs to the tile type (math_dt) on the way.
    bool rounds_to_math_type() const override { return true; }
    std::string describe() const override {
        const gemm_plan &g = pl_.g;
        // How each operand is read: runs along its first or second index, or elements.
        auto how = [](const gemm_operand &o, int64_t rows, int64_t cols) {
            return std::string(o.col_run[0] >= cols   ? "(rows of runs)"
                               : o.row_run[0] >= rows ? "(columns of runs)"
                                                      : "(elements)");
        };
        auto name = [](const gemm_operand &o) {
            return std::string(o.t == gemm_tensor::src   ? "src"
                               : o.t == gemm_tensor::wei ? "wei"
                                                         : "dst");
        };
        const int64_t kc = std::min<int64_t>(pl_.kc, g.K), mt = std::min<int64_t>(32, g.M),
                      nt = std::min<int64_t>(32, g.N);
        return std::string("amx gemm ") + to_string(pl_.dot) + " " + to_string(pl_.backend) +
               ": C=" + name(g.c) + how(g.c, mt, nt) + "[" + std::to_string(g.M) + "x" +
               std::to_string(g.N) + "] A=" + name(g.a) + how(g.a, mt, kc) + " B=" + name(g.b) +
               how(g.b, kc, nt) + " K=" + std::to_string(g.K) + " groups=" + std::to_string(g.p.g) +
               " mc=" + std::to_string(pl_.mc) + " nc=" + std::to_string(pl_.nc) +
               " kc=" + std::to_string(pl_.kc) + (g.prefill ? " prefill" : "") +
               (g.pad.needed ? " src_padded_copy" : "") + ", " + std::to_string(pl_.nthr) +
               " thread(s)";
    }

  private:
    std::vector<dim_t> tables_;
    gemm_amx_plan pl_;
};

std::unique_ptr<kernel> make(const conv_problem &p, amx_backend backend) {
    const std::string why = gemm_why_not(p, backend);
    if (!why.empty()) throw error(status::unimplemented, "AMX GEMM: " + why);
    return std::make_unique<gemm_kernel>(p, backend);
}

std::string dispatch_why_not(const conv_problem &p, amx_backend backend) {
    std::string why = gemm_why_not(p, backend);
    if (!why.empty()) return why;
    std::vector<dim_t> tables;
    const gemm_amx_plan pl = plan_gemm(p, backend, tables);
    if (pl.scratch_bytes() > p.scratch_bound(pl.nthr))
        return "its scratch (" + std::to_string(pl.scratch_bytes()) +
               " bytes) exceeds the problem's bound";
    return {};
}

// Whether the packers read operand X (rows x cols at its start) as runs: along its columns, or
// along its rows when the pairs can be transposed as words (`words`: the tensor has the tiles'
// type; C's columns are gathered from the f32 block, any type).
bool reads_runs(const gemm_operand &x, bool words, int64_t rows, int64_t cols) {
    return x.col_run[0] >= cols || (words && x.row_run[0] >= rows);
}

bool sources_same(const conv_problem &p, amx_dot dot) {
    return source{p.dt, nullptr, dot}.same();
}

}  // namespace

std::string gemm_cannot(const conv_problem &p) {
    return dispatch_why_not(p, amx_backend::emulated);
}

std::string gemm_why_not_native(const conv_problem &p) {
    std::string why = dispatch_why_not(p, amx_backend::native);
    if (!why.empty()) return why;
    const bool bwd_w = p.dir == conv_direction::bwd_weights;
    // fwd: windows that overlap or read padding make the packers copy src once per tap reading
    // it, through a zero-bordered copy, where amx_conv reads each pixel once. (bwd_data as a
    // matrix product has disjoint windows.)
    if (!bwd_w) {
        why = gemm_disjoint_why_not(p);
        if (!why.empty()) return "src would be packed once per tap (" + why + ")";
    }
    std::vector<dim_t> tables;
    const gemm_amx_plan pl = plan_gemm(p, amx_backend::native, tables);
    const gemm_plan &g = pl.g;
    const bool words = sources_same(p, pl.dot);
    const int64_t m = std::min<int64_t>(32, g.M), n = std::min<int64_t>(32, g.N),
                  k = std::min<int64_t>(pl.kc, g.K);
    // (ResNet-50's 7x7 stem's weight gradient, 3 channels per tap: 95 ms against 7 for the f32
    // direct kernel.)
    if (!reads_runs(g.a, words, m, k) || !reads_runs(g.b, words, k, n) ||
        !reads_runs(g.c, true, m, n))
        return "an operand would be packed element by element (no runs of 32 along either axis)";
    const double mine = step_fill(g.M, 16) * step_fill(padded_k(g.K), k_step) * step_fill(g.N, 16);
    const double conv = conv_tile_fill(p);
    if (mine < 0.5) return "its tiles would be " + std::to_string(int(mine * 100)) + "% full";
    // amx_conv reads the tensors in place or through one copy, this kernel packs both operands:
    // it takes the gathers only where it fills the tiles twice as well.
    if (!bwd_w) {
        if (mine >= 2 * conv) return {};
        return "its tiles would be " + std::to_string(int(mine * 100)) + "% full against " +
               std::to_string(int(conv * 100)) + "% for amx_conv, which keeps it";
    }
    // The weight gradient packs src once per tap: it pays over few pixels with enough output
    // channels to reuse each packed pixel, or with many taps, where amx_conv keeps a tile of C
    // per tap. From the suite and 400 random bf16 problems (seeds 7 and 11, Xeon with AMX, 2
    // threads): DCGAN 512->256's and HiFi-GAN's ConvTransposeBackwardWeights (256 pixels, 512
    // channels) 1.7-1.9x faster, DCGAN's 1x1-input projection's 2.4x, FCN-8s x8's (256 taps)
    // 1.8x, the random ones so chosen 0.37-0.61x of the time without it; over 1024 pixels
    // and more (ResNet-50's 3x3, U-Net's up-convolution) it ran 0.4-0.8x as fast as amx_conv,
    // and with fewer than 48 output channels up to 2.4x slower.
    const int64_t pixels = g.p.mb * g.p.osp();
    if ((pixels <= 512 && g.p.ocg >= 48) || (g.p.ksp() >= 64 && mine >= conv)) return {};
    return "the weight gradient over " + std::to_string(pixels) + " pixels, " +
           std::to_string(g.p.ocg) + " output channels and " + std::to_string(g.p.ksp()) +
           " taps (taken over at most 512 pixels with 48 channels, or 64 taps)";
}

std::unique_ptr<kernel> gemm_create_native(const conv_problem &p) {
    return make(p, amx_backend::native);
}
std::unique_ptr<kernel> gemm_create_emulated(const conv_problem &p) {
    return make(p, amx_backend::emulated);
}

}  // namespace convgrad::detail::amx
