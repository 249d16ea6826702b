// The entry points of amx_ukernel_native.cpp, the one unit compiled with the AMX flags.
// Callers go through ukernel() (amx_ukernel.hpp), which checks arguments and availability.
#pragma once

#include "kernels/amx/amx_ukernel.hpp"

namespace convgrad::detail::amx::native {

bool built(amx_dot dot);
void run(amx_dot dot, const ukernel_args &args);
void load_full_config();
void release();
void finish_rows(const c_rows &r);

}  // namespace convgrad::detail::amx::native
