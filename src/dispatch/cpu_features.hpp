// Instruction sets, detected once (CPUID + XGETBV) and capped by CONVGRAD_MAX_ISA.
#pragma once

namespace convgrad::detail {

// Ordered: each level includes the ones below it.
enum class cpu_isa { generic = 0, avx2 = 1, avx512 = 2, avx512_bf16 = 3, avx512_fp16 = 4, amx = 5 };

const char *to_string(cpu_isa isa);
/// Parses "generic", "avx2", "avx512", "avx512_bf16", "avx512_fp16", "amx" (any case).
bool parse_cpu_isa(const char *name, cpu_isa &out);

/// What the processor and OS support.
cpu_isa detected_isa();
/// detected_isa() capped by CONVGRAD_MAX_ISA (read once).
cpu_isa effective_isa();

}  // namespace convgrad::detail
