#include "kernels/amx/amx_bwd_weights.hpp"

#include <algorithm>
#include <cstring>

#include "core/float_convert.hpp"
#include "kernels/amx/amx_elements.hpp"
#include "kernels/amx/amx_rows.hpp"
#include "threading/parallel.hpp"
#include "threading/scratch_cache.hpp"

namespace convgrad::detail::amx {
namespace {

// A chunk's A and B (2 bytes an element, pixels x (icg + ocg)) aim at half of a 2 MB L2, the
// rest holding the f32 C block and the next chunk's source lines.
constexpr int64_t chunk_bytes = 1 << 20;
constexpr int64_t min_chunk = 2 * k_step, max_chunk = 64 * k_step;
// Enough work items for two or more threads without a thread-count dependence, and a cap on
// the partial sums' memory (past it, fewer slices: less parallel, never less exact).
constexpr int64_t target_items = 8;
constexpr double max_partial_bytes = 256.0 * (1 << 20);

int64_t div_up(int64_t a, int64_t b) {
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
};

// No element is inf or NaN (exponent all ones in the 16-bit type): the condition under which
// padded pixels may join a tap's sum as zeros, since 0 * x is 0 only for finite x.
// (As a maximum of the magnitudes, which vectorizes: inf and NaN have the largest.)
bool all_finite(const uint16_t *v, int64_t n, amx_dot dot) {
    const int16_t inf = dot == amx_dot::bf16 ? 0x7f80 : 0x7c00;
    int16_t most = 0;
    for (int64_t i = 0; i < n; ++i) most = std::max(most, int16_t(v[i] & 0x7fff));
    return most < inf;
}

}  // namespace

std::string amx_dot_of(const conv_problem &p, amx_dot &dot) {
    // A bf16 or f16 op multiplies in its own type whatever math_dt says (resolve_op leaves
    // math_dt at f32; only a graph's compile sets it, math_type); an f32 op only under
    // fpmath_mode bf16/f16.
    const data_type t = p.dt == data_type::f32 ? p.math_dt : p.dt;
    if (t == data_type::bf16)
        dot = amx_dot::bf16;
    else if (t == data_type::f16)
        dot = amx_dot::f16;
    else
        return "needs bf16 or f16 data (or an f32 op under fpmath_mode bf16/f16)";
    return {};
}

double bwd_weights_plan::scratch_bytes() const {
    const double partials = 4.0 * slices * p.g * p.ksp() * p.icg * p.ocg;
    const double per_thread = 2.0 * 2 * p.ocg * lda + 2.0 * (lda / 2) * ldb + 17.0 * chunk +
                              (4.0 + 2.0 * 3) * std::max(p.icg, p.ocg);
    return partials + nthr * per_thread;
}

bwd_weights_plan plan_bwd_weights(const conv_problem &p, amx_backend backend,
                                  int64_t chunk_pixels) {
    bwd_weights_plan pl;
    pl.p = p;
    pl.backend = backend;
    const std::string why = amx_dot_of(p, pl.dot);
    if (!why.empty() || p.dir != conv_direction::bwd_weights)
        throw error(status::invalid_arguments,
                    "AMX backward-weights: not a bf16/f16 backward-weights problem");
    pl.npix = p.mb * p.osp();
    if (chunk_pixels > 0) {
        pl.chunk = chunk_pixels;
    } else {
        // As large as L2 allows, but cut so that there are enough chunks to give every
        // group target_items / g slices (one chunk is the finest a slice can be).
        const int64_t fit = chunk_bytes / (2 * (p.icg + p.ocg));
        const int64_t spread = div_up(div_up(pl.npix, div_up(target_items, p.g)), k_step) * k_step;
        pl.chunk = std::clamp(std::min(fit / k_step * k_step, spread), min_chunk, max_chunk);
    }
    pl.chunk = std::max<int64_t>(1, std::min(pl.chunk, pl.npix));
    pl.nchunks = div_up(pl.npix, pl.chunk);
    const double group_bytes = 4.0 * p.ksp() * p.icg * p.ocg;
    const int64_t by_memory =
        std::max<int64_t>(1, int64_t(max_partial_bytes / (group_bytes * p.g)));
    // Slices beyond the first cost no more than the f32 copies of src and dst would: the
    // scratch stays within conv_problem::scratch_bound.
    const double data_bytes = 4.0 * p.mb * (double(p.ic()) * p.isp() + double(p.oc()) * p.osp());
    const int64_t by_data = 1 + int64_t(data_bytes / (group_bytes * p.g));
    pl.slices =
        std::max<int64_t>(1, std::min({div_up(target_items, p.g), pl.nchunks, by_memory, by_data}));
    // Rows an odd number of cache lines apart: diff_dst^T is written a column (pixel pair) at a
    // time, one element per row, and rows 4 KB apart (a 2048-pixel chunk) would all fall into
    // one L1 set; an odd line count spreads them over all sets (3x3 weight gradient 1.26x).
    pl.lda = div_up(padded_k(pl.chunk), 32) * 32;
    if ((pl.lda / 32) % 2 == 0) pl.lda += 32;
    pl.ldb = 2 * p.icg;
    pl.nthr = threads_for(p.macs());
    return pl;
}

void run_bwd_weights(const bwd_weights_plan &pl, const conv_args &args) {
    const conv_problem &p = pl.p;
    const int64_t ksp = p.ksp(), wgroup = ksp * p.icg * p.ocg;
    const int64_t items = pl.slices * p.g;
    scratch_buffer<float> partials(size_t(pl.slices * p.g * wgroup));  // [tap][ocg][icg]
    const row_io io = row_io::here();

    parallel(
        pl.nthr,
        [&](int ithr, int nthr) {
            int64_t i0, i1;
            balance211(items, nthr, ithr, i0, i1);
            if (i0 >= i1) return;
            // A: diff_dst^T [ocg][pixels] of the chunk, packed once for all taps; A of a tap
            // that keeps only some pixels (their columns); B: one tap's src pixel pairs.
            scratch_buffer<uint16_t> a_full(size_t(p.ocg * pl.lda)), a_tap(size_t(p.ocg * pl.lda));
            scratch_buffer<uint16_t> b_tap(size_t(pl.lda / 2 * pl.ldb));
            scratch_buffer<int64_t> offs(size_t(2 * pl.chunk));
            scratch_buffer<uint8_t> inside(size_t(pl.chunk));
            scratch_buffer<float> tmp(size_t(std::max(p.icg, p.ocg)));
            scratch_buffer<uint16_t> rows(size_t(3 * std::max(p.icg, p.ocg)));
            int64_t *soff = offs.data(), *keep = soff + pl.chunk;
            uint16_t *r0 = rows.data(), *r1 = r0 + std::max(p.icg, p.ocg);
            uint16_t *zeros = r1 + std::max(p.icg, p.ocg);  // an outside pixel's channels
            std::fill(zeros, zeros + std::max(p.icg, p.ocg), uint16_t(0));
            const uint16_t *Ap = nullptr, *Bp = nullptr;
            ukernel_args a;
            a.lda = pl.lda;
            a.ldb = pl.ldb;
            a.ldc = p.icg;
            a.A = &Ap;
            a.B = &Bp;
            a.accumulate = true;
            for (int64_t item = i0; item < i1; ++item) {
                const int64_t slice = item / p.g, g = item % p.g;
                float *C = partials.data() + item * wgroup;
                std::fill(C, C + wgroup, 0.f);
                int64_t c0, c1;
                balance211(pl.nchunks, int(pl.slices), int(slice), c0, c1);
                for (int64_t c = c0; c < c1; ++c) {
                    const int64_t q0 = c * pl.chunk, K = std::min(q0 + pl.chunk, pl.npix) - q0;
                    // 1. diff_dst^T, two pixels (one 32-bit pair) at a time.
                    bool finite = true;
                    {
                        pixel_walk w(p, q0);
                        for (int64_t k = 0; k < K; k += 2) {
                            int64_t d = w.img * p.dst.n + g * p.ocg * p.dst.c;
                            for (int x = 0; x < 3; ++x) d += w.o[x] * p.dst.sp[x];
                            const uint16_t *v0 = io.view_in(p.dt, args.dst, d, p.dst.c, p.ocg,
                                                            pl.dot, r0, tmp.data());
                            const uint16_t *v1 = r1;
                            w.next();
                            if (k + 1 < K) {
                                d = w.img * p.dst.n + g * p.ocg * p.dst.c;
                                for (int x = 0; x < 3; ++x) d += w.o[x] * p.dst.sp[x];
                                v1 = io.view_in(p.dt, args.dst, d, p.dst.c, p.ocg, pl.dot, r1,
                                                tmp.data());
                                w.next();
                            } else {
                                std::fill(r1, r1 + p.ocg, uint16_t(0));
                            }
                            finite = finite && all_finite(v0, p.ocg, pl.dot) &&
                                     all_finite(v1, p.ocg, pl.dot);
                            // (k and lda even: the pair is one aligned 32-bit word)
                            uint16_t *col = a_full.data() + k;
                            for (int64_t oc = 0; oc < p.ocg; ++oc) {
                                const uint32_t pair = uint32_t(v0[oc]) | uint32_t(v1[oc]) << 16;
                                std::memcpy(col + oc * pl.lda, &pair, 4);
                            }
                        }
                    }
                    for (int64_t t = 0; t < ksp; ++t) {
                        const int64_t tap[3] = {t / (p.k[1] * p.k[2]), (t / p.k[2]) % p.k[1],
                                                t % p.k[2]};
                        // 2. The tap's source pixel of every output pixel, and which are inside.
                        int64_t nin = 0;
                        pixel_walk w(p, q0);
                        for (int64_t k = 0; k < K; ++k, w.next()) {
                            int64_t sx = w.img * p.src.n + g * p.icg * p.src.c;
                            bool in = true;
                            for (int x = 0; x < 3; ++x) {
                                const int64_t i = w.o[x] * p.s[x] + tap[x] * p.dl[x] - p.pb[x];
                                in = in && i >= 0 && i < p.i[x];
                                sx += i * p.src.sp[x];
                            }
                            inside[size_t(k)] = in;
                            soff[k] = sx;
                            if (in) keep[nin++] = k;
                        }
                        if (nin == 0) continue;
                        // 3. Every pixel, the outside ones as zero rows of B, when that is
                        // exact (diff_dst finite: 0 * x = 0) and not mostly zeros; else only the
                        // inside pixels, A's columns picked out.
                        const bool all = nin == K || (finite && 2 * nin >= K);
                        const int64_t Kt = all ? K : nin;
                        for (int64_t j = 0; j < Kt; j += 2) {
                            const int64_t k0 = all ? j : keep[j];
                            const bool has1 = j + 1 < Kt;
                            const int64_t k1 = has1 ? (all ? j + 1 : keep[j + 1]) : 0;
                            const uint16_t *v0 = zeros, *v1 = zeros;
                            if (inside[size_t(k0)])
                                v0 = io.view_in(p.dt, args.src, soff[k0], p.src.c, p.icg, pl.dot,
                                                r0, tmp.data());
                            if (has1 && inside[size_t(k1)])
                                v1 = io.view_in(p.dt, args.src, soff[k1], p.src.c, p.icg, pl.dot,
                                                r1, tmp.data());
                            uint16_t *pair = b_tap.data() + (j / 2) * pl.ldb;
                            for (int64_t ic = 0; ic < p.icg; ++ic) {
                                pair[2 * ic] = v0[ic];
                                pair[2 * ic + 1] = v1[ic];
                            }
                        }
                        const uint16_t *A = a_full.data();
                        if (!all) {
                            for (int64_t oc = 0; oc < p.ocg; ++oc) {
                                const uint16_t *from = a_full.data() + oc * pl.lda;
                                uint16_t *to = a_tap.data() + oc * pl.lda;
                                for (int64_t j = 0; j < nin; ++j) to[j] = from[keep[j]];
                                if (nin & 1) to[nin] = 0;
                            }
                            A = a_tap.data();
                        }
                        // 4. dW^T[oc][ic] of the tap += A * B, in 32 x 32 blocks.
                        a.K = int(Kt);
                        float *Ct = C + t * p.ocg * p.icg;
                        for (int64_t m0 = 0; m0 < p.ocg; m0 += ukernel_max_m)
                            for (int64_t n0 = 0; n0 < p.icg; n0 += ukernel_max_n) {
                                Ap = A + m0 * pl.lda;
                                Bp = b_tap.data() + 2 * n0;
                                a.M = int(std::min<int64_t>(ukernel_max_m, p.ocg - m0));
                                a.N = int(std::min<int64_t>(ukernel_max_n, p.icg - n0));
                                a.C = Ct + m0 * p.icg + n0;
                                ukernel(pl.backend, pl.dot, a);
                            }
                    }
                }
            }
        },
        thread_tile_hooks(pl.backend));

    // Sum the slices in slice order, round once, store at the user's weight strides.
    const int64_t rows = p.g * ksp * p.icg;
    parallel(pl.nthr, [&](int ithr, int nthr) {
        int64_t r0, r1;
        balance211(rows, nthr, ithr, r0, r1);
        const weights_layout &l = p.wei;
        for (int64_t r = r0; r < r1; ++r) {
            const int64_t ic = r % p.icg, t = (r / p.icg) % ksp, g = r / (p.icg * ksp);
            const int64_t kd = t / (p.k[1] * p.k[2]), kh = (t / p.k[2]) % p.k[1], kw = t % p.k[2];
            const int64_t base = ic * l.ic + kd * l.sp[0] + kh * l.sp[1] + kw * l.sp[2];
            const float *col = partials.data() + g * wgroup + t * p.ocg * p.icg + ic;
            for (int64_t oc = 0; oc < p.ocg; ++oc) {
                float sum = col[oc * p.icg];
                for (int64_t s = 1; s < pl.slices; ++s) sum += col[s * p.g * wgroup + oc * p.icg];
                store_element(p.dt, args.out, base + (g * p.ocg + oc) * l.oc, sum);
            }
        }
    });
}

}  // namespace convgrad::detail::amx
