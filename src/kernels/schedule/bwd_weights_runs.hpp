// bwd_weights, a chunk of rows reduced as runs of whole rows: where each group's channels are
// copied dense (direct_plan::bwd_w_group_copies) and the group's output channels are one whole
// vector, with stride and dilation 1 along w. Included inside an ISA namespace, by
// bwd_weights.hpp (bwd_weights_sums), where direct_bwd_w_group_runs says so.
//
// Each group's src rows are copied with their padding along w, `pitch` = pb + iw + pe pixels a
// row, and its diff_dst rows with zeros past ow to the same pitch. Output pixel x of any row then
// reads tap kw's src value at pixel x + kw of its padded row, and from one row to the next both
// step by one pitch. So the chunk's rows whose src rows for a tap (kd, kh) follow one another are
// one run, reduced as one K of rows x pitch pixels; and the rows (kw, channel) of all the taps
// along w are one run of floats, which the tall one-vector tiles read as spaced rows
// (brgemm_args::lda, brgemm_ukernel_spaced). Tap by tap over each row's pixels, ResNeXt-50's
// grouped 3x3 (8 channels a group, AVX2) ran 8 x 1 tiles, too few accumulators for the FMA
// latency, over K = 28, in 9 calls per group and chunk whose set-up took a quarter of the time.
//
// The products this adds are the pads times diff_dst at the pixels whose windows read padding,
// and the zeros past ow times the src pixels next to them (at the end of the row, and wrapped
// round to the next row's start). They are zeros unless one of those values is not finite
// (0 * inf): the copy checks them, and a chunk where one is not is reduced tap by tap over the
// user's rows instead (docs/semantics.md, "Padding and infinities").

// The copies' layouts: src rows padded, with a zero row after each group's (a run's last row
// reads k[2] - 1 pixels past its end), and diff_dst rows with zeros past ow; each checks the
// pixels whose values meet the added zeros.
struct group_runs_layout {
    group_copy_layout src, dst;
    explicit group_runs_layout(const conv_problem &p) {
        const dim_t pitch = direct_bwd_w_runs_pitch(p), kw = p.k[2], pb = p.pb[2];
        // src: those the zeros past ow read, at the end of a row and the start of the next.
        src = {pitch, pb, 1, {p.o[2] - pb, p.i[2], 0, kw - 1 - pb}};
        // diff_dst: the pixels whose windows read padding.
        dst = {pitch, 0, 0, {0, pb, p.i[2] + pb - (kw - 1), p.o[2]}};
    }
};

// Rows [c, ce) of diff_dst, which read src rows [sa, sb), from the copies `gsrc` and `gdst`
// (group_runs_layout) into thread's sums; started: per (g, tap) whether its sums have begun.
// runs: room for 3 x (ce - c) entries.
static void reduce_group_runs(const direct_plan &pl, const float *gsrc, const float *gdst, dim_t c,
                              dim_t ce, dim_t sa, dim_t sb, const weight_rows &sums,
                              unsigned char *started, dim_t *runs, float **C) {
    const conv_problem &p = pl.p;
    const dim_t kw = p.k[2], ksp = p.ksp(), pitch = direct_bwd_w_runs_pitch(p);
    const dim_t src_slice = (sb - sa + 1) * pitch * p.icg, dst_slice = (ce - c) * pitch * p.ocg;
    const dim_t nrows = kw * p.icg;
    const int mmax = pl.max_m[1];
    const float *A0, *B0;
    brgemm_f32_args a{};
    a.A = &A0, a.lda = 1, a.aks = p.icg;
    a.B = &B0, a.b_off = 0, a.ldb = p.ocg;
    a.C = C, a.tail = W, a.nbatch = 1;
    for (dim_t g = 0; g < p.g; ++g)
        for (dim_t hd = 0; hd < p.k[0] * p.k[1]; ++hd) {
            // The runs: (first row, its src row, the rows they take).
            dim_t nrun = 0, prev = -2;
            for (dim_t row = c; row < ce; ++row) {
                const tap_row tr = tap_row_of(p, row, hd / p.k[1], hd % p.k[1]);
                if (!tr.valid) {
                    prev = -2;
                    continue;
                }
                const dim_t s = tr.src_row(p);
                if (s == prev + 1)
                    ++runs[3 * (nrun - 1) + 2];
                else
                    runs[3 * nrun] = row, runs[3 * nrun + 1] = s, runs[3 * nrun + 2] = 1, ++nrun;
                prev = s;
            }
            if (nrun == 0) continue;
            // The taps along w start together, or (some begun tap by tap in a chunk with a value
            // that is not finite) the others are zeroed first.
            unsigned char *st = started + (g * ksp + hd * kw);
            int nstarted = 0;
            for (dim_t j = 0; j < kw; ++j) nstarted += st[j];
            if (nstarted > 0 && nstarted < kw)
                for (dim_t j = 0; j < kw; ++j)
                    start_at_zero(p, sums, g, hd * kw + j, 0, p.ocg, st[j]);
            for (dim_t i = 0; i < nrun; ++i) {
                const dim_t row = runs[3 * i], srow = runs[3 * i + 1], n = runs[3 * i + 2];
                A0 = gsrc + g * src_slice + (srow - sa) * pitch * p.icg;
                B0 = gdst + g * dst_slice + (row - c) * pitch * p.ocg;
                a.K = n * pitch;
                a.init = i == 0 && nstarted == 0 ? ukernel_init::zero : ukernel_init::accumulate;
                for (dim_t q0 = 0; q0 < nrows; q0 += mmax) {
                    const int m = int(imin(mmax, nrows - q0));
                    for (int r = 0; r < m; ++r)
                        C[r] = sums.at(p, g, hd * kw + (q0 + r) / p.icg, (q0 + r) % p.icg, 0);
                    a.a_off = q0;
                    call_f32_ukernel(m, 1, a);
                }
            }
            for (dim_t j = 0; j < kw; ++j) st[j] = 1;
        }
}
