#include "threading/parallel.hpp"

#include <omp.h>

namespace convgrad::detail {

int max_threads() { return omp_get_max_threads(); }

}  // namespace convgrad::detail
