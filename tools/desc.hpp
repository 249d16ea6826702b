// benchdnn conv/deconv problem descriptors ("mb32ic512ih8oc256oh16kh4sh2ph1") and the ops built
// from them.
#pragma once

#include <string>

#include "convgrad/convgrad.hpp"

namespace convgrad::tool {

/// A problem as benchdnn's conv and deconv drivers describe it. For the ConvTranspose family
/// (deconv), i* and ic are ConvTranspose's src and o*/oc its dst, as in benchdnn's deconv
/// driver. Spatial arrays are d, h, w; a 2-D problem has d = 1, a 1-D one d = h = 1.
struct conv_desc {
    std::string name;
    int nsp = 2;
    dim_t g = 1, mb = 1, ic = 0, oc = 0;
    dim_t i[3] = {1, 1, 1}, o[3] = {1, 1, 1}, k[3] = {1, 1, 1};
    dim_t s[3] = {1, 1, 1}, dl[3] = {0, 0, 0};  // dilation 0-based, as benchdnn writes it
    dim_t pb[3] = {0, 0, 0}, pe[3] = {0, 0, 0};

    /// Descriptor string, only the spatial axes the problem has ("g1mb2ic3ih8oc4oh8kh3ph1").
    std::string str(bool with_mb = true) const;
};

/// Parses a descriptor. Missing sizes follow benchdnn: a square/cubic problem when only the
/// first spatial size is given, o* computed from the others (symmetric pads) when absent, and
/// the end pads computed from o* when it is given. `deconv`: ConvTranspose-family meaning.
/// Throws convgrad::error (invalid_arguments) with the reason.
/// `empty_batch`: mb0 is accepted (the library's own descriptors of a batch-0 problem).
conv_desc parse_desc(const std::string &text, bool deconv, bool empty_batch = false);

/// The op of `kind` for the problem (NXC data with XIO/XOI weights, or with `ncx` PyTorch's
/// layouts: NCX data with OIX/IOX weights; output shapes given), tensor ids 0, 1 (inputs) and 2
/// (output); Convolution and ConvTranspose get no bias.
op make_op(op_kind kind, const conv_desc &d, data_type dt, bool ncx = false);

/// Number of products summed into one output element (upper bound) of an op, from the
/// compiled partition's canonical problem descriptor.
double terms_per_output(op_kind kind, const std::string &problem_desc);

}  // namespace convgrad::tool
