// Scalar bf16/f16 <-> f32 over n contiguous elements (exact widening, nearest-even narrowing):
// the tails of the vector conversions and the whole of the SSE2 ones. Included inside each
// ISA's namespace (see direct_conv_impl.hpp for why nothing is shared between ISA units).

static inline void widen_scalar(data_type dt, const uint16_t *x, float *y, dim_t n) {
#ifdef __F16C__
    // vcvtph2ps per element: the portable bit manipulation made short f16 runs (the tails, and
    // the block transposes of a few rows) ten times slower than bf16's shift. Exact either way.
    if (dt == data_type::f16) {
        for (dim_t i = 0; i < n; ++i) y[i] = _cvtsh_ss(x[i]);
        return;
    }
#endif
    for (dim_t i = 0; i < n; ++i) y[i] = dt == data_type::bf16 ? bf16_to_float(x[i]) : f16_to_float(x[i]);
}
static inline void narrow_scalar(data_type dt, const float *x, uint16_t *y, dim_t n) {
    for (dim_t i = 0; i < n; ++i) y[i] = dt == data_type::bf16 ? float_to_bf16(x[i]) : float_to_f16(x[i]);
}
