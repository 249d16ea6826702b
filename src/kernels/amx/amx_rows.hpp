// Rows of channels between user tensors and the AMX kernels: a pixel's channels into the
// tiles' 16-bit type, and a row of f32 results (plus bias) out to the user's type, rounded once.
// The schedules themselves are portable code (they also run over the emulation), so a scalar
// conversion per element would cost more than the tile products it feeds: a 32 x 32 block of
// C takes ~1200 cycles of TDPBF16PS over a 3x3 tap set of 64 channels, and as many again to
// round element by element. Contiguous channels therefore go through the vector conversions
// of the best instruction-set unit allowed here (pack_set::widen / narrow, bit for bit the
// scalar rounding); strided channels element by element.
#pragma once

#include <cstdint>
#include <cstring>

#include "dispatch/cpu_features.hpp"
#include "kernels/amx/amx_elements.hpp"
#include "kernels/pack/packed_formats.hpp"

namespace convgrad::detail::amx {

struct row_io {
    const pack_set *ps = nullptr;

    /// The AVX-512 unit's conversions where CONVGRAD_MAX_ISA and the CPU allow, else SSE2's.
    static row_io here() {
        return {isa_available(cpu_isa::avx512) ? &avx512::packers : &sse2::packers};
    }

    /// dst[c] = src element (base + c * cs) as the tiles' type, c < n. `tmp` holds n floats.
    void narrow_in(data_type dt, const void *src, int64_t base, int64_t cs, int64_t n, amx_dot to,
                   uint16_t *dst, float *tmp) const {
        const data_type want = to == amx_dot::bf16 ? data_type::bf16 : data_type::f16;
        if (cs != 1) {
            for (int64_t c = 0; c < n; ++c) dst[c] = narrow_element(dt, src, base + c * cs, to);
        } else if (dt == want) {
            std::memcpy(dst, static_cast<const uint16_t *>(src) + base, size_t(n) * 2);
        } else if (dt == data_type::f32) {
            ps->narrow(want, static_cast<const float *>(src) + base, dst, n);
        } else {  // bf16 <-> f16: exact widening, one rounding
            ps->widen(dt, static_cast<const uint16_t *>(src) + base, tmp, n);
            ps->narrow(want, tmp, dst, n);
        }
    }

    /// One line of a zero-padded channels-last copy in the tiles' type (the fwd and bwd_data
    /// schedules' copies of src and diff_dst): pixel x < w of the tensor line at `line` (pixel
    /// stride ws, channel stride cs, channels [c0, c0 + n)) goes to out + (x + margin) * cp.
    /// `dense`: the line's channels all follow each other (one conversion for the whole line).
    /// `tmp` holds w * n floats when dense, else n.
    void copy_line(data_type dt, const void *src, int64_t line, int64_t ws, int64_t cs, int64_t w,
                   int64_t c0, int64_t n, bool dense, int64_t margin, int64_t cp, amx_dot to,
                   uint16_t *out, float *tmp) const {
        if (dense) return narrow_in(dt, src, line, 1, w * n, to, out + margin * cp, tmp);
        const data_type want = to == amx_dot::bf16 ? data_type::bf16 : data_type::f16;
        if (cs == 1 && dt == want && n <= 8) {
            // A few channels of the tiles' type (the stem's 3): a copy call per pixel cost
            // more than the copy.
            const uint16_t *in = static_cast<const uint16_t *>(src) + line + c0;
            uint16_t *o = out + margin * cp;
            for (int64_t x = 0; x < w; ++x, in += ws, o += cp)
                for (int64_t c = 0; c < n; ++c) o[c] = in[c];
            return;
        }
        for (int64_t x = 0; x < w; ++x)
            narrow_in(dt, src, line + x * ws + c0 * cs, cs, n, to, out + (x + margin) * cp, tmp);
    }

    /// The n channels at `base` as the tiles' type: the source itself when it already has that
    /// type with contiguous channels (no copy), else `dst` after narrow_in.
    const uint16_t *view_in(data_type dt, const void *src, int64_t base, int64_t cs, int64_t n,
                            amx_dot to, uint16_t *dst, float *tmp) const {
        const data_type want = to == amx_dot::bf16 ? data_type::bf16 : data_type::f16;
        if (cs == 1 && dt == want) return static_cast<const uint16_t *>(src) + base;
        narrow_in(dt, src, base, cs, n, to, dst, tmp);
        return dst;
    }

    /// out element (base + c * cs) = v[c] (+ bias[c] when bias is not null), rounded once to
    /// dt, c < n. `tmp` holds n floats.
    void store_out(data_type dt, void *out, int64_t base, int64_t cs, const float *v,
                   const float *bias, int64_t n, float *tmp) const {
        if (bias) {
            for (int64_t c = 0; c < n; ++c) tmp[c] = v[c] + bias[c];
            v = tmp;
        }
        if (cs != 1) {
            for (int64_t c = 0; c < n; ++c) store_element(dt, out, base + c * cs, v[c]);
        } else if (dt == data_type::f32) {
            std::memcpy(static_cast<float *>(out) + base, v, size_t(n) * 4);
        } else {
            ps->narrow(dt, v, static_cast<uint16_t *>(out) + base, n);
        }
    }
};

}  // namespace convgrad::detail::amx
