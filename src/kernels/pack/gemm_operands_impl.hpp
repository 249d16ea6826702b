// The GEMM kernel's operand packers: A rows and B panels (f32 panels, kernels/pack/) read from
// any user tensor through the plan's offset tables, and C written back once. Included inside an
// ISA namespace after kernel_helpers.hpp.

// n elements of a user tensor at `off + col[j]`, as f32: runs of consecutive offsets (run[j]:
// how many from j on step by +1) copied as runs, short ones element by element.
static inline void gemm_copy_runs(data_type dt, const void *base, dim_t off, const dim_t *col,
                                  const dim_t *run, dim_t n, float *out) {
    for (dim_t j = 0; j < n;) {
        const dim_t len = imin(run[j], n - j);
        if (dt == data_type::f32 && len > 1 && len <= W) {
            // One masked vector, no call: im2col rows of a 4-wide kernel are runs of 4, 12 of
            // them per k row for 3 channels of 4x4 taps, and a memcpy each took a third of
            // DCGAN's 128 -> 3 ConvTranspose weight gradient in NCX (Zen 5, 2 threads, perf).
            const mask_t m = vt::mask(int(len));
            vt::store_mask(out + j,
                           vt::load_mask(static_cast<const float *>(base) + off + col[j], m), m);
        } else if (len >= 4) {
            load_run(dt, base, off + col[j], out + j, len);
        } else if (dt == data_type::f32) {  // plain loads: no call, no type switch
            const float *x = static_cast<const float *>(base) + off;
            for (dim_t e = j; e < j + len; ++e) out[e] = x[col[e]];
        } else {
            for (dim_t x = 0; x < len; ++x) out[j + x] = load_elem(dt, base, off + col[j + x]);
        }
        j += len;
    }
}

// The rows of one register tile of A (rows [m, m + rows), k [k0, k0 + kcnt)) as row pointers:
// into the user's tensor when it is f32 with k contiguous (nothing to copy), else into `buf`,
// filled row by row ([r][k]; bf16/f16 widened exactly).
static void gemm_rows_a(const gemm_plan &pl, const void *base, dim_t goff, dim_t m, dim_t rows,
                        dim_t k0, dim_t kcnt, float *buf, const float **ptr) {
    const gemm_operand &a = pl.a;
    const data_type dt = pl.p.dt;
    const bool k_contiguous = a.col_run[k0] >= kcnt;
    if (dt == data_type::f32 && k_contiguous) {
        for (dim_t r = 0; r < rows; ++r)
            ptr[r] = static_cast<const float *>(base) + goff + a.row[m + r] + a.col[k0];
        return;
    }
    for (dim_t r = 0; r < rows; ++r) ptr[r] = buf + r * kcnt;
    if (k_contiguous) {
        for (dim_t r = 0; r < rows; ++r)
            load_run(dt, base, goff + a.row[m + r] + a.col[k0], buf + r * kcnt, kcnt);
    } else if (a.row_run[m] >= rows) {  // rows contiguous (NCX pixels): block transposes
        dim_t offs[W];
        for (dim_t kb = 0; kb < kcnt; kb += W) {
            const int kn = int(imin(W, kcnt - kb));
            for (int i = 0; i < kn; ++i) offs[i] = goff + a.row[m] + a.col[k0 + kb + i];
            for (dim_t rb = 0; rb < rows; rb += W) {
                const int rn = int(imin(W, rows - rb));
                runs_to_rows(dt, base, offs, kn, rn, buf + rb * kcnt + kb, kcnt);
                for (int i = 0; i < kn; ++i) offs[i] += W;
            }
        }
    } else {  // k in runs (the taps of an im2col row: one run of channels per tap) or none
        for (dim_t r = 0; r < rows; ++r)
            gemm_copy_runs(dt, base, goff + a.row[m + r], a.col + k0, a.col_run + k0, kcnt,
                           buf + r * kcnt);
    }
}

// B k [k0, k0 + kcnt) x n [n0, n0 + ncnt) as one panel [k][ldb], columns ncnt..ldb zero.
static void gemm_pack_b(const gemm_plan &pl, const void *base, dim_t goff, dim_t k0, dim_t kcnt,
                        dim_t n0, dim_t ncnt, dim_t ldb, float *out) {
    const gemm_operand &b = pl.b;
    const data_type dt = pl.p.dt;
    if (b.col_run[n0] >= ncnt) {  // columns contiguous: one run per k
        for (dim_t k = 0; k < kcnt; ++k) {
            float *o = out + k * ldb;
            load_run(dt, base, goff + b.row[k0 + k] + b.col[n0], o, ncnt);
            for (dim_t n = ncnt; n < ldb; ++n) o[n] = 0.f;
        }
        return;
    }
    for (dim_t k = 0; k < kcnt; ++k)
        for (dim_t n = ncnt; n < ldb; ++n) out[k * ldb + n] = 0.f;
    // k in runs of at least 4 (NCX pixels; the channels of each tap of a transposed im2col):
    // block transposes of up to W x W, one per run piece.
    if (b.row_run[k0] >= imin(kcnt, 4)) {
        dim_t offs[W];
        for (dim_t nb = 0; nb < ncnt; nb += W) {
            const int nn = int(imin(W, ncnt - nb));
            for (dim_t kb = 0; kb < kcnt;) {
                const int kn = int(imin(imin(W, kcnt - kb), b.row_run[k0 + kb]));
                for (int i = 0; i < nn; ++i) offs[i] = goff + b.col[n0 + nb + i] + b.row[k0 + kb];
                runs_to_rows(dt, base, offs, nn, kn, out + kb * ldb + nb, ldb);
                kb += kn;
            }
        }
        return;
    }
    // Columns in runs (channels of a group, pixels of a row) or none: run by run along n.
    for (dim_t k = 0; k < kcnt; ++k)
        gemm_copy_runs(dt, base, goff + b.row[k0 + k], b.col + n0, b.col_run + n0, ncnt,
                       out + k * ldb);
}

// Whether gemm_pack_b_block packs B's block k [k0, k0 + kcnt) x n [n0, n0 + ncnt): when B's
// columns come in runs of at least a panel (NR), so that it reads each k row sequentially.
// Otherwise (columns strided: NCX channels) each panel walks its NR columns along k, NR
// streams at a time, where whole rows would touch every column's line for every k.
static inline bool gemm_b_by_rows(const gemm_plan &pl, dim_t n0, dim_t ncnt, dim_t NR) {
    return pl.b.col_run[n0] >= imin(ncnt, NR);
}

// B k [k0, k0 + kcnt) x n [n0, n0 + ncnt) as consecutive panels of NR columns, each [k][NR]
// (the layout of gemm_pack_b called per panel, columns past ncnt zero), read one k row at a
// time into `row` (room for ncnt rounded up to NR) and dealt out to the panels. Packed panel
// by panel instead, each k row is read NR columns at a time, so a panel walks all kcnt rows
// of B: with NCX data (rows = channels, 12 KB apart) the copies of 64 bytes, one per row,
// defeat the prefetchers, and a 1x1 layer's data gradient spent 40% of its time in them.
static void gemm_pack_b_block(const gemm_plan &pl, const void *base, dim_t goff, dim_t k0,
                              dim_t kcnt, dim_t n0, dim_t ncnt, dim_t NR, float *row, float *out) {
    const gemm_operand &b = pl.b;
    const data_type dt = pl.p.dt;
    const dim_t npad = div_up(ncnt, NR) * NR;
    for (dim_t n = ncnt; n < npad; ++n) row[n] = 0.f;
    const bool contiguous = b.col_run[n0] >= ncnt;
    for (dim_t k = 0; k < kcnt; ++k) {
        const float *r = row;
        if (contiguous && dt == data_type::f32 && ncnt == npad)  // read in place
            r = static_cast<const float *>(base) + goff + b.row[k0 + k] + b.col[n0];
        else if (contiguous)
            load_run(dt, base, goff + b.row[k0 + k] + b.col[n0], row, ncnt);
        else
            gemm_copy_runs(dt, base, goff + b.row[k0 + k], b.col + n0, b.col_run + n0, ncnt, row);
        // (A loop, not memcpy: NR is 16-64 floats, and a call per panel and k cost as much
        // as the copy.)
        for (dim_t np = 0; np < npad; np += NR) {
            float *o = out + np * kcnt + k * NR;
            for (dim_t j = 0; j < NR; ++j) o[j] = r[np + j];
        }
    }
}

// Writes rows [m0, m0 + mcnt) x columns [n0, n0 + ncnt) of C from an f32 block (rows ld apart),
// adding the bias, rounding once to the output type.
static void gemm_store(const gemm_plan &pl, void *out, dim_t g, dim_t m0, dim_t mcnt, dim_t n0,
                       dim_t ncnt, float *blk, dim_t ld, const float *bias) {
    const gemm_operand &c = pl.c;
    const data_type dt = pl.p.dt;
    const dim_t goff = g * c.gstride;
    if (bias) {
        const float *bg = bias + g * pl.bias_chg;
        for (dim_t r = 0; r < mcnt; ++r) {
            float *row = blk + r * ld;
            if (pl.bias_axis == 0) {
                const float v = bg[pl.bias_ch[m0 + r]];
                for (dim_t n = 0; n < ncnt; ++n) row[n] += v;
            } else {
                for (dim_t n = 0; n < ncnt; ++n) row[n] += bg[pl.bias_ch[n0 + n]];
            }
        }
    }
    if (c.col_run[n0] < ncnt && c.row_run[m0] >= mcnt && mcnt > 1) {
        // Columns of C contiguous in memory (NCX pixels as rows): block transposes.
        dim_t offs[W];
        for (dim_t nb = 0; nb < ncnt; nb += W) {
            const int nn = int(imin(W, ncnt - nb));
            for (int i = 0; i < nn; ++i) offs[i] = goff + c.col[n0 + nb + i] + c.row[m0];
            for (dim_t rb = 0; rb < mcnt; rb += W) {
                const int rn = int(imin(W, mcnt - rb));
                rows_to_runs(dt, blk + rb * ld + nb, ld, nn, rn, out, offs);
                for (int i = 0; i < nn; ++i) offs[i] += W;
            }
        }
        return;
    }
    for (dim_t r = 0; r < mcnt; ++r) {
        const float *row = blk + r * ld;
        const dim_t roff = goff + c.row[m0 + r];
        for (dim_t n = 0; n < ncnt;) {
            const dim_t run = imin(c.col_run[n0 + n], ncnt - n);
            store_run(dt, out, roff + c.col[n0 + n], row + n, run);
            n += run;
        }
    }
}

// bwd_data when the windows do not read every src element: those are the bias (or zero).
static void gemm_prefill(const gemm_plan &pl, void *out, const float *bias) {
    const conv_problem &p = pl.p;
    const data_layout &l = p.src;
    const dim_t rows = p.mb * p.ic();
    parallel(pl.nthr, [&](int ithr, int nthr) {
        dim_t s, e;
        split(rows, nthr, ithr, s, e);
        for (dim_t r = s; r < e; ++r) {
            const dim_t c = r % p.ic(), n = r / p.ic();
            const float v = bias ? bias[c] : 0.f;
            for (dim_t d = 0; d < p.i[0]; ++d)
                for (dim_t h = 0; h < p.i[1]; ++h)
                    for (dim_t w = 0; w < p.i[2]; ++w)
                        store_elem(p.dt, out,
                                   n * l.n + c * l.c + d * l.sp[0] + h * l.sp[1] + w * l.sp[2], v);
        }
    });
}

// ----------------------------------------------------------------------------- bf16 pairs --
//
// The operands of the bf16-pairs microkernel (gemm.hpp's schedule with E = uint16_t), bf16
// bits copied as they are: A's rows with consecutive k side by side (a pair is one 32-bit
// broadcast), B's panels as VNNI pairs [k / 2][ldn][2] (packed_formats.hpp). An odd count of k
// is completed with zeros in both, so the last pair adds nothing. Only in the units with the
// bf16 microkernel (16 lanes: transpose_u16 moves 16 x 16 blocks).
#ifdef CONVGRAD_UKERNEL_BF16
static_assert(vt::W == 16, "the bf16 pairs packers transpose 16 x 16 blocks");

// (uniform_steps: gemm_plan.hpp.)

// The rows of one register tile of A (rows [m, m + rows), k [k0, k0 + kcnt)) as row pointers:
// into the user's tensor when k is contiguous and kcnt even (its pairs are there already), else
// into `buf`, rows of kcnt rounded up to even ([r][k], the odd last pair's second half zero).
static void gemm_rows_a_pairs(const gemm_plan &pl, const void *base, dim_t goff, dim_t m,
                              dim_t rows, dim_t k0, dim_t kcnt, uint16_t *buf,
                              const uint16_t **ptr) {
    const gemm_operand &a = pl.a;
    const uint16_t *x = static_cast<const uint16_t *>(base) + goff;
    const dim_t kpad = kcnt + kcnt % 2;
    const bool k_contiguous = a.col_run[k0] >= kcnt;
    if (k_contiguous && kcnt % 2 == 0) {
        for (dim_t r = 0; r < rows; ++r) ptr[r] = x + a.row[m + r] + a.col[k0];
        return;
    }
    for (dim_t r = 0; r < rows; ++r) ptr[r] = buf + r * kpad;
    dim_t ks;
    if (k_contiguous) {
        for (dim_t r = 0; r < rows; ++r)
            std::memcpy(buf + r * kpad, x + a.row[m + r] + a.col[k0], size_t(kcnt) * 2);
    } else if (a.row_run[m] >= rows && uniform_steps(a.col + k0, kcnt, ks)) {
        // Rows contiguous, k one stride apart (A a transposed view: NXC channels as rows, the
        // weight gradient's pixels on K): a transpose.
        transpose_u16(x + a.row[m] + a.col[k0], ks, kcnt, rows, buf, kpad);
    } else {  // k in runs (an im2col row: a run of channels per tap), or none
        for (dim_t r = 0; r < rows; ++r) {
            const uint16_t *xr = x + a.row[m + r];
            uint16_t *o = buf + r * kpad;
            for (dim_t k = 0; k < kcnt;) {
                const dim_t len = imin(a.col_run[k0 + k], kcnt - k);
                if (len >= 4)
                    std::memcpy(o + k, xr + a.col[k0 + k], size_t(len) * 2);
                else
                    for (dim_t e = k; e < k + len; ++e) o[e] = xr[a.col[k0 + e]];
                k += len;
            }
        }
    }
    if (kcnt % 2)
        for (dim_t r = 0; r < rows; ++r) buf[r * kpad + kcnt] = 0;
}

// B k [k0, k0 + kcnt) x n [n0, n0 + ncnt) (ncnt <= ldn) as VNNI pairs [kcnt rounded up to
// even / 2][ldn][2], columns ncnt..ldn zero. Rows and columns one stride apart each (every
// layout of the weights and of dense data) go through the unit's pair packer, which interleaves
// contiguous rows and transposes 32-bit words where k is contiguous; the rest element by element.
static void gemm_pack_b_pairs(const gemm_plan &pl, const void *base, dim_t goff, dim_t k0,
                              dim_t kcnt, dim_t n0, dim_t ncnt, dim_t ldn, uint16_t *out) {
    const gemm_operand &b = pl.b;
    dim_t ks, ns;
    if (uniform_steps(b.row + k0, kcnt, ks) && uniform_steps(b.col + n0, ncnt, ns)) {
        const matrix_view v{const_cast<void *>(base), data_type::bf16, goff + b.row[k0] + b.col[n0],
                            ks, ns};
        pack_bf16_pairs(v, kcnt, ncnt, ldn, out);
        return;
    }
    const uint16_t *x = static_cast<const uint16_t *>(base) + goff;
    for (dim_t kp = 0; kp < div_up(kcnt, 2); ++kp) {
        uint16_t *o = out + kp * ldn * 2;
        const dim_t k = k0 + 2 * kp;
        const bool pair = 2 * kp + 1 < kcnt;
        for (dim_t n = 0; n < ncnt; ++n) {
            o[2 * n] = x[b.row[k] + b.col[n0 + n]];
            o[2 * n + 1] = pair ? x[b.row[k + 1] + b.col[n0 + n]] : uint16_t(0);
        }
        for (dim_t n = 2 * ncnt; n < 2 * ldn; ++n) o[n] = 0;
    }
}
#endif  // CONVGRAD_UKERNEL_BF16
