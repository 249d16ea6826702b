#include "convgrad/version.hpp"

namespace convgrad {

// Compiled into the library: the values of the headers the library itself was built with.
version_info version() noexcept {
    return {CONVGRAD_VERSION_MAJOR, CONVGRAD_VERSION_MINOR, CONVGRAD_VERSION_PATCH, CONVGRAD_VERSION_STRING};
}

}  // namespace convgrad
