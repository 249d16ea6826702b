// Error messages that name the op, the tensor or attribute, the rule, expected and actual values.
#pragma once

#include <sstream>
#include <string>

#include "convgrad/op.hpp"

namespace convgrad::detail {

std::string to_string(const dims &d);  // "[1,32,28,28]", unknown dims as "?"

/// Builds the one message format used by every check of an op.
class op_error {
public:
    explicit op_error(const op &o) : o_(o) {}

    /// "<Kind> (op <id>): <subject>: <rule>; expected <expected>, got <actual>"
    [[noreturn]] void fail(status code, const std::string &subject, const std::string &rule,
                           const std::string &expected = {}, const std::string &actual = {}) const;

    std::string tensor_subject(const char *role, const logical_tensor &lt) const;
    static std::string attr_subject(const std::string &name) { return "attribute '" + name + "'"; }

private:
    const op &o_;
};

template <typename T>
std::string str(const T &v) {
    std::ostringstream os;
    os << v;
    return os.str();
}

}  // namespace convgrad::detail
