#include "kernels/pack/padded_src.hpp"

#include <algorithm>
#include <cstring>

#include "threading/parallel.hpp"

namespace convgrad::detail {
namespace {

// Copies n elements `stride` elements apart (contiguous when 1) to contiguous `out`.
void copy_strided(const char *in, dim_t stride, char *out, dim_t n, size_t es) {
    if (stride == 1) {
        std::memcpy(out, in, size_t(n) * es);
        return;
    }
    for (dim_t j = 0; j < n; ++j)
        std::memcpy(out + size_t(j) * es, in + size_t(j * stride) * es, es);
}

}  // namespace

void copy_padded_src(const conv_problem &user, const gemm_padded_src &pad, const void *src,
                     void *buf, int nthr) {
    const conv_problem &q = pad.p;
    const data_layout &l = user.src, &b = q.src;
    const size_t es = element_size(user.dt);
    const dim_t C = user.ic();
    const char *in = static_cast<const char *>(src);
    char *out = static_cast<char *>(buf);
    // The inside part of a padded row along w: copy positions [w0, w1) from src pixels
    // [w0 - pb, w1 - pb).
    const dim_t w0 = std::min(user.pb[2], q.i[2]),
                w1 = std::max(w0, std::min(user.pb[2] + user.i[2], q.i[2]));
    auto inside = [&](dim_t x, dim_t a) { return x >= 0 && x < user.i[a]; };
    // A line: one padded (n, d, h) row of every channel (channels last), or of one channel.
    const dim_t per_n = pad.nxc ? 1 : C;
    const dim_t lines = user.mb * per_n * q.i[0] * q.i[1];
    parallel(nthr, [&](int ithr, int nt) {
        int64_t s, e;
        balance211(lines, nt, ithr, s, e);
        for (dim_t line = s; line < e; ++line) {
            const dim_t h = line % q.i[1], d = (line / q.i[1]) % q.i[0];
            const dim_t c = (line / (q.i[1] * q.i[0])) % per_n,
                        n = line / (q.i[1] * q.i[0] * per_n);
            const dim_t sd = d - user.pb[0], sh = h - user.pb[1];
            char *o = out + size_t(n * b.n + c * b.c + d * b.sp[0] + h * b.sp[1]) * es;
            const dim_t row_elems = pad.nxc ? q.i[2] * C : q.i[2];
            if (!inside(sd, 0) || !inside(sh, 1)) {
                std::memset(o, 0, size_t(row_elems) * es);
                continue;
            }
            const char *x = in + size_t(n * l.n + c * l.c + sd * l.sp[0] + sh * l.sp[1]) * es;
            const dim_t px = pad.nxc ? C : 1;  // elements per padded pixel
            std::memset(o, 0, size_t(w0 * px) * es);
            std::memset(o + size_t(w1 * px) * es, 0, size_t((q.i[2] - w1) * px) * es);
            // No inside part when the windows end within the begin padding; src's address at
            // w0 - pb would then lie before the tensor.
            if (w1 == w0) continue;
            if (!pad.nxc) {
                copy_strided(x + size_t((w0 - user.pb[2]) * l.sp[2]) * es, l.sp[2],
                             o + size_t(w0) * es, w1 - w0, es);
            } else if (l.c == 1 && l.sp[2] == C) {  // dense channels-last rows: one copy
                std::memcpy(o + size_t(w0 * C) * es, x + size_t((w0 - user.pb[2]) * C) * es,
                            size_t((w1 - w0) * C) * es);
            } else {
                for (dim_t w = w0; w < w1; ++w)
                    copy_strided(x + size_t((w - user.pb[2]) * l.sp[2]) * es, l.c,
                                 o + size_t(w * C) * es, C, es);
            }
        }
    });
}

}  // namespace convgrad::detail
