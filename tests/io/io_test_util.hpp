// Helpers of the io tests (and of the tool's rewrite tests): where oneDNN's case files are,
// reading a file, a small Convolution graph in JSON, expecting a convgrad::error.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "convgrad/convgrad.hpp"

namespace convgrad::testing {

/// ../shared/cases/onednn/op/f32 beside the repository (empty path when absent).
inline std::filesystem::path onednn_case_dir() {
    const auto p = std::filesystem::path(__FILE__).parent_path() / ".." / ".." / ".." / "shared" /
                   "cases" / "onednn" / "op" / "f32";
    return std::filesystem::exists(p) ? std::filesystem::canonical(p) : std::filesystem::path();
}

inline std::vector<std::filesystem::path> onednn_case_files() {
    std::vector<std::filesystem::path> v;
    const auto dir = onednn_case_dir();
    if (dir.empty()) return v;
    for (const auto &e : std::filesystem::directory_iterator(dir))
        if (e.path().extension() == ".json") v.push_back(e.path());
    std::sort(v.begin(), v.end());
    return v;
}

inline std::string slurp(const std::filesystem::path &p) {
    std::ifstream f(p, std::ios::binary);
    std::ostringstream s;
    s << f.rdbuf();
    return s.str();
}

/// A 1x1 Convolution, src [2,3,4,4] NCX, weights [5,3,1,1] OIX.
inline const char *conv_json = R"({"graph": [{"id": 0, "name": "c", "kind": "Convolution",
  "attrs": {"strides": {"type": "s64[]", "value": [1, 1]}, "pads_begin": {"type": "s64[]", "value": [0, 0]},
            "pads_end": {"type": "s64[]", "value": [0, 0]}, "dilations": {"type": "s64[]", "value": [1, 1]},
            "data_format": {"type": "string", "value": "NCX"}, "weights_format": {"type": "string", "value": "OIX"}},
  "inputs": [{"id": 0, "dtype": "f32", "shape": [2, 3, 4, 4], "stride": [48, 16, 4, 1], "layout_type": "strided"},
             {"id": 1, "dtype": "f32", "shape": [5, 3, 1, 1], "stride": [3, 1, 1, 1], "layout_type": "strided"}],
  "outputs": [{"id": 2, "dtype": "f32", "shape": [2, 5, 4, 4], "stride": [80, 16, 4, 1], "layout_type": "strided"}]}]})";

// Fails the test on any exception other than convgrad::error (gtest reports it as thrown).
inline void expect_error(const std::function<void()> &f, status code,
                         const std::vector<std::string> &needles) {
    try {
        f();
    } catch (const error &e) {
        EXPECT_EQ(e.code(), code) << e.what();
        for (const auto &n : needles)
            EXPECT_NE(std::string(e.what()).find(n), std::string::npos) << e.what();
        return;
    }
    ADD_FAILURE() << "no error";
}

}  // namespace convgrad::testing
