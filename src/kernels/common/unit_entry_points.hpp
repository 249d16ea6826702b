// The run functions of a kernel unit compiled from the common kernel source over one set of
// vector traits (kernels/<isa>/), declared once for every such unit: this file is included
// inside the unit's namespace (avx2, avx512, avx512_emu), so a unit and its emulation offer the
// same entry points. No include guard, on purpose. The plan types must be declared first.

void run_direct(const direct_plan &pl, const conv_args &args);
void run_col2im(const col2im_plan &pl, const conv_args &args);
void run_few_oc(const few_oc_plan &pl, const conv_args &args);
void run_grouped(const direct_plan &pl, const conv_args &args);
void run_depthwise(const dw_plan &pl, const conv_args &args);
void run_depthwise_ncx(const dw_ncx_plan &pl, const conv_args &args);
void run_gemm(const gemm_plan &pl, const conv_args &args);
