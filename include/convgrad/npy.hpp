// NumPy .npy files: format versions 1.0, 2.0 and 3.0, little-endian, C or Fortran order, with
// float32 ('<f4'), float16 ('<f2') and int32 ('<i4') data. bf16 tensors are read from and
// written to float32 files (widening is exact; narrowing rounds to nearest, ties to even).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "convgrad/graph.hpp"

namespace convgrad::npy {

/// The contents of a .npy file, data kept as in the file (little-endian, file order).
struct CONVGRAD_API array {
    data_type dtype = data_type::f32;  // f32, f16 or s32
    dims shape;                        // () is a scalar
    bool fortran_order = false;
    std::vector<uint8_t> data;

    dim_t element_count() const;
    /// Element at a logical (row-major over `shape`) index, as a double.
    double get(dim_t logical) const;
};

/// Parses a .npy image; `source` names it in errors. Throws convgrad::error.
CONVGRAD_API array parse(const void *bytes, size_t size, const std::string &source = "<npy>");
CONVGRAD_API array read_file(const std::string &path);

/// Serializes with the lowest format version that fits the header (1.0 unless the header
/// exceeds 65535 bytes), or exactly `version` (1, 2 or 3) when given.
CONVGRAD_API std::vector<uint8_t> serialize(const array &a, int version = 0);
CONVGRAD_API void write_file(const std::string &path, const array &a, int version = 0);

/// The file type that holds a tensor of this type (bf16 -> f32).
CONVGRAD_API data_type file_type_for(data_type tensor_type);

/// Copies a file into a tensor's memory (any strides). The file's shape must equal the
/// tensor's, and its type must be the tensor's (f32 for a bf16 tensor).
CONVGRAD_API void load_into(const array &a, const tensor &t, const std::string &source = "<npy>");
CONVGRAD_API void load_file(const std::string &path, const tensor &t);

/// Copies a tensor (any strides) into an array in C order (bf16 widened to f32).
CONVGRAD_API array from_tensor(const tensor &t);
CONVGRAD_API void save_file(const std::string &path, const tensor &t, int version = 0);

}  // namespace convgrad::npy
