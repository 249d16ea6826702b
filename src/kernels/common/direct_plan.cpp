#include "kernels/common/direct_plan.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "dispatch/cpu_features.hpp"
#include "kernels/ukernel/brgemm_args.hpp"  // (ukernel_rows_that_fit)
#include "threading/parallel.hpp"

namespace convgrad::detail {

direct_plan make_direct_plan(const conv_problem &p, int vlen, int nregs, const cache_sizes &caches,
                             bool round_output_in_kernel, bool split_weights, bool pairs) {
    direct_plan d{};
    d.p = p;
    d.vlen = vlen;
    d.max_nv = direct_max_nv(nregs);
    // Accumulators + the vectors of B + one broadcast register must fit the register file.
    for (int nv = 1; nv <= 4; ++nv) d.max_m[nv] = ukernel_rows_that_fit(nregs, nv);
    d.max_m[0] = 0;
    // The forward kernel flattening kernel width and channels reads src from a copy padded
    // along w: copied, so streamed a chunk of images at a time like any other copy.
    d.flat_w = p.dir == conv_direction::fwd && direct_flattens_w(p, pairs);
    const bool flat = d.flat_w;
    // (One channel is in place whatever its stride, NCX or not: the views address pixels only.)
    d.src_direct = p.dt == data_type::f32 && (p.src.c == 1 || p.ic() == 1) && !flat;
    d.dst_direct = p.dt == data_type::f32 && (p.dst.c == 1 || p.oc() == 1);
    // Fixed here, at compile time: the split (and so the bits of the result) never changes.
    d.nthr = threads_for(p.macs());
    const cache_budget b = budget_of(caches);
    const bool fwd = p.dir == conv_direction::fwd;
    d.out_rounded_in_kernel = round_output_in_kernel && p.dir != conv_direction::bwd_weights &&
                              p.dt != data_type::f32 && (fwd ? p.dst.c : p.src.c) == 1;
    d.caches = caches;
    // In double: a problem's extents may reach the dim_t range (the fuzzers build such problems
    // with an empty batch) while the chunk sizes matter only for problems that fit in memory.
    // bwd_weights: src and diff_dst rows of a chunk within the L2 budget.
    const double row_bytes =
        (double(p.i[2]) * double(p.ic()) + double(p.o[2]) * double(p.oc())) * 4.0;
    d.rows_per_chunk =
        dim_t(std::max(1.0, std::min(std::floor(double(b.l2_rows) / std::max(row_bytes, 1.0)),
                                     double(b.l2_rows))));
    // bwd_weights splits the weights over the threads where their sums can go into the user's
    // weights in place (output channels contiguous; bf16/f16 rounded there by each tap's last
    // chunk) and the weights are at least a quarter of the data: each thread then reads all the
    // rows, but no thread zeroes, accumulates and sums a copy of all the weights. Measured on
    // the suite, f32 NXC, 2 threads: weights 0.33-5.3x the data ran 1.08-1.34x faster (DCGAN
    // 512 -> 256: 5.65 -> 4.20 ms); 0.001-0.04x the data (ResNet-50's), 0.87-0.91x as fast.
    // bf16/f16: 1.04-1.43x. Through one f32 copy of all the weights and a pass that stores it
    // (OIX weights) it gained nothing: 0.93-1.05x. One thread too: it then reduces every row
    // in place, where by rows its one partial copy of the weights was stored by a pass after
    // (DCGAN 512 -> 256, 8 MB of weights: a quarter of the kernel's time).
    {
        const double wei = double(p.g) * double(p.ksp()) * double(p.icg) * double(p.ocg);
        const double data =
            double(p.mb) * (double(p.isp()) * double(p.ic()) + double(p.osp()) * double(p.oc()));
        d.weights_split = split_weights && p.dir == conv_direction::bwd_weights && p.wei.oc == 1 &&
                          4.0 * wei >= data;
        // Every chunk holds at least 256 pixels of rows, even beyond the L2 budget: each
        // microkernel call reduces a chunk into a C tile, loaded and stored once per call.
        // - Weights split: HiFi-GAN's 1-D layer (one 327 KB row per chunk, a C tile reloaded
        //   for every 32 pixels) ran at 46% of the FMA peak; with 8 rows of 32 pixels in one
        //   chunk, 1.36x faster (2 threads: 5.56 -> 4.09 ms).
        // - Rows split (Zen 3, 2 threads, medians of alternated pairs; this machine's memory
        //   load varies, so single pairs ranged 0.83-1.56x): ResNet-50's 1x1 layers had one row
        //   per chunk, 28-56 pixels per call: 1.14x each (the stride-2 projection 1.14-1.46x);
        //   ResNeXt's 32 groups of 8 channels, 2 rows of 28 pixels: 1.2x; the other suite
        //   layers 0.88-1.16x, geomean 1.02x.
        // (In double, as above: 256 over the row's pixels, at most 256 rows.)
        if (p.dir == conv_direction::bwd_weights)
            d.rows_per_chunk = std::max(
                d.rows_per_chunk, dim_t(std::ceil(256.0 / double(std::max<dim_t>(p.o[2], 1)))));
    }
    // A row beyond the budget: chunks of its output pixels of 256 KB (at most a quarter of the
    // L2: with the next one, prefetched while it is reduced, within half), at least 64 pixels
    // a call. wav2vec2's first layer (1 -> 512 channels, kernel 10, stride 5, rows of 16000
    // outputs, 33 MB each): its 10 taps in two tiles and 8 blocks of output channels each read
    // the whole row from memory, 14.4 ms on 2 threads against oneDNN's 4.1; in chunks of 126
    // pixels (256 KB) 6.1-7.0 ms, of 256 pixels 8.2-8.9, alternated, 1 thread 16-17 against 21
    // ms (Xeon, 2 MB L2). On Zen 5 (1 MB L2), 64 pixels (a quarter of the L2 for both chunks)
    // against 126, 3 alternated rounds: 2 threads 5.5-5.8 -> 3.4-5.0 ms, 1 thread 12.7-13.0 ->
    // 6.6-9.2, bf16 1.1x.
    d.pixels_per_chunk = 0;
    if (p.dir == conv_direction::bwd_weights && row_bytes > double(b.l2_rows)) {
        const double pixel_bytes = (double(p.s[2]) * double(p.ic()) + double(p.oc())) * 4.0;
        const double chunk = std::min(double(caches.l2) / 4.0, 256.0 * 1024.0);
        const double n = std::max(64.0, std::floor(chunk / pixel_bytes));
        if (n < double(p.o[2])) d.pixels_per_chunk = dim_t(n);
    }
    // Copies of one chunk (the tensors that are not used in place) within half the threads' L2.
    const double isp = double(p.i[0]) * double(p.i[1]) * double(p.i[2]);
    const double osp = double(p.o[0]) * double(p.o[1]) * double(p.o[2]);
    const bool src_copied = !d.src_direct && !(d.out_rounded_in_kernel && !fwd);
    const bool dst_copied = !d.dst_direct && !(d.out_rounded_in_kernel && fwd);
    const double copied =
        (src_copied ? isp * double(p.ic()) : 0.0) + (dst_copied ? osp * double(p.oc()) : 0.0);
    const double chunk_bytes = double(caches.l2) * d.nthr / 2;
    const double mb = double(std::max<dim_t>(p.mb, 1));
    // Chunks of equal size: 64 images in chunks of 63 left a chunk of 1, which streamed all the
    // weights again for one image (a 1x1-output layer's f16 data gradient took 1.4x its f32 time
    // on 2 threads).
    d.images_per_chunk = images_within_l2(copied * 4.0, dim_t(mb), d.nthr, caches);
    // Each chunk streams all the weights again: where they outweigh the whole batch's copies
    // (a projection from a 1x1 input: 3.3 MB of weights, 2.1 MB of f16 data), one chunk.
    const double wei_bytes = double(p.g) * double(p.ksp()) * double(p.icg) * double(p.ocg) * 4.0;
    if (copied * 4.0 * mb <= wei_bytes) d.images_per_chunk = dim_t(mb);
    d.chunk_fits_l2 = p.dir == conv_direction::bwd_weights ||
                      copied * 4.0 * double(d.images_per_chunk) <= chunk_bytes;
    d.out_rows_per_chunk = 0;
    d.out_row_axis = 0;
    d.in_rows_copied = false;
    const dim_t *out_sp = fwd ? p.o : p.i, *in_sp = fwd ? p.i : p.o;
    const bool out_copied = fwd ? dst_copied : src_copied;
    const bool in_copied = fwd ? src_copied || flat : dst_copied;
    const int X = direct_out_row_axis(p, flat);
    // Forward windows that skip src pixels (a stride beyond the kernel's extent: a 1x1 stride-2
    // projection) read a fraction of the copy; the GEMM kernel, which packs only what it reads,
    // is faster there (f16, 2 threads: ResNet-50's res3 projection 5.0 ms, against 6.2 on this
    // kernel with its input copied by rows), so such an input is not chunked by rows and its
    // copy keeps the estimate of a copy through memory. (Measured before the problem read a 1x1
    // kernel's src as the view of the pixels it reads, conv_problem::read_only_windowed_pixels:
    // such a projection now reaches here at stride 1, except along NCX's w; left are wider
    // kernels at larger strides.)
    bool windows_skip = false;
    for (int x = 0; x < 3; ++x)
        windows_skip |= fwd && p.o[x] > 1 && p.s[x] > (p.k[x] - 1) * p.dl[x] + 1;
    // The input read in place and the output copied (an input of one channel, NCX): the threads
    // need not share an image; where its copy is beyond half the budget (a thread's share), its
    // rows go in chunks as well, shared out across the batch below.
    const bool in_in_place = fwd ? d.src_direct : d.dst_direct;  // (src_direct: not flat)
    const bool own_images = out_copied && in_in_place && d.images_per_chunk == 1 &&
                            copied * 4.0 > chunk_bytes / 2 && p.mb >= 2 * dim_t(d.nthr);
    if (p.dir != conv_direction::bwd_weights && (!d.chunk_fits_l2 || own_images) &&
        d.images_per_chunk == 1 && (out_copied || (in_copied && !windows_skip)) && out_sp[X] > 1) {
        auto slice = [&](const dim_t *sp, dim_t C) {  // elements of one row (C channels)
            double e = double(C);
            for (int x = 0; x < 3; ++x)
                if (x != X) e *= double(sp[x]);
            return e;
        };
        // A copied output: its rows, a chunk within half the budget (the input, if copied, stays
        // per image: measured, NCX f32 3-D U-Net up-convolution's data gradient, 2 threads,
        // copying each chunk's input rows too made the chunks a third as big and the layer 5-10%
        // slower). Else the input's: the rows the chunk's windows read (at most the span of R
        // rows' windows unclipped by the padding; direct_input_rows gives each chunk's). Each
        // thread then copies and gathers its own chunks alone (gather_by_rows), so a chunk's
        // copy is within a share of one thread's L2 (direct_private_rows_share). (Measured, f16,
        // 2 threads, when the chunks were still shared: 3-D U-Net's up-convolution data
        // gradient, whose 8 MB image copy had gone through memory, 3.93 ms on the GEMM kernel ->
        // 3.72 on the direct kernel by rows.)
        d.in_rows_copied = !out_copied;
        const double slice_bytes = 4.0 * (out_copied ? slice(out_sp, fwd ? p.oc() : p.ic())
                                                     : slice(in_sp, fwd ? p.ic() : p.oc()));
        const double span = double(p.k[X] - 1) * double(p.dl[X]);
        auto bytes = [&](dim_t R) {
            if (out_copied) return double(R) * slice_bytes;
            const double in_rows = fwd ? double(R - 1) * double(p.s[X]) + span + 1.0
                                       : std::floor((double(R - 1) + span) / double(p.s[X])) + 2.0;
            return std::min(in_rows, double(in_sp[X])) * slice_bytes;
        };
        const double budget =
            out_copied ? chunk_bytes / 2 : direct_private_rows_share * double(caches.l2);
        // The most rows within the budget (bytes grows with R), fewer than the image's.
        dim_t lo = 0, hi = out_sp[X] - 1;
        while (lo < hi) {
            const dim_t mid = hi - (hi - lo) / 2;
            if (bytes(mid) <= budget)
                lo = mid;
            else
                hi = mid - 1;
        }
        const dim_t T = d.nthr, shared_rows = lo >= 1 ? balanced_chunk(out_sp[X], lo) : 0;
        const dim_t image_chunks = lo >= 1 ? (out_sp[X] + shared_rows - 1) / shared_rows : 0;
        if (lo >= 1 && out_copied && image_chunks < 2 * T) {
            // Too few chunks in an image for each thread to own some: shared by the threads,
            // unless the input is read in place and the batch has enough chunks; then each
            // thread computes and stores a contiguous share of the (image, chunk) pairs.
            // HiFi-GAN's conv_post data gradient (32 channels of 8192 samples, 2 chunks an
            // image) had its two chunks shared by both threads, joined three times each.
            d.out_rows_per_chunk = shared_rows;
            d.out_row_axis = X;
            d.rows_across_images = in_in_place && image_chunks * dim_t(mb) >= 2 * T;
            d.out_rows_private = d.rows_across_images;
        } else if (lo >= 1) {
            // Each thread's share is whole chunks (gather_by_rows: each thread copies its input
            // rows, or stores its output's, alone): of the chunk counts from the fewest within
            // the budget up to 4 per thread more, the one whose busiest thread computes the
            // fewest rows (the fewest chunks of those). U-Net's up-convolution, 32 rows within
            // chunks of 6: 6 chunks gave one thread 18 rows, 8 chunks of 4 give each 16.
            // (A copied output's rows, NCX, f32, 2 threads, Zen 5, 3-5 alternated rounds:
            // ESRGAN's last data gradient 1.81-1.95x, FCN x8's ConvTranspose 1.81x, the 3-D
            // U-Net's 1.27x, the ResNet-50 stem's forward, 7 chunks of 16 rows, 1.39x; with
            // fewer than 2 chunks per thread, DeepLab's ASPP at batch 1, 4 chunks of 9 rows
            // against 3 shared of 11, 0.83x.)
            const dim_t n = out_sp[X], c0 = (n + lo - 1) / lo;
            dim_t best = lo, best_rows = 0;
            for (dim_t c = c0; c < c0 + 4 * T; ++c) {
                const dim_t r = (n + c - 1) / c, chunks = (n + r - 1) / r;
                const dim_t rows = (chunks + T - 1) / T * r;
                if (best_rows == 0 || rows < best_rows) best = r, best_rows = rows;
            }
            d.out_rows_per_chunk = best;
            d.out_row_axis = X;
            d.out_rows_private = out_copied;
        } else {
            d.in_rows_copied = false;
        }
    }
    d.gather_whole_k = b.l2_whole;
    d.prefetch_next_rows = cpu_identity_here().vendor == "AuthenticAMD";
    d.gather_panel = b.l1_panel;
    d.bwd_w_b_panel = p.dir == conv_direction::bwd_weights ? b.l1_panel : 0;
    // ResNeXt-50's grouped 3x3 (8 channels a group), Zen 3, 2 threads, fastest of 8 and of 6
    // alternated rounds: 7.80 -> 6.28 and 8.12 -> 6.03 ms (1.24x, 1.35x). Where the rows are
    // converted (bf16/f16, NCX), only for the runs of rows, whose copies convert a row at a time
    // (copying the chunks' converted rows again cost f16 0.79x): ResNeXt's, 2 threads, 4
    // alternated runs, f16 8.63-8.88 -> 6.69-6.83 ms, bf16 8.58-9.11 -> 6.60-7.38. NCX rows are
    // transposed into each group's copy (through a channels-last row first, f32 went 10.6-11.7
    // -> 11.2-11.5); 4 alternated runs, f32 10.7-10.9 -> 9.6-10.1, f16 10.5-10.8 -> 8.9-9.0
    // (one run each 7.3-7.8: the host). Only the schedule of
    // bwd_weights.hpp copies them, not the vdpbf16ps kernel's (pairs) nor the grouped kernel's
    // (make_direct_kernel).
    // (NCX: pixels contiguous along w, transposed into the copies a group at a time.)
    const bool rows_copyable = (p.src.c == 1 || p.src.sp[2] == 1 || p.i[2] == 1) &&
                               (p.dst.c == 1 || p.dst.sp[2] == 1 || p.o[2] == 1);
    d.bwd_w_group_copies =
        p.dir == conv_direction::bwd_weights && !pairs && p.g > 1 && !d.weights_split &&
        d.pixels_per_chunk == 0 &&
        ((d.src_direct && d.dst_direct) || (rows_copyable && direct_bwd_w_runs_shape(d))) &&
        (p.icg % 16 != 0 || p.ocg % 16 != 0);
    // Reduced as runs of rows from those copies: chunks of a whole image's rows, where both
    // copies of one fit 4 L2s. A chunk inside an image also copies the src rows its first and
    // last rows' taps share with the chunks next to it; the copies of bigger chunks, beyond L2,
    // still came back from L3 fast enough. (ResNeXt-50's grouped 3x3, 28 rows an image, Zen 3,
    // 2 threads, 4 alternated runs: chunks of 10 rows 4.96-5.04 ms, 14 rows 4.78-4.89, 28
    // rows 4.68-4.69, 56 rows 4.67-4.68, 5 rows 5.33-5.37.)
    if (direct_bwd_w_group_runs(d)) {
        const dim_t per_image = p.o[0] * p.o[1];
        const double pitch = double(direct_bwd_w_runs_pitch(p));
        const double image_bytes =
            4.0 * pitch *
            (double(p.i[0]) * double(p.i[1]) * double(p.ic()) + double(per_image) * double(p.oc()));
        if (per_image > d.rows_per_chunk && image_bytes <= 4.0 * double(caches.l2))
            d.rows_per_chunk = per_image;
    }
    d.gather_group = b.l2_group;
    d.gather_band = b.l2_band;
    d.gather_band_units = 0;
    // An f32 output in place is stored past the caches from output_streams_past_caches' bound.
    // Measured with this rule (Zen 3, 2 threads, medians of 3 alternated pairs): ResNet-50's
    // stem forward (26 MB of dst) 1.09x, res2 1x1 forward and data gradient (51 MB) 1.15x and
    // 1.09x, the 3-D U-Net up-convolution's data gradient (17 MB) 1.02x. Streamed below the
    // bound, res2 3x3's forward (6.4 MB) gained 1.04x, within this host's noise.
    // Not where a tile's C pixels are a stride phase's, apart along w, and a pixel's channels
    // are not whole cache lines: tiles of different phases then write each line in pieces, and
    // a streamed piece goes to memory as a partial line. (FCN's x8 upsampling, 21 channels at
    // 8-pixel steps, Zen 3, 2 threads, medians of 4 rounds: on 4 x 3 tiles 13.1 ms not streamed
    // and 19.1 ms streamed; on 6 x 2 and 6 x 1 tiles, 17.2 and 17.3 ms.)
    // Nor where groups split a pixel's channels into pieces that are not whole cache lines:
    // each group's tiles write their piece of the lines, and the lines go to memory in pieces
    // too. (ResNeXt-50's grouped 3x3, 8 channels a group, Zen 3, 2 threads, fastest of 2
    // alternated runs each: data gradient 8.2 -> 5.2 ms not streamed, forward 8.3 -> 7.3 ms.)
    // A bf16/f16 output rounded in place is streamed by the same rule, two vectors (a line) at
    // a time (brgemm_args::stream).
    // Nor, on AVX2, where each output element takes fewer than min_macs_per_streamed_output
    // products, as measured on this kernel (Zen 3, 2 threads, alternated rounds): wav2vec2's first
    // layer, 10 products an element and 131 MB of output, ran its forward in 13.7-14.9 ms streamed
    // and 9.9-10.0 ms not (1.38-1.50x); HiFi-GAN's 32 -> 1 data gradient (7 products, 17 MB) the
    // same either way; streamed was the faster from 27 products on: ESRGAN's last layer's data
    // gradient (27, 67 MB) 0.94x and DCGAN's 128 -> 3 ConvTranspose data gradient (48) 0.81x not
    // streamed. The count alone is not the cause: the depthwise kernel's outputs, 9 products an
    // element, ran 1.6-2.2x faster streamed in the same session (MobileNetV2's 3x3 forward and
    // data gradients). A guess, not tested: the order of the stores, where a short-K tile of
    // this gather writes one line in each of its 6 rows per block (6 rows of 2 KB at once for
    // wav2vec2). With AVX-512 the same layer's forward streamed is the faster: Zen 4, 2 threads,
    // 4 alternated rounds, f32 8.0 -> 4.7 ms and bf16 4.3 -> 2.6 ms (0.54x -> about 0.9x of
    // oneDNN's blocked kernel; Zen 5 had streamed it before the rule, 2.9 ms, 1.5x). On Zen 4
    // capped to AVX2 streamed was the faster too (8.2 -> 6.2 ms): the rule follows the one
    // AVX2-only machine it was measured on, not a cause found.
    {
        const bool in_place =
            p.dt == data_type::f32 ? (fwd ? d.dst_direct : d.src_direct) : d.out_rounded_in_kernel;
        const dim_t elem = dim_t(element_size(p.dt)), per_line = 64 / elem;
        const double out_bytes = double(elem) * std::max(double(p.mb), 1.0) *
                                 (fwd ? osp * double(p.oc()) : isp * double(p.ic()));
        const dim_t out_channels = fwd ? p.ocg : p.icg;
        // (Over the whole output: a data gradient's stride phases share it out unevenly.)
        const double macs = osp * double(p.oc()) * double(p.icg) * double(p.ksp());
        const double out_elems = fwd ? osp * double(p.oc()) : isp * double(p.ic());
        const bool few_macs = d.vlen < 16 && macs < min_macs_per_streamed_output * out_elems;
        const bool partial_lines = (!fwd && p.s[2] > 1 && p.i[2] > 1 && p.ic() % per_line != 0) ||
                                   (p.g > 1 && out_channels % per_line != 0);
        d.stream_output = p.dir != conv_direction::bwd_weights && in_place && !partial_lines &&
                          !few_macs && output_streams_past_caches(out_bytes, d.nthr, caches);
        // An NCX f32 output copied back from its channels-last copy, by the same rule on the
        // whole output (the copy is written back a chunk of images or rows at a time).
        d.stream_copied_output = p.dir != conv_direction::bwd_weights && !in_place &&
                                 p.dt == data_type::f32 && (fwd ? p.dst.c : p.src.c) != 1 &&
                                 output_streams_past_caches(out_bytes, d.nthr, caches);
    }
    {
        const bool in_place = d.src_direct || d.out_rounded_in_kernel;
        const bool by_rows = d.out_rows_per_chunk > 0 && d.images_per_chunk == 1;
        d.merge_w_phases = direct_merges_w_phases(p, vlen) && !(by_rows && !pairs) &&
                           (!in_place || direct_src_dense_along_w(p));
    }
    return d;
}

void direct_input_rows(const conv_problem &p, int x, dim_t r0, dim_t r1, dim_t *a0, dim_t *a1) {
    const dim_t span = (p.k[x] - 1) * p.dl[x];
    dim_t lo, hi;
    if (p.dir == conv_direction::fwd) {  // output row o reads o*s - pb + kk*dl
        lo = r0 * p.s[x] - p.pb[x];
        hi = (r1 - 1) * p.s[x] - p.pb[x] + span + 1;
        lo = std::max<dim_t>(lo, 0);
        hi = std::min(hi, p.i[x]);
    } else {  // src row q is reached from dst row (q + pb - kk*dl) / s, where it divides
        // From the first dst row at or after (r0 + pb - span) / s, clamped to 0, to the last at
        // or before (r1 - 1 + pb) / s (none when that is negative). (Overflow-free roundings.)
        const dim_t first = r0 + p.pb[x] - span, last = r1 - 1 + p.pb[x], s = p.s[x];
        lo = first <= 0 ? 0 : first / s + (first % s != 0);
        hi = last < 0 ? 0 : std::min(last / s + 1, p.o[x]);
    }
    if (r1 <= r0 || hi < lo) hi = lo;
    *a0 = lo;
    *a1 = hi;
}

std::string describe(const direct_plan &pl) {
    // The register tile of the widest channel block: N is the C side's channels (dst for fwd
    // and bwd_weights, src for bwd_data), as wide as they fill, at most a block's vectors
    // (direct_block_nv: the gather's; bwd_weights' blocks are max_nv vectors).
    const conv_problem &p = pl.p;
    // (Merged stride phases: the gathers' C pixels have s x icg channels.)
    const dim_t n = pl.merge_w_phases                   ? p.s[2] * p.icg
                    : p.dir == conv_direction::bwd_data ? p.icg
                                                        : p.ocg;
    const int blk = p.dir == conv_direction::bwd_weights ? pl.max_nv : direct_block_nv(pl, n);
    const int nv = int(std::clamp<dim_t>((n + pl.vlen - 1) / pl.vlen, 1, blk));
    std::string s = pl.merge_w_phases
                        ? "stride phases along w merged: a C pixel is " + std::to_string(p.s[2]) +
                              " src pixels, N=" + std::to_string(n) + "; "
                        : std::string();
    s += "tile=" + std::to_string(pl.max_m[nv]) + "x" + std::to_string(nv * pl.vlen);
    if (pl.p.dir == conv_direction::bwd_weights)
        s += " rows_per_chunk=" + std::to_string(pl.rows_per_chunk) +
             (pl.pixels_per_chunk ? " pixels_per_chunk=" + std::to_string(pl.pixels_per_chunk)
                                  : std::string()) +
             (pl.weights_split ? " weights split" : " rows split") +
             (pl.bwd_w_group_copies ? direct_bwd_w_group_runs(pl)
                                          ? " (groups copied dense, reduced as runs of rows)"
                                          : " (groups copied dense)"
                                    : "");
    else
        s += " images_per_chunk=" + std::to_string(pl.images_per_chunk) +
             (pl.out_rows_per_chunk
                  ? " out_rows_per_chunk=" + std::to_string(pl.out_rows_per_chunk) + " along " +
                        "dhw"[pl.out_row_axis] +
                        (pl.in_rows_copied ? " (input copied by rows)" : "") +
                        (pl.rows_across_images ? " (output rows per thread across images)"
                         : pl.out_rows_private ? " (output rows per thread)"
                                               : "")
                  : std::string()) +
             (pl.stream_output ? " output streamed past the caches" : "") +
             (pl.stream_copied_output ? " NCX output streamed past the caches" : "") +
             (pl.prefetch_next_rows ? " one-tap rows prefetched" : "") +
             " k_chunk: whole K up to " + std::to_string(pl.gather_whole_k / 1024) +
             "KiB of weights panel, else " + std::to_string(pl.gather_panel / 1024) +
             "KiB chunks (if two lines of A rows fit them); blocks over bands of A up to " +
             std::to_string(pl.gather_band / 1024) + "KiB";
    const bool fwd = p.dir == conv_direction::fwd;
    auto how = [&](bool direct, bool out) {
        return direct                            ? "in place"
               : out && pl.out_rounded_in_kernel ? "rounded in place"
                                                 : "copied";
    };
    s += std::string(" src=") + how(pl.src_direct, p.dir == conv_direction::bwd_data) +
         " dst=" + how(pl.dst_direct, fwd) + " threads=" + std::to_string(pl.nthr) +
         " caches: " + to_string(pl.caches);
    return s;
}

bool direct_merges_w_phases(const conv_problem &p, int vlen) {
    const dim_t s = p.s[2];
    if (p.dir != conv_direction::bwd_data || p.g != 1 || s < 2 || p.dl[2] != 1 || p.k[2] % s != 0 ||
        p.pb[2] % s != 0 || p.i[2] % s != 0)
        return false;
    for (dim_t kw = 0; kw < p.k[2]; ++kw)
        if (!p.tap_reads_input(2, kw)) return false;
    auto fill = [vlen](double c) { return c / (std::ceil(c / vlen) * vlen); };
    return fill(double(s) * double(p.icg)) >= fill(double(p.icg)) + 0.1;
}

}  // namespace convgrad::detail
