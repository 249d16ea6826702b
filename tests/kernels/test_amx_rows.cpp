// The rows the AMX schedules copy in (kernels/amx/amx_rows.hpp, row_io::copy_line): every
// pixel's channels land in their slot of the zero-padded line, converted to the tiles' type,
// and nothing else changes: 1-9 channels (the few-channel path of the stem's 3, and the
// conversions), slots of the padded even count, 4 and 8, pixels apart by their channels or
// more (a channel offset into the pixel), margins. The source line ends exactly at its last
// channel, in a buffer of its own that the sanitizer builds bound, so no read may pass it.
#include <gtest/gtest.h>

#include <memory>
#include <random>
#include <string>
#include <vector>

#include "core/float_convert.hpp"
#include "kernels/amx/amx_rows.hpp"

namespace convgrad::detail::amx {
namespace {

TEST(AmxRows, CopyLinePutsEveryChannelInItsSlotAndNothingElse) {
    const row_io io = row_io::here();
    std::mt19937 rng(5);
    int cases = 0;
    for (data_type dt : {data_type::bf16, data_type::f16, data_type::f32})
        for (amx_dot to : {amx_dot::bf16, amx_dot::f16})
            for (int64_t n = 1; n <= 9; ++n)
                for (int64_t cp : {n + (n & 1), int64_t(4), int64_t(8)})
                    for (int64_t extra : {0, 1, 5})  // elements between pixels past n
                        for (int64_t w : {1, 2, 7, 33})
                            for (int64_t margin : {0, 3}) {
                                if (cp < n) continue;
                                const int64_t c0 = extra > 0 ? 1 : 0, ws = n + extra;
                                // The line ends at its last pixel's last channel.
                                const int64_t elems = (w - 1) * ws + c0 + n;
                                const size_t esize = dt == data_type::f32 ? 4 : 2;
                                std::unique_ptr<unsigned char[]> src(
                                    new unsigned char[size_t(elems) * esize]);
                                for (int64_t e = 0; e < elems; ++e) {
                                    const float v = float(int(rng() % 200) - 100) / 8;
                                    if (dt == data_type::f32)
                                        reinterpret_cast<float *>(src.get())[e] = v;
                                    else
                                        reinterpret_cast<uint16_t *>(src.get())[e] =
                                            dt == data_type::bf16 ? float_to_bf16(v)
                                                                  : float_to_f16(v);
                                }
                                const int64_t slots = (margin + w + 2) * cp;
                                std::vector<uint16_t> out(size_t(slots), 0);
                                std::vector<float> tmp(size_t(w * n));
                                io.copy_line(dt, src.get(), 0, ws, 1, w, c0, n, false, margin, cp,
                                             to, out.data(), tmp.data());
                                const std::string what =
                                    std::string(to_string(dt)) + " n" + std::to_string(n) + " cp" +
                                    std::to_string(cp) + " ws" + std::to_string(ws) + " w" +
                                    std::to_string(w) + " margin" + std::to_string(margin);
                                for (int64_t slot = 0; slot < slots; ++slot) {
                                    const int64_t x = slot / cp - margin, c = slot % cp;
                                    const uint16_t want =
                                        x >= 0 && x < w && c < n
                                            ? narrow_element(dt, src.get(), x * ws + c0 + c, to)
                                            : uint16_t(0);
                                    ASSERT_EQ(out[size_t(slot)], want) << what << " slot " << slot;
                                }
                                ++cases;
                            }
    std::printf("[ amx rows ] copy_line: %d lines\n", cases);
}

}  // namespace
}  // namespace convgrad::detail::amx
