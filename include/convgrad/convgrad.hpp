// convgrad: the convolution ops of the oneDNN Graph API and their gradients, on x86 CPUs.
#pragma once

#include "convgrad/graph.hpp"
#include "convgrad/logical_tensor.hpp"
#include "convgrad/op.hpp"
#include "convgrad/threads.hpp"
#include "convgrad/types.hpp"
#include "convgrad/version.hpp"
