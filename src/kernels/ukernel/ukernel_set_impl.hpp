// The definition of this unit's `ukernels` (ukernel_set.hpp), included inside the ISA namespace
// after brgemm_impl.hpp (in a unit compiled in parts, by its TABLES part). The unit defines
// UKERNEL_SET_NAME, UKERNEL_SET_ISA and UKERNEL_SET_NREGS.

// The microkernel tables (declared in brgemm_impl.hpp): every tile of this unit is
// instantiated here.
constinit const kernel_table<brgemm_f32_args, f32_ukernel> f32_ukernels{};
#ifdef CONVGRAD_UKERNEL_BF16
constinit const kernel_table<brgemm_bf16_args, bf16_ukernel> bf16_ukernels{};
#endif

#ifdef CONVGRAD_UKERNEL_BF16
static void dpbf16_lanes(const float *acc, const uint16_t *a, const uint16_t *b, float *out,
                         dim_t n) {
    for (dim_t i = 0; i + vt::W <= n; i += vt::W)
        vt::store(out + i, vt::dot_bf16(vt::load(acc + i), vt::load_pairs(a + 2 * i),
                                        vt::load_pairs(b + 2 * i)));
}
#endif

constinit const ukernel_set ukernels{
    UKERNEL_SET_NAME,
    UKERNEL_SET_ISA,
    vt::W,
    UKERNEL_SET_NREGS,
    &call_f32_ukernel,
#ifdef CONVGRAD_UKERNEL_BF16
    &call_bf16_ukernel,
#ifdef CONVGRAD_NATIVE_VDPBF16PS
    true,
#else
    false,
#endif
    &dpbf16_lanes,
#else
    nullptr,          false,           nullptr,
#endif
#ifdef UKERNEL_SET_EMULATED
    true,
#endif
};
