#include "core/op_error.hpp"

namespace convgrad::detail {

std::string to_string(const dims &d) {
    std::string s = "[";
    for (size_t i = 0; i < d.size(); ++i) {
        if (i) s += ",";
        s += d[i] == unknown_dim ? std::string("?") : std::to_string(d[i]);
    }
    return s + "]";
}

void op_error::fail(status code, const std::string &subject, const std::string &rule,
                    const std::string &expected, const std::string &actual) const {
    std::string m = o_.describe() + ": " + subject + ": " + rule;
    if (!expected.empty() || !actual.empty()) m += "; expected " + expected + ", got " + actual;
    throw error(code, m);
}

std::string op_error::tensor_subject(const char *role, const logical_tensor &lt) const {
    return std::string("tensor '") + role + "' (id " + std::to_string(lt.id()) + ")";
}

}  // namespace convgrad::detail
