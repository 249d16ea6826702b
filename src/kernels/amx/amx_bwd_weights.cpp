#include "kernels/amx/amx_bwd_weights.hpp"

#include <algorithm>

#include "core/float_convert.hpp"
#include "kernels/amx/amx_conv_pack.hpp"
#include "kernels/amx/amx_elements.hpp"
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

// The chunk [p0, p1) of flattened output pixels, seen through tap (kd, kh, kw): the pixels
// whose source pixel is inside the image, in order.
int64_t collect(const conv_problem &p, int64_t p0, int64_t p1, const int64_t tap[3], int64_t *soff,
                int64_t *doff) {
    int64_t n = 0;
    for (int64_t q = p0; q < p1; ++q) {
        int64_t r = q, o[3];
        for (int x = 2; x >= 0; --x) {
            o[x] = r % p.o[x];
            r /= p.o[x];
        }
        const int64_t img = r;
        int64_t s = img * p.src.n, d = img * p.dst.n;
        bool inside = true;
        for (int x = 0; x < 3; ++x) {
            const int64_t i = o[x] * p.s[x] + tap[x] * p.dl[x] - p.pb[x];
            inside = inside && i >= 0 && i < p.i[x];
            s += i * p.src.sp[x];
            d += o[x] * p.dst.sp[x];
        }
        if (!inside) continue;
        soff[n] = s;
        doff[n++] = d;
    }
    return n;
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
    const double per_thread = 2.0 * p.icg * lda + 2.0 * 2 * (lda / 2) * ldb + 16.0 * chunk;
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
    pl.lda = padded_k(pl.chunk);
    pl.ldb = 2 * p.ocg;
    pl.nthr = threads_for(p.macs());
    return pl;
}

void run_bwd_weights(const bwd_weights_plan &pl, const conv_args &args) {
    const conv_problem &p = pl.p;
    const int64_t ksp = p.ksp(), wgroup = ksp * p.icg * p.ocg;
    const int64_t items = pl.slices * p.g;
    scratch_buffer<float> partials(size_t(pl.slices * p.g * wgroup));
    const pixel_source src{p.dt, args.src, p.src.c}, dst{p.dt, args.dst, p.dst.c};

    parallel(
        pl.nthr,
        [&](int ithr, int nthr) {
            int64_t i0, i1;
            balance211(items, nthr, ithr, i0, i1);
            if (i0 >= i1) return;
            scratch_buffer<uint16_t> a_panel(size_t(p.icg * pl.lda));
            scratch_buffer<uint16_t> b_tap(size_t(pl.lda / 2 * pl.ldb));
            scratch_buffer<uint16_t> b_full(size_t(pl.lda / 2 * pl.ldb));
            scratch_buffer<int64_t> offs(size_t(2 * pl.chunk));
            int64_t *soff = offs.data(), *doff = soff + pl.chunk;
            ukernel_args a;
            a.lda = pl.lda;
            a.ldb = pl.ldb;
            a.ldc = p.ocg;
            a.accumulate = true;
            for (int64_t item = i0; item < i1; ++item) {
                const int64_t slice = item / p.g, g = item % p.g;
                float *C = partials.data() + item * wgroup;  // [tap][icg][ocg]
                std::fill(C, C + wgroup, 0.f);
                int64_t c0, c1;
                balance211(pl.nchunks, int(pl.slices), int(slice), c0, c1);
                for (int64_t c = c0; c < c1; ++c) {
                    const int64_t p0 = c * pl.chunk, p1 = std::min(p0 + pl.chunk, pl.npix);
                    // diff_dst of every pixel of the chunk, packed once for the taps that
                    // keep them all (the interior taps).
                    bool full_packed = false;
                    for (int64_t t = 0; t < ksp; ++t) {
                        const int64_t tap[3] = {t / (p.k[1] * p.k[2]), (t / p.k[2]) % p.k[1],
                                                t % p.k[2]};
                        const int64_t K = collect(p, p0, p1, tap, soff, doff);
                        if (K == 0) continue;
                        const uint16_t *B = b_tap.data();
                        if (K == p1 - p0) {
                            if (!full_packed) {
                                // The dst offsets do not depend on the tap: any tap's list of
                                // all pixels is the chunk's.
                                gather_b_pixels(dst, doff, K, g * p.ocg, p.ocg, pl.dot,
                                                b_full.data(), pl.ldb);
                                full_packed = true;
                            }
                            B = b_full.data();
                        } else {
                            gather_b_pixels(dst, doff, K, g * p.ocg, p.ocg, pl.dot, b_tap.data(),
                                            pl.ldb);
                        }
                        gather_a_pixels(src, soff, K, g * p.icg, p.icg, pl.dot, a_panel.data(),
                                        pl.lda);
                        a.K = int(K);
                        float *Ct = C + t * p.icg * p.ocg;
                        for (int64_t m0 = 0; m0 < p.icg; m0 += ukernel_max_m)
                            for (int64_t n0 = 0; n0 < p.ocg; n0 += ukernel_max_n) {
                                const uint16_t *Ap = a_panel.data() + m0 * pl.lda;
                                const uint16_t *Bp = B + 2 * n0;
                                a.M = int(std::min<int64_t>(ukernel_max_m, p.icg - m0));
                                a.N = int(std::min<int64_t>(ukernel_max_n, p.ocg - n0));
                                a.A = &Ap;
                                a.B = &Bp;
                                a.C = Ct + m0 * p.ocg + n0;
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
            const float *row = partials.data() + g * wgroup + (t * p.icg + ic) * p.ocg;
            for (int64_t oc = 0; oc < p.ocg; ++oc) {
                float sum = row[oc];
                for (int64_t s = 1; s < pl.slices; ++s) sum += row[s * p.g * wgroup + oc];
                store_element(p.dt, args.out, base + (g * p.ocg + oc) * l.oc, sum);
            }
        }
    });
}

}  // namespace convgrad::detail::amx
