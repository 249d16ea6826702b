#include "kernels/amx/amx_emulation.hpp"

#include <cfloat>
#include <cmath>
#include <cstring>
#include <string>

#include "convgrad/types.hpp"
#include "core/float_convert.hpp"

namespace convgrad::detail::amx {

namespace {
[[noreturn]] void fault(const std::string &what) {
    throw error(status::invalid_arguments, "AMX: " + what);
}
}  // namespace

void check_tile_config(const tile_config &cfg) {
    if (cfg.palette_id > 1)
        fault("ldtilecfg: palette " + std::to_string(cfg.palette_id) +
              " does not exist (0 or 1), #GP");
    if (cfg.palette_id == 0) return;  // palette 0: the initial state, everything else ignored
    for (uint8_t b : cfg.reserved_0)
        if (b) fault("ldtilecfg: reserved bytes 2-15 must be zero, #GP");
    for (int t = 0; t < 16; ++t) {
        const int r = cfg.rows[t], cb = cfg.colsb[t];
        const std::string name = "tmm" + std::to_string(t);
        if (t >= max_tiles && (r || cb))
            fault("ldtilecfg: palette 1 has 8 tiles; " + name + " must have rows = colsb = 0, #GP");
        if (r > max_rows)
            fault("ldtilecfg: " + name + " has " + std::to_string(r) + " rows, at most 16, #GP");
        if (cb > max_colsb)
            fault("ldtilecfg: " + name + " has " + std::to_string(cb) +
                  " bytes per row, at most 64, #GP");
        if ((r == 0) != (cb == 0))
            fault("ldtilecfg: " + name + " has rows = " + std::to_string(r) +
                  " and colsb = " + std::to_string(cb) + "; both or neither must be zero, #GP");
    }
}

void check_dot_product_tiles(const tile_config &cfg, int c, int a, int b) {
    auto valid = [&](int t) { return t >= 0 && t < max_tiles && cfg.rows[t] != 0; };
    if (cfg.palette_id != 1) fault("tile dot product without a tile configuration, #UD");
    if (!valid(c) || !valid(a) || !valid(b)) fault("tile dot product on an unconfigured tile, #UD");
    if (c == a || c == b || a == b) fault("tile dot product with one tile as two operands, #UD");
    const std::string shapes =
        ": C " + std::to_string(cfg.rows[c]) + "x" + std::to_string(cfg.colsb[c]) + "B, A " +
        std::to_string(cfg.rows[a]) + "x" + std::to_string(cfg.colsb[a]) + "B, B " +
        std::to_string(cfg.rows[b]) + "x" + std::to_string(cfg.colsb[b]) + "B, #UD";
    if (cfg.colsb[c] % 4 || cfg.colsb[a] % 4 || cfg.colsb[b] % 4)
        fault("tile dot product: bytes per row must be multiples of 4" + shapes);
    if (cfg.rows[c] != cfg.rows[a] || cfg.colsb[a] / 4 != cfg.rows[b] ||
        cfg.colsb[c] != cfg.colsb[b])
        fault(
            "tile dot product: tile shapes do not chain (C.rows = A.rows, A.colsb/4 = B.rows, "
            "C.colsb = B.colsb)" +
            shapes);
}

namespace emu {
namespace {

struct tile_state {
    tile_config cfg;  // palette 0: released
    alignas(64) unsigned char data[max_tiles][tile_bytes];
};
thread_local tile_state state;

void require_tile(int t, const char *insn) {
    if (state.cfg.palette_id != 1) fault(std::string(insn) + " without a tile configuration, #UD");
    if (t < 0 || t >= max_tiles || state.cfg.rows[t] == 0)
        fault(std::string(insn) + ": tmm" + std::to_string(t) + " is not configured, #UD");
}

float daz(float x) {
    return std::fpclassify(x) == FP_SUBNORMAL ? std::copysign(0.0f, x) : x;
}

// The float nearest p + c (ties to even), flushed to zero when tiny after rounding. p and c are
// doubles holding exact values (a product of two floats has at most 48 significant bits). Their
// sum is rounded to odd in double (53 bits, >= 24 + 2), so that rounding that to float is the
// correct single rounding of the exact sum.
float round_to_float_ftz(double p, double c) {
    double s = p + c;
    if (!std::isfinite(s)) return float(s);
    const double pp = s - c;
    const double err = (p - (s - pp)) + (c - pp);  // p + c == s + err exactly (TwoSum)
    if (err != 0) {
        uint64_t bits;
        std::memcpy(&bits, &s, 8);
        if ((bits & 1) == 0) s = std::nextafter(s, err > 0 ? INFINITY : -INFINITY);
    }
    if (std::fabs(s) < double(FLT_MIN)) {
        // Tiny after rounding with an unbounded exponent: round s scaled into the normal range.
        const float scaled = float(s * 0x1p32);
        if (std::fabs(scaled) < FLT_MIN * 0x1p32f) return std::copysign(0.0f, float(s));
    }
    return float(s);
}

using widen_fn = float (*)(uint16_t);
float widen_bf16(uint16_t h) {
    return bf16_to_float(h);
}
float widen_f16(uint16_t h) {
    return f16_to_float(h);
}

void tile_dot_product(int c, int a, int b, widen_fn widen, const char *insn) {
    if (state.cfg.palette_id != 1) fault(std::string(insn) + " without a tile configuration, #UD");
    check_dot_product_tiles(state.cfg, c, a, b);
    const tile_config &cfg = state.cfg;
    const int rows = cfg.rows[c], cols = cfg.colsb[c] / 4, pairs = cfg.colsb[a] / 4;
    for (int m = 0; m < rows; ++m) {
        float temp[2 * max_colsb / 4] = {};
        uint16_t arow[2 * max_colsb / 4];
        std::memcpy(arow, state.data[a] + m * max_colsb, max_colsb);
        for (int k = 0; k < pairs; ++k) {
            uint16_t brow[2 * max_colsb / 4];
            std::memcpy(brow, state.data[b] + k * max_colsb, max_colsb);
            const float a0 = widen(arow[2 * k]), a1 = widen(arow[2 * k + 1]);
            for (int n = 0; n < cols; ++n) {
                temp[2 * n] = fma_daz_ftz(temp[2 * n], a0, widen(brow[2 * n]));
                temp[2 * n + 1] = fma_daz_ftz(temp[2 * n + 1], a1, widen(brow[2 * n + 1]));
            }
        }
        float crow[max_colsb / 4] = {};  // columns beyond C.colsb are zeroed
        std::memcpy(crow, state.data[c] + m * max_colsb, size_t(cols) * 4);
        for (int n = 0; n < cols; ++n)
            crow[n] = add_daz_ftz(crow[n], add_daz_ftz(temp[2 * n], temp[2 * n + 1]));
        std::memcpy(state.data[c] + m * max_colsb, crow, max_colsb);
    }
    std::memset(state.data[c] + rows * max_colsb, 0, size_t(max_rows - rows) * max_colsb);
}

}  // namespace

float fma_daz_ftz(float acc, float a, float b) {
    return round_to_float_ftz(double(daz(a)) * double(daz(b)), double(daz(acc)));
}
float add_daz_ftz(float x, float y) {
    return round_to_float_ftz(double(daz(x)), double(daz(y)));
}

void ldtilecfg(const tile_config &cfg) {
    check_tile_config(cfg);
    if (cfg.palette_id == 1 && cfg.start_row != 0)
        fault(
            "ldtilecfg: start_row != 0 (an interrupted tile load) is not modelled by the "
            "emulation");
    state.cfg = cfg.palette_id == 0 ? tile_config{} : cfg;
    std::memset(state.data, 0, sizeof state.data);  // ldtilecfg zeroes every tile
}

void tilerelease() {
    state.cfg = tile_config{};
    std::memset(state.data, 0, sizeof state.data);
}

const tile_config &current_config() {
    return state.cfg;
}

void tilezero(int t) {
    require_tile(t, "tilezero");
    std::memset(state.data[t], 0, tile_bytes);
}

void tileloadd(int t, const void *base, int64_t stride_bytes) {
    require_tile(t, "tileloadd");
    const int rows = state.cfg.rows[t], cb = state.cfg.colsb[t];
    std::memset(state.data[t], 0, tile_bytes);  // bytes beyond colsb and rows beyond rows: zero
    for (int r = 0; r < rows; ++r)
        std::memcpy(state.data[t] + r * max_colsb,
                    static_cast<const unsigned char *>(base) + r * stride_bytes, size_t(cb));
}

void tilestored(int t, void *base, int64_t stride_bytes) {
    require_tile(t, "tilestored");
    const int rows = state.cfg.rows[t], cb = state.cfg.colsb[t];
    for (int r = 0; r < rows; ++r)
        std::memcpy(static_cast<unsigned char *>(base) + r * stride_bytes,
                    state.data[t] + r * max_colsb, size_t(cb));
}

void tdpbf16ps(int c, int a, int b) {
    tile_dot_product(c, a, b, widen_bf16, "tdpbf16ps");
}
void tdpfp16ps(int c, int a, int b) {
    tile_dot_product(c, a, b, widen_f16, "tdpfp16ps");
}

}  // namespace emu
}  // namespace convgrad::detail::amx
