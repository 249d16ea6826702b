// Grouped convolution with few channels per group (2, 4 or 8, in and out) on vdpbf16ps: fwd and
// bwd_data of bf16 tensors, and of f32 tensors under fpmath_mode bf16 (rounded once to bf16 on
// the way in). The f32 kernel (grouped_conv_impl.hpp) puts the channels of W/cg groups on its
// lanes, one multiply-add per lane and tap; here a lane holds a channel pair of the input side,
// so one vdpbf16ps does two multiply-adds per lane, and a vector covers 32 channels (a block):
// 32/cg groups of cg/2 lanes each.
// - Per output pixel and output channel j of a group, acc[j] gathers in each lane the products
//   of its pair with that pair's weights for output channel j of the lane's group, over every
//   tap, with no lane movement. The weights are packed so: [block][tap][j][16 pairs].
// - grouped_reduce then adds each group's cg/2 lanes: acc[0, cg/2) into one vector, acc[cg/2,
//   cg) into another, lane (cg/2)*g + j' holding group g's output channel j' (or cg/2 + j');
//   two vpermt2ps put the 32 sums in channel order.
// f32 accumulation, one rounding to the output type; the dot product treats denormal inputs
// as zero (docs/semantics.md, "Low-precision dot products"). Taps that read padding are left
// out, as the reference does: the loops are grouped_schedule.hpp's, over the lanes policy
// grouped_pair_lanes. Included after bf16dot_conv_impl.hpp (pairs_operand, bf16_at),
// grouped_reduce.hpp and grouped_schedule.hpp, in an AVX-512 unit's namespace.

constexpr dim_t gp_block = 32;  // channels per vector: 16 lanes of pairs

// One tap's products for a tile of pixels whose input pairs are x[0, gm): each weight vector is
// loaded once for the tile (in a register: GCC would otherwise fold it into every dot product,
// and the loads would outnumber them).
template <int CG, int GM>
static inline void gp_dots(const vt::VI (&x)[GM], const bf16_t *w, V (&acc)[GM][CG]) {
#pragma GCC unroll 8
    for (int j = 0; j < CG; ++j) {
        vt::VI wj = vt::load_pairs(w + j * gp_block);
        if constexpr (vt::in_register) asm("" : "+v"(wj));
#pragma GCC unroll 9
        for (int q = 0; q < GM; ++q) acc[q][j] = vt::dot_bf16(acc[q][j], x[q], wj);
    }
}
// The same for one pixel (the tiles at an edge, whose pixels are checked one by one).
template <int CG>
static inline void gp_dots1(vt::VI x, const bf16_t *w, V (&acc)[CG]) {
#pragma GCC unroll 8
    for (int j = 0; j < CG; ++j) acc[j] = vt::dot_bf16(acc[j], x, vt::load_pairs(w + j * gp_block));
}

// The 32 sums of one pixel's block in channel order, bias added, stored: f32 (under a mask), or
// rounded to bf16 in place (make_grouped_pairs_kernel: a bf16 output with contiguous channels).
struct gp_out {
    typename vt::perm_t order[2];  // (lane of the two reduced vectors, +16 for the second)
    explicit gp_out(int cg) {
        alignas(64) int32_t idx[2][16];
        const int P = cg / 2;
        for (int h = 0; h < 2; ++h)
            for (int k = 0; k < 16; ++k) {
                const int c = 16 * h + k, g = c / cg, j = c % cg;
                idx[h][k] = (j < P ? 0 : 16) + P * g + j % P;
            }
        order[0] = vt::perm_from(idx[0]);
        order[1] = vt::perm_from(idx[1]);
    }
};
// (Whole vectors unmasked, a tail under a mask; the two measured alike on Zen 4.)
static inline void gp_store(float *o, V v, int n) {
    if (n == W)
        vt::store(o, v);
    else
        vt::store_mask(o, v, vt::mask(n));
}
static inline void gp_store(uint16_t *o, V v, int n) {
    if (n == W)
        vt::template store_half<data_type::bf16>(o, v);
    else
        vt::template store_half_mask<data_type::bf16>(o, v, vt::mask(n));
}
template <int CG, typename CE>
static inline void gp_finish(const V (&acc)[CG], const gp_out &go, const float *bias, int nc,
                             CE *o) {
    constexpr int P = CG / 2;
    V lo[P], hi[P];
    for (int j = 0; j < P; ++j) lo[j] = acc[j], hi[j] = acc[P + j];
    const V r0 = grouped_reduce<P>(lo), r1 = grouped_reduce<P>(hi);
    const int n0 = nc < 16 ? nc : 16, n1 = nc - n0;
    const mask_t m0 = vt::mask(n0);
    V v0 = vt::permute2(r0, r1, go.order[0]);
    if (bias) v0 = vt::add(v0, vt::load_mask(bias, m0));
    gp_store(o, v0, n0);
    if (n1 > 0) {
        const mask_t m1 = vt::mask(n1);
        V v1 = vt::permute2(r0, r1, go.order[1]);
        if (bias) v1 = vt::add(v1, vt::load_mask(bias + 16, m1));
        gp_store(o + 16, v1, n1);
    }
}

// The pair lanes (grouped_schedule.hpp's policy).
template <int CG>
struct grouped_pair_lanes {
    using in_t = bf16_t;
    static constexpr int gm = grouped_pairs_tile(CG), cg = CG;  // (grouped_pairs_kernels.hpp)
    static constexpr dim_t cb = gp_block;
    const bf16_t *wp;
    const float *bias;
    dim_t ksp;
    gp_out go;
    static dim_t block_bytes(const conv_problem &p) { return p.ksp() * CG * gp_block * dim_t(sizeof(bf16_t)); }
    const bf16_t *weights(dim_t b, dim_t t) const { return wp + ((b * ksp + t) * CG) * gp_block; }
    static mask_t mask(int nc) { return vt::mask(nc / 2); }
    static inline void tile(const bf16_t *x, dim_t step, mask_t mk, const bf16_t *w, V (&acc)[gm][CG]) {
        vt::VI xv[gm];
#pragma GCC unroll 9
        for (int q = 0; q < gm; ++q) xv[q] = vt::load_pairs_mask(x + q * step, mk);
        gp_dots<CG, gm>(xv, w, acc);
    }
    static inline void one(const bf16_t *x, mask_t mk, const bf16_t *w, V (&acc)[CG]) {
        gp_dots1<CG>(vt::load_pairs_mask(x, mk), w, acc);
    }
    template <typename CE>
    inline void finish(const V (&acc)[CG], dim_t c0, int nc, CE *o) const {
        gp_finish<CG>(acc, go, bias ? bias + c0 : nullptr, nc, o);
    }
};

template <int CG>
static void run_grouped_pairs_cg(const direct_plan &pl, const conv_args &args) {
    const conv_problem &p = pl.p;
    const int nthr = pl.nthr;
    const bool fwd = p.dir == conv_direction::fwd;
    const dim_t C = p.g * CG, nblocks = div_up(C, gp_block);
    // The input side as bf16 pairs: the user's tensor when bf16 with contiguous channels, else a
    // dense bf16 copy (whole pairs: cg is even, so its channels are the user's, unpadded).
    const pairs_operand in(p, nthr, fwd ? args.src : args.dst, fwd ? p.src : p.dst, CG, fwd ? p.i : p.o);
    scratch w(div_up(nblocks * p.ksp() * CG * gp_block, 2));
    bf16_t *wp = reinterpret_cast<bf16_t *>(w.p);
    // (Lanes of pairs: channel c of a block is element c of its 32 bf16.)
    grouped_pack_weights(p, nthr, fwd, CG, nblocks, gp_block, wp,
                         [&](dim_t off) { return bf16_at(p.dt, args.wei, off); });
    scratch bias(p.with_bias ? C + W : 0);  // (read under the output's masks)
    if (p.with_bias) pack_bias(p, args.bias, C, bias.p);
    const float *bp = p.with_bias ? bias.p : nullptr;
    const data_layout &ol = fwd ? p.dst : p.src;
    const dim_t *osp = fwd ? p.o : p.i;
    const grouped_pair_lanes<CG> ln{wp, bp, p.ksp(), gp_out(CG)};
    if (pl.out_rounded_in_kernel) {
        const auto out = user_view<uint16_t>(args.out, ol);
        if (fwd)
            grouped_fwd_rows(pl, ln, in.v, out, nblocks);
        else
            grouped_bwd_data_rows(pl, ln, out, in.v, nblocks);
        return;
    }
    const data_operand out(p, nthr, fwd ? pl.dst_direct : pl.src_direct, args.out, ol, C, osp,
                           false);
    if (fwd)
        grouped_fwd_rows(pl, ln, in.v, out.v, nblocks);
    else
        grouped_bwd_data_rows(pl, ln, out.v, in.v, nblocks);
    out.store(nthr);
}

void run_grouped_pairs(const direct_plan &pl, const conv_args &args) {
    switch (pl.p.icg) {
        case 2: run_grouped_pairs_cg<2>(pl, args); break;
        case 4: run_grouped_pairs_cg<4>(pl, args); break;
        case 8: run_grouped_pairs_cg<8>(pl, args); break;
        default: throw error(status::unimplemented, "grouped_pairs: channels per group not 2, 4 or 8");
    }
}
