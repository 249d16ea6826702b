// Helpers of the io tests: where oneDNN's case files are, reading a file.
#pragma once

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

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

}  // namespace convgrad::testing
