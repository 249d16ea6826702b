#pragma once

namespace convgrad {
inline constexpr const char *version_string = "0.1.0";
}
