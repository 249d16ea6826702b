// The AMX tile configuration (palette 1) as ldtilecfg reads it from memory, and the check that
// rejects what the hardware would fault on.
//
// Palette 1 (Sapphire Rapids and later): 8 tiles tmm0-tmm7, each up to 16 rows of up to 64 bytes.
// ldtilecfg raises #GP for: a palette other than 0 or 1, non-zero reserved bytes, rows > 16,
// colsb > 64, a tile with rows == 0 but colsb != 0 or the reverse, any setting of tiles 8-15.
// The TMUL instructions raise #UD when the shapes of their three tiles do not chain
// (C.rows == A.rows, A.colsb / 4 == B.rows, C.colsb == B.colsb), a tile is unconfigured,
// a colsb is not a multiple of 4, or two operands are the same tile.
// (Intel SDM vol. 2, LDTILECFG and TDPBF16PS, "Exceptions: AMX-E4"; vol. 1, ch. 18.)
//
// The emulation (amx_emulation.hpp) turns each of these into a convgrad::error. Natively they
// are preconditions: amx_ukernel only builds configurations that pass check_tile_config, and its
// tests run every configuration it builds through the check.
#pragma once

#include <cstdint>

namespace convgrad::detail::amx {

inline constexpr int max_tiles = 8;      // palette 1: tmm0-tmm7
inline constexpr int max_rows = 16;      // rows per tile
inline constexpr int max_colsb = 64;     // bytes per row
inline constexpr int tile_bytes = 1024;  // max_rows * max_colsb

/// The 64-byte memory operand of ldtilecfg, field for field.
struct alignas(64) tile_config {
    uint8_t palette_id = 0;
    uint8_t start_row = 0;
    uint8_t reserved_0[14] = {};
    uint16_t colsb[16] = {};  // bytes per row of tmm0..; only the first 8 may be non-zero
    uint8_t rows[16] = {};

    bool operator==(const tile_config &) const = default;

    /// Tile t gets `r` rows of `cb` bytes.
    void set(int t, int r, int cb) {
        rows[t] = uint8_t(r);
        colsb[t] = uint16_t(cb);
    }
};
static_assert(sizeof(tile_config) == 64);

/// convgrad::error (invalid_arguments) naming the field when ldtilecfg would raise #GP on cfg.
void check_tile_config(const tile_config &cfg);

/// convgrad::error (invalid_arguments) when TDPBF16PS / TDPFP16PS with these tiles would raise
/// #UD under cfg (unconfigured tile, shapes that do not chain, an operand used twice).
void check_dot_product_tiles(const tile_config &cfg, int c, int a, int b);

}  // namespace convgrad::detail::amx
