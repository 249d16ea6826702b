// The packed formats (src/kernels/pack/packed_formats.hpp) of every instruction-set unit this
// machine (or CONVGRAD_MAX_ISA) allows: each element lands where the format says, padding is
// zero, and unpacking gives back the source, from and to user views of any strides (row- and
// column-major, gaps between rows and columns, NXC, NCX, padded tensors), for f32, bf16 and f16
// sources, with odd sizes.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "core/float_convert.hpp"
#include "kernels/pack/packed_formats.hpp"

namespace convgrad::detail {
namespace {

const pack_set *const all_packers[] = {&avx512::packers, &avx2::packers, &sse2::packers,
                                       &avx512_emu::packers};

// Memory of one user tensor of any type, and its elements as f32.
struct user_buffer {
    data_type dt;
    std::vector<float> f;
    std::vector<uint16_t> h;
    user_buffer(data_type t, dim_t n) : dt(t) {
        if (t == data_type::f32)
            f.assign(size_t(n), -7.f);
        else
            h.assign(size_t(n), 0x7777);
    }
    void *data() { return dt == data_type::f32 ? static_cast<void *>(f.data()) : h.data(); }
    float get(dim_t i) const {
        return dt == data_type::f32    ? f[size_t(i)]
               : dt == data_type::bf16 ? bf16_to_float(h[size_t(i)])
                                       : f16_to_float(h[size_t(i)]);
    }
    // Stores a value exactly representable in the type (drawn by `representable`).
    void set(dim_t i, float v) {
        if (dt == data_type::f32)
            f[size_t(i)] = v;
        else
            h[size_t(i)] = dt == data_type::bf16 ? float_to_bf16(v) : float_to_f16(v);
    }
};

// A value exactly representable in dt (and, for bf16 targets, often not in bf16 when dt is
// f32 or f16: the packers must round those once).
float representable(std::mt19937_64 &rng, data_type dt) {
    const float v = std::uniform_real_distribution<float>(-4.f, 4.f)(rng);
    if (dt == data_type::bf16) return bf16_to_float(float_to_bf16(v));
    if (dt == data_type::f16) return f16_to_float(float_to_f16(v));
    return v;
}

// Fills every element of an mb-image tensor of layout l with values representable in dt and
// returns their offsets in channels-last order (the dense copy's).
std::vector<dim_t> fill_channels_last(user_buffer &u, std::mt19937_64 &rng, data_type dt,
                                      const data_layout &l, dim_t mb, dim_t C, const dim_t *sp) {
    std::vector<dim_t> offs;
    for (dim_t n = 0; n < mb; ++n)
        for (dim_t d = 0; d < sp[0]; ++d)
            for (dim_t h = 0; h < sp[1]; ++h)
                for (dim_t w = 0; w < sp[2]; ++w)
                    for (dim_t c = 0; c < C; ++c) {
                        offs.push_back(n * l.n + d * l.sp[0] + h * l.sp[1] + w * l.sp[2] + c * l.c);
                        u.set(offs.back(), representable(rng, dt));
                    }
    return offs;
}

struct view_case {
    dim_t K, N, ks, ns, off, size;
};
// Row-major, column-major, and both strided with gaps; an offset into the buffer.
view_case make_view(std::mt19937_64 &rng, dim_t K, dim_t N, int kind) {
    view_case c{K, N, 0, 0, dim_t(rng() % 5), 0};
    switch (kind) {
        case 0:
            c.ns = 1, c.ks = N + dim_t(rng() % 3);
            break;
        case 1:
            c.ks = 1, c.ns = K + dim_t(rng() % 3);
            break;
        default:
            c.ns = 2 + dim_t(rng() % 2), c.ks = N * c.ns + 1;
            break;
    }
    c.size = c.off + (K - 1) * c.ks + (N - 1) * c.ns + 1;
    return c;
}

constexpr data_type all_types[] = {data_type::f32, data_type::bf16, data_type::f16};

TEST(Packers, F32PanelPlacesEveryElementPadsWithZeroAndRoundTrips) {
    std::mt19937_64 rng(1);
    for (const pack_set *s : all_packers) {
        if (!isa_available(s->isa)) continue;
        for (data_type dt : all_types)
            for (dim_t K : {1, 2, 7, 16, 33, 48})
                for (dim_t N : {1, 3, 16, 17, 40})
                    for (int kind = 0; kind < 3; ++kind) {
                        const view_case c = make_view(rng, K, N, kind);
                        user_buffer src(dt, c.size);
                        for (dim_t k = 0; k < K; ++k)
                            for (dim_t n = 0; n < N; ++n)
                                src.set(c.off + k * c.ks + n * c.ns, representable(rng, dt));
                        const dim_t ldn = (N + s->vlen - 1) / s->vlen * s->vlen;
                        std::vector<float> panel(size_t(K * ldn), 99.f);
                        s->pack_f32_panel({src.data(), dt, c.off, c.ks, c.ns}, K, N, ldn,
                                          panel.data());
                        user_buffer back(dt, c.size);
                        s->unpack_f32_panel(panel.data(), K, N, ldn,
                                            {back.data(), dt, c.off, c.ks, c.ns});
                        for (dim_t k = 0; k < K; ++k) {
                            for (dim_t n = 0; n < N; ++n) {
                                const dim_t i = c.off + k * c.ks + n * c.ns;
                                ASSERT_EQ(panel[size_t(k * ldn + n)], src.get(i))
                                    << s->name << " K=" << K << " N=" << N << " kind=" << kind;
                                ASSERT_EQ(back.get(i), src.get(i)) << s->name << " unpack";
                            }
                            for (dim_t n = N; n < ldn; ++n)
                                ASSERT_EQ(panel[size_t(k * ldn + n)], 0.f);
                        }
                    }
    }
}

TEST(Packers, Bf16PairsFollowTheVnniLayoutRoundOnceAndRoundTrip) {
    std::mt19937_64 rng(2);
    for (const pack_set *s : all_packers) {
        if (!isa_available(s->isa)) continue;
        for (data_type dt : all_types)
            // (K contiguous, bf16: blocks of W x W pair words, K = 70 several with a tail.)
            for (dim_t K : {1, 2, 3, 8, 33, 70})
                for (dim_t N : {1, 5, 16, 21, 40, 70, 300})  // (f32 rows: pieces of 256)
                    for (int kind = 0; kind < 3; ++kind) {
                        const view_case c = make_view(rng, K, N, kind);
                        user_buffer src(dt, c.size);
                        for (dim_t k = 0; k < K; ++k)
                            for (dim_t n = 0; n < N; ++n)
                                src.set(c.off + k * c.ks + n * c.ns, representable(rng, dt));
                        const dim_t ldn = (N + s->vlen - 1) / s->vlen * s->vlen;
                        std::vector<uint16_t> pairs(size_t(vnni_pairs_size(K, ldn)), 0x7777);
                        s->pack_bf16_pairs({src.data(), dt, c.off, c.ks, c.ns}, K, N, ldn,
                                           pairs.data());
                        for (dim_t kp = 0; kp < (K + 1) / 2; ++kp)
                            for (dim_t n = 0; n < ldn; ++n)
                                for (dim_t j = 0; j < 2; ++j) {
                                    const dim_t k = 2 * kp + j;
                                    const uint16_t got = pairs[size_t((kp * ldn + n) * 2 + j)];
                                    const uint16_t want =
                                        k < K && n < N
                                            ? float_to_bf16(src.get(c.off + k * c.ks + n * c.ns))
                                            : 0;
                                    ASSERT_EQ(got, want)
                                        << s->name << " dt=" << int(dt) << " K=" << K << " N=" << N
                                        << " (k, n)=(" << k << ", " << n << ")";
                                }
                        // Back into a view of the same type: the bf16 values, rounded once more
                        // (exact for f32; f16 holds every bf16 of this range to its precision).
                        user_buffer back(dt, c.size);
                        s->unpack_bf16_pairs(pairs.data(), K, N, ldn,
                                             {back.data(), dt, c.off, c.ks, c.ns});
                        for (dim_t k = 0; k < K; ++k)
                            for (dim_t n = 0; n < N; ++n) {
                                const dim_t i = c.off + k * c.ks + n * c.ns;
                                const float b = bf16_to_float(float_to_bf16(src.get(i)));
                                const float want =
                                    dt == data_type::f16 ? f16_to_float(float_to_f16(b)) : b;
                                ASSERT_EQ(back.get(i), want)
                                    << s->name << " unpack (" << k << ", " << n << ")";
                            }
                    }
    }
}

TEST(Packers, ChannelsLastCopiesNxcNcxAndPaddedTensorsBothWays) {
    std::mt19937_64 rng(3);
    for (const pack_set *s : all_packers) {
        if (!isa_available(s->isa)) continue;
        for (data_type dt : all_types)
            for (int layout = 0; layout < 3; ++layout)
                for (int nthr : {1, 3})
                    for (bool stream : {false, true}) {
                        const dim_t mb = 2, C = dim_t(1 + rng() % 19),
                                    sp[3] = {dim_t(1 + rng() % 2), 3, 5};
                        const dim_t S = sp[0] * sp[1] * sp[2];
                        data_layout l;
                        if (layout == 0) {  // NXC
                            l.c = 1, l.sp[2] = C, l.sp[1] = C * sp[2], l.sp[0] = C * sp[2] * sp[1],
                            l.n = C * S;
                        } else if (layout == 1) {  // NCX
                            l.sp[2] = 1, l.sp[1] = sp[2], l.sp[0] = sp[1] * sp[2], l.c = S,
                            l.n = C * S;
                        } else {  // padded NXC: gaps after every channel run and row
                            l.c = 1, l.sp[2] = C + 2, l.sp[1] = (C + 2) * sp[2] + 3,
                            l.sp[0] = l.sp[1] * sp[1] + 1, l.n = l.sp[0] * sp[0] + 5;
                        }
                        const dim_t size = l.n * mb;
                        user_buffer src(dt, size);
                        const std::vector<dim_t> offs =
                            fill_channels_last(src, rng, dt, l, mb, C, sp);
                        std::vector<float> dense(offs.size(), 99.f);
                        s->pack_channels_last(dt, mb, nthr, src.data(), l, C, sp, dense.data());
                        user_buffer back(dt, size);
                        s->unpack_channels_last(dt, mb, nthr, dense.data(), back.data(), l, C, sp,
                                                stream);
                        for (size_t i = 0; i < offs.size(); ++i) {
                            ASSERT_EQ(dense[i], src.get(offs[i]))
                                << s->name << " layout " << layout << " at " << i;
                            ASSERT_EQ(back.get(offs[i]), src.get(offs[i]))
                                << s->name << " unpack at " << i;
                        }
                    }
    }
}

// The block-transposing NCX path: channel and pixel counts around the vector widths (4, 8, 16)
// so every tail of a W x W block is hit; dense images (one run per image), rows with gaps after
// them (one run per row), width 1 (3-D layers with w = 1), and padding between channels that
// unpack must leave alone.
TEST(Packers, ChannelsLastTransposesNcxBlocksWithEveryTail) {
    std::mt19937_64 rng(4);
    struct shape {
        dim_t C, sp[3];
    };
    const shape shapes[] = {{1, {1, 1, 1}},
                            {3, {1, 7, 7}},
                            {16, {1, 4, 4}},
                            {17, {1, 1, 33}},
                            {33, {2, 3, 5}},
                            {8, {1, 1, 16}},
                            {5, {3, 2, 1}},
                            {40, {1, 2, 9}},
                            {4, {1, 1, 4}},
                            {19, {1, 3, 17}},
                            {64, {1, 1, 3}},
                            // Runs of several strips of the L1 buffer (8 W pixels) and a tail
                            // of one: 300, 256 (whole strips) and 129 pixels; channel planes a
                            // multiple of 4 KB apart, which go through it (1024 f32 pixels,
                            // 2048 pixels; with gaps 1, rows of 30 pixels 32 apart)
                            {17, {1, 1, 300}},
                            {5, {1, 16, 16}},
                            {20, {1, 2, 129}},
                            {3, {1, 32, 32}},
                            {2, {1, 1, 2048}},
                            {3, {1, 32, 30}}};
    for (const pack_set *s : all_packers) {
        if (!isa_available(s->isa)) continue;
        for (data_type dt : all_types)
            for (const shape &sh : shapes)
                for (int gaps = 0; gaps < 3; ++gaps)
                    for (int nthr : {1, 3})
                        for (bool stream : {false, true}) {
                            const dim_t mb = 2, C = sh.C;
                            const dim_t *sp = sh.sp;
                            data_layout l;
                            l.sp[2] = 1;
                            // gaps 0: dense NCX; 1: 2 elements after every row; 3: 3 after every
                            // channel plane (the image stays one run) and 1 after every image.
                            l.sp[1] = sp[2] + (gaps == 1 ? 2 : 0);
                            l.sp[0] = l.sp[1] * sp[1];
                            l.c = l.sp[0] * sp[0] + (gaps == 2 ? 3 : 0);
                            l.n = l.c * C + (gaps == 2 ? 1 : 0);
                            const dim_t size = l.n * mb;
                            user_buffer src(dt, size);
                            const std::vector<dim_t> offs =
                                fill_channels_last(src, rng, dt, l, mb, C, sp);
                            std::vector<float> dense(offs.size() + 1, 99.f);
                            s->pack_channels_last(dt, mb, nthr, src.data(), l, C, sp, dense.data());
                            ASSERT_EQ(dense.back(), 99.f) << s->name << " wrote past the copy";
                            user_buffer back(dt, size);
                            s->unpack_channels_last(dt, mb, nthr, dense.data(), back.data(), l, C,
                                                    sp, stream);
                            std::vector<bool> used(size_t(size), false);
                            for (size_t i = 0; i < offs.size(); ++i) {
                                used[size_t(offs[i])] = true;
                                ASSERT_EQ(dense[i], src.get(offs[i]))
                                    << s->name << " C=" << C << " gaps=" << gaps << " at " << i;
                                ASSERT_EQ(back.get(offs[i]), src.get(offs[i]))
                                    << s->name << " unpack C=" << C << " gaps=" << gaps << " at "
                                    << i;
                            }
                            const user_buffer untouched(dt, 1);
                            for (dim_t i = 0; i < size; ++i)
                                if (!used[size_t(i)]) {
                                    ASSERT_EQ(back.get(i), untouched.get(0))
                                        << s->name << " unpack wrote a gap at " << i;
                                }
                        }
    }
}

// The block transpose keeps every bit: NaN payloads, signed zeros, denormals and infinities of
// f32 come back unchanged through NCX pack and unpack.
TEST(Packers, ChannelsLastNcxKeepsEveryF32Bit) {
    std::mt19937_64 rng(5);
    const uint32_t specials[] = {0x7fc00001u, 0xffa00000u, 0x80000000u, 0x00000001u,
                                 0x7f800000u, 0xff800000u, 0x807fffffu};
    for (const pack_set *s : all_packers) {
        if (!isa_available(s->isa)) continue;
        const dim_t C = 21, sp[3] = {1, 3, 11}, S = 33;
        data_layout l;
        l.sp[2] = 1, l.sp[1] = sp[2], l.sp[0] = S, l.c = S, l.n = C * S;
        std::vector<float> src(size_t(C * S));
        for (size_t i = 0; i < src.size(); ++i) {
            const uint32_t b = i % 3 == 0 ? specials[rng() % 7] : uint32_t(rng());
            std::memcpy(&src[i], &b, 4);
        }
        std::vector<float> dense(src.size()), back(src.size());
        s->pack_channels_last(data_type::f32, 1, 2, src.data(), l, C, sp, dense.data());
        s->unpack_channels_last(data_type::f32, 1, 2, dense.data(), back.data(), l, C, sp, true);
        ASSERT_EQ(std::memcmp(src.data(), back.data(), src.size() * 4), 0) << s->name;
        for (dim_t p = 0; p < S; ++p)
            for (dim_t c = 0; c < C; ++c)
                ASSERT_EQ(std::memcmp(&dense[size_t(p * C + c)], &src[size_t(c * S + p)], 4), 0)
                    << s->name << " pixel " << p << " channel " << c;
    }
}

}  // namespace
}  // namespace convgrad::detail
