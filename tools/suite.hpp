// The built-in benchmark suite: real network layers for the three backward ops and their
// forward siblings.
#pragma once

#include <vector>

namespace convgrad::tool {

struct suite_layer {
    const char *name;
    bool deconv;       // ConvTranspose family (desc in benchdnn's deconv meaning)
    const char *desc;  // benchdnn descriptor with the default batch
    const char *note;  // where the layer comes from
};

/// Conv-family layers run as Convolution, ConvolutionBackwardData, ConvolutionBackwardWeights;
/// ConvTranspose-family layers as ConvTranspose, ConvTransposeBackwardData,
/// ConvTransposeBackwardWeights. Batches are chosen so that each runs 0.1-2 GFLOP.
const std::vector<suite_layer> &default_suite();

}  // namespace convgrad::tool
