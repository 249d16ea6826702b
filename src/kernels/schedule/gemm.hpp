// The GEMM kernel: convolutions that are matrix products (see gemm_plan.hpp), as packers, the
// one register-blocked microkernel (kernels/ukernel/) and a blocked schedule over them.
//
//   C[M x N] = sum_k A[M x K] * B[K x N]   per group, every operand a view of a user tensor
//
// Operands are read through offset tables (element = group base + row[r] + col[c]), so any
// layout and any user strides work: the packers copy what the microkernel needs, contiguous
// runs as vectors (bf16/f16 widened exactly on the way, or bf16 kept as pairs for the bf16
// microkernel), the rest element by element. C is accumulated in f32 in a per-thread block and
// written once (rounded once to bf16/f16), or in place (gemm_c_in_place).
//
// The schedule; included by each ISA's translation unit inside its own namespace after the
// microkernel, kernel_helpers.hpp and pack/gemm_operands_impl.hpp.

// ------------------------------------------------------------------------------- schedule --
//
// Units of work: (group, row block mc, column block nc, K part); a static split over threads.
// Per unit and K block kc: pack the B block (every column panel of nv vectors, reused by every
// row tile), then per tile of mr rows take A's rows (in place, or copied once for all panels)
// and run the microkernel across the panels, accumulating into the unit's f32 block; at the end
// store the block (or, with a K split, keep it as a partial sum, reduced in a fixed order).
//
// E is the element type the microkernel multiplies: float (operands widened exactly by the
// packers), or, in the units with the bf16 microkernel, uint16_t: bf16 operands as they are,
// A's rows as pairs of consecutive k and B's panels as VNNI pairs (gemm_rows_a_pairs,
// gemm_pack_b_pairs), multiplied by vdpbf16ps at twice the FMA rate where it is fast (AMD
// Zen 4 and 5). C is f32 either way.

template <typename E>
static void gemm_schedule(const gemm_plan &pl, const conv_args &args) {
    constexpr dim_t P = sizeof(E) == sizeof(float) ? 1 : 2;  // the K packing
    const conv_problem &p = pl.p;
    if (pl.M == 0 || pl.N == 0) return;
    const void *tensors[3] = {args.src, args.wei, args.dst};
    const void *abase = tensors[int(pl.a.t)], *bbase = tensors[int(pl.b.t)];
    const dim_t nbias = pl.bias_axis >= 0 ? p.g * pl.bias_chg : 0;
    scratch bias(nbias);
    for (dim_t c = 0; c < nbias; ++c) bias.p[c] = load_elem(p.dt, args.bias, c * p.bias_stride);
    const float *biasp = nbias ? bias.p : nullptr;
    if (pl.prefill) gemm_prefill(pl, args.out, biasp);

    const dim_t NR = dim_t(pl.nv) * W, mr = pl.mr;
    const dim_t mc_pad = div_up(pl.mc, mr) * mr, nc_pad = div_up(pl.nc, NR) * NR;
    // Per thread: A's rows, B's panels (E elements, K rounded up to whole pairs), C's block
    // (unless every unit accumulates in the user's C: gemm_plan::c_block) and one row of B
    // (gemm_pack_b_block), in floats.
    const dim_t kce = div_up(pl.kc, P) * P;
    auto floats = [](dim_t elems) {
        return div_up(elems * dim_t(sizeof(E)), dim_t(sizeof(float)));
    };
    const dim_t a_floats = floats(mr * kce), b_floats = floats(kce * nc_pad);
    const dim_t c_floats = pl.c_block ? mc_pad * nc_pad : 0;
    const dim_t per_thr = a_floats + b_floats + c_floats + nc_pad;
    scratch work(per_thr * pl.nthr);
    const dim_t units = p.g * pl.mblocks * pl.nblocks * pl.ksplit;
    // C without a bias or a K split: a unit whose columns are one contiguous run (NCX pixels, or
    // NXC channels) is written in the user's tensor itself, not in the f32 block then copied:
    // the copy wrote each output twice, and a 1x1 layer's forward in NCX spent a quarter of its
    // time in it. f32 accumulates there; bf16/f16 accumulates its first K blocks in the block,
    // and the microkernel rounds the last one's sums into the user's tensor
    // (brgemm_args::narrow).
    const bool c_in_place = gemm_c_in_place(pl);
    const bool rounded = p.dt != data_type::f32;
    // With a K split every part keeps its block: [part][g][M][N], reduced below.
    const dim_t gmn = p.g * pl.M * pl.N;
    scratch partial(pl.ksplit > 1 ? pl.ksplit * gmn : 0);
    parallel(pl.nthr, [&](int ithr, int nthr) {
        float *const mine = work.p + ithr * per_thr;
        E *const Ap = reinterpret_cast<E *>(mine);
        E *const Bp = reinterpret_cast<E *>(mine + a_floats);
        float *Cb = pl.c_block ? mine + a_floats + b_floats : nullptr,
              *Brow = mine + a_floats + b_floats + c_floats;
        const E *rows[max_rows];
        float *crows[max_rows];
        uint16_t *crows16[max_rows];
        const E *panel = nullptr;
        dim_t s, e;
        split(units, nthr, ithr, s, e);
        for (dim_t u = s; u < e; ++u) {
            // Units in the order (row block, group, column block, K part): a row block's C
            // rows, all groups and columns, are written one after another.
            const dim_t part = u % pl.ksplit, rest = u / pl.ksplit;
            const dim_t nb = rest % pl.nblocks, g = (rest / pl.nblocks) % p.g;
            const dim_t mb = rest / (pl.nblocks * p.g);
            const dim_t m0 = mb * pl.mc, mcnt = imin(pl.mc, pl.M - m0);
            const dim_t n0 = nb * pl.nc, ncnt = imin(pl.nc, pl.N - n0);
            dim_t k_s, k_e;
            split(pl.K, int(pl.ksplit), int(part), k_s, k_e);
            // An empty K range (bwd_weights of an empty batch) sums to zero.
            if (k_s == k_e) std::memset(Cb, 0, size_t(mc_pad * nc_pad) * sizeof(float));
            const bool direct_c = c_in_place && k_s < k_e && pl.c.col_run[n0] >= ncnt;
            const dim_t cat = g * pl.c.gstride + pl.c.col[n0];  // (element offset of the unit)
            float *const cuser =
                direct_c && !rounded ? static_cast<float *>(args.out) + cat : nullptr;
            uint16_t *const cuser16 =
                direct_c && rounded ? static_cast<uint16_t *>(args.out) + cat : nullptr;
            for (dim_t k0 = k_s; k0 < k_e; k0 += pl.kc) {
                const dim_t kcnt = imin(pl.kc, k_e - k0), kpad = div_up(kcnt, P) * P;
                if constexpr (P == 2) {
                    for (dim_t np = 0; np < ncnt; np += NR)
                        gemm_pack_b_pairs(pl, bbase, g * pl.b.gstride, k0, kcnt, n0 + np,
                                          imin(NR, ncnt - np), NR, Bp + np * kpad);
                } else if (gemm_b_by_rows(pl, n0, ncnt, NR))
                    gemm_pack_b_block(pl, bbase, g * pl.b.gstride, k0, kcnt, n0, ncnt, NR, Brow,
                                      Bp);
                else
                    for (dim_t np = 0; np < ncnt; np += NR)
                        gemm_pack_b(pl, bbase, g * pl.b.gstride, k0, kcnt, n0 + np,
                                    imin(NR, ncnt - np), NR, Bp + np * kcnt);
                for (dim_t mp = 0; mp < mcnt; mp += mr) {
                    const dim_t nrows = imin(mr, mcnt - mp);
                    if constexpr (P == 2)
                        gemm_rows_a_pairs(pl, abase, g * pl.a.gstride, m0 + mp, nrows, k0, kcnt, Ap,
                                          rows);
                    else
                        gemm_rows_a(pl, abase, g * pl.a.gstride, m0 + mp, nrows, k0, kcnt, Ap,
                                    rows);
                    // One batch element; the panels are whole vectors wide (zero-padded).
                    brgemm_args<E> a{};
                    a.K = kpad;
                    a.nbatch = 1;
                    a.A = rows;
                    a.aks = P;
                    a.B = &panel;
                    a.ldb = NR * P;
                    a.C = crows;
                    a.tail = W;
                    a.init = k0 == k_s ? ukernel_init::zero : ukernel_init::accumulate;
                    a.narrow = cuser16 && k0 + kcnt == k_e ? p.dt : data_type::f32;
                    a.C16 = crows16;
                    a.stream = pl.stream_c && cuser;
                    for (dim_t np = 0; np < ncnt; np += NR) {
                        panel = Bp + np * kpad;
                        const int nv = int(div_up(imin(NR, ncnt - np), W));
                        // f32 in place: the user's rows; else the f32 block, and for bf16/f16 in
                        // place the user's rows too (the last K block's results).
                        for (dim_t r = 0; r < nrows; ++r) {
                            const dim_t at = pl.c.row[m0 + mp + r] + np;
                            // (bf16/f16 in place with one K block: C16's rows only.)
                            crows[r] = cuser ? cuser + at
                                       : Cb  ? Cb + (mp + r) * nc_pad + np
                                             : nullptr;
                            if (cuser16) crows16[r] = cuser16 + at;
                        }
                        // In place, the last vector is masked to the unit's columns.
                        a.tail = direct_c ? int(imin(NR, ncnt - np) - (nv - 1) * W) : W;
                        if constexpr (P == 2)
                            call_bf16_ukernel(int(nrows), nv, a);
                        else
                            call_f32_ukernel(int(nrows), nv, a);
                    }
                }
            }
            if (direct_c) continue;
            if (pl.ksplit == 1) {
                gemm_store(pl, args.out, g, m0, mcnt, n0, ncnt, Cb, nc_pad, biasp);
                continue;
            }
            float *part_c = partial.p + part * gmn + g * pl.M * pl.N;
            for (dim_t r = 0; r < mcnt; ++r)
                std::memcpy(part_c + (m0 + r) * pl.N + n0, Cb + r * nc_pad,
                            size_t(ncnt) * sizeof(float));
        }
        if (pl.stream_c) vt::stream_fence();  // the streamed stores land before the join
    });
    if (pl.ksplit == 1) return;
    // Fixed-order reduction of the K parts, row by row of C, then the store.
    const dim_t rows = p.g * pl.M;
    parallel(pl.nthr, [&](int ithr, int nthr) {
        float *row = work.p + ithr * per_thr;  // N <= per_thr: nc_pad >= N is not guaranteed
        dim_t s, e;
        split(rows, nthr, ithr, s, e);
        for (dim_t x = s; x < e; ++x) {
            const dim_t g = x / pl.M, m = x % pl.M;
            for (dim_t n0 = 0; n0 < pl.N; n0 += nc_pad) {
                const dim_t ncnt = imin(nc_pad, pl.N - n0);
                for (dim_t n = 0; n < ncnt; ++n) row[n] = partial.p[x * pl.N + n0 + n];
                for (dim_t q = 1; q < pl.ksplit; ++q)
                    for (dim_t n = 0; n < ncnt; ++n)
                        row[n] += partial.p[q * gmn + x * pl.N + n0 + n];
                gemm_store(pl, args.out, g, m, 1, n0, ncnt, row, nc_pad, biasp);
            }
        }
    });
}

#ifndef CONVGRAD_GEMM_PAIRS_ONLY  // (the AVX512_BF16 unit: its f32 run_gemm is the AVX-512 one's)
void run_gemm(const gemm_plan &pl, const conv_args &args) {
    gemm_schedule<float>(pl, args);
}
#endif

#ifdef CONVGRAD_UKERNEL_BF16
/// bf16 problems on the bf16-pairs microkernel (vdpbf16ps, or the unit's emulation of it).
void run_gemm_pairs(const gemm_plan &pl, const conv_args &args) {
    gemm_schedule<uint16_t>(pl, args);
}
#endif
