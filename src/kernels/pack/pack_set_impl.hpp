// The definition of this unit's `packers` (packed_formats.hpp), included inside the ISA
// namespace after packers_impl.hpp. The unit defines UKERNEL_SET_NAME and UKERNEL_SET_ISA.

constinit const pack_set packers{
    UKERNEL_SET_NAME,   UKERNEL_SET_ISA,     vt::W,
    &pack_f32_panel,    &unpack_f32_panel,   &pack_bf16_pairs,
    &unpack_bf16_pairs, &pack_channels_last, &unpack_channels_last,
    &vt::widen,         &vt::narrow,
};
