// CPU features, detected once (CPUID + XGETBV, and the OS's permission for AMX tiles) as a set
// of bits, and capped by CONVGRAD_MAX_ISA.
//
// Kernels are built per instruction-set level (cpu_isa); a level stands for the features its
// code uses (features_of). The levels are not a chain on real hardware (a CPU may have AMX-BF16
// without AVX512_FP16, or AVX512_BF16 without AMX), so availability is always a subset test on
// the features, never a comparison of levels. Only the cap, CONVGRAD_MAX_ISA=name, reads the
// levels as an order: it allows the features of that level and of every level listed before it.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

namespace convgrad::detail {

enum class cpu_feature : uint32_t {
    avx2, fma, f16c,
    avx512f, avx512bw, avx512vl, avx512dq,
    avx512_bf16, avx512_fp16,
    amx_tile, amx_bf16, amx_fp16,
    count_
};
const char *to_string(cpu_feature f);

class cpu_features {
public:
    constexpr cpu_features() = default;
    constexpr cpu_features(std::initializer_list<cpu_feature> fs) {
        for (cpu_feature f : fs) bits_ |= bit(f);
    }
    constexpr bool has(cpu_feature f) const { return bits_ & bit(f); }
    constexpr bool contains(cpu_features o) const { return (bits_ & o.bits_) == o.bits_; }
    constexpr cpu_features operator|(cpu_features o) const { return from_bits(bits_ | o.bits_); }
    constexpr cpu_features operator&(cpu_features o) const { return from_bits(bits_ & o.bits_); }
    constexpr bool operator==(const cpu_features &) const = default;
    constexpr uint32_t bits() const { return bits_; }
    /// The features of `needed` that `have` lacks.
    static constexpr cpu_features from_missing(cpu_features needed, cpu_features have) {
        return from_bits(needed.bits_ & ~have.bits_);
    }
    /// "avx2 fma f16c ..." (empty for none).
    std::string to_string() const;

private:
    static constexpr uint32_t bit(cpu_feature f) { return 1u << uint32_t(f); }
    static constexpr cpu_features from_bits(uint32_t b) {
        cpu_features r;
        r.bits_ = b;
        return r;
    }
    uint32_t bits_ = 0;
};

/// Instruction-set levels kernels are compiled for, in the order CONVGRAD_MAX_ISA caps by.
enum class cpu_isa { generic = 0, avx2 = 1, avx512 = 2, avx512_bf16 = 3, avx512_fp16 = 4, amx = 5 };
inline constexpr int cpu_isa_count = 6;

const char *to_string(cpu_isa isa);
/// Parses "generic", "avx2", "avx512", "avx512_bf16", "avx512_fp16", "amx" (any case).
bool parse_cpu_isa(const char *name, cpu_isa &out);

/// The features a kernel of this level may use.
cpu_features features_of(cpu_isa isa);
/// What CONVGRAD_MAX_ISA=isa allows: the features of isa and of every level before it.
cpu_features cap_features(cpu_isa isa);

/// What the OS answered when the process asked for AMX tile data.
enum class amx_permission { not_asked, granted, refused };
const char *to_string(amx_permission a);

/// The AMX features from CPUID leaf 7 (edx of subleaf 0, eax of subleaf 1) and XCR0: none
/// unless the processor lists AMX-TILE and the OS enables the tile state, and then only when
/// `request_permission` (Linux: arch_prctl(ARCH_REQ_XCOMP_PERM)) is granted. `answer` says
/// which it was. A parameter so that a refusal can be tested on any machine.
cpu_features amx_features(unsigned edx7, unsigned eax71, uint64_t xcr0,
                          bool (*request_permission)(), amx_permission &answer);
/// This process's answer (detection asks once).
amx_permission amx_permission_status();

/// What the processor and OS support (AMX only once the OS granted tile data to the process).
cpu_features detected_features();
/// detected_features() within the cap of CONVGRAD_MAX_ISA (read once).
cpu_features effective_features();
/// A kernel of this level can run here.
inline bool isa_available(cpu_isa isa) { return effective_features().contains(features_of(isa)); }

/// Of `levels` (in cap order), those whose caps allow different features on a CPU that has
/// `detected`: of levels whose caps allow the same, only the first. A cap above what the CPU has
/// changes nothing, so the kernel tests under it would repeat the run under the level below.
std::vector<cpu_isa> distinct_caps(const std::vector<cpu_isa> &levels, cpu_features detected);
/// Whether CONVGRAD_MAX_ISA=cap withholds a feature of `detected`: otherwise a run under the cap
/// repeats the uncapped one.
inline bool cap_withholds(cpu_isa cap, cpu_features detected) {
    return !cap_features(cap).contains(detected);
}

/// The last level (in cap order) whose features are all present: for display.
cpu_isa best_isa(cpu_features available);
inline cpu_isa detected_isa() { return best_isa(detected_features()); }
inline cpu_isa effective_isa() { return best_isa(effective_features()); }

/// This processor's CPUID vendor string and display family (base + extended), read once.
struct cpu_identity {
    std::string vendor;
    unsigned family = 0;
};
const cpu_identity &cpu_identity_here();

/// Whether vdpbf16ps (AVX512_BF16) outruns the f32 FMA, so that bf16 kernels built on it beat
/// the f32 kernels on converted data. AMD Zen 4 and later run it at twice the FMA rate (234 vs
/// 117 GFLOP/s per core); Intel cores at about half (this Xeon: 54 GFLOP/s for the bf16
/// microkernel vs 88 for f32), and there only AMX makes bf16 faster. `reason` says why not.
struct bf16_dot_speed {
    bool fast;
    std::string reason;  // empty when fast
};
/// The decision for a CPU of this CPUID vendor string and family (display family: base +
/// extended), with the value of CONVGRAD_BF16_DOT ("1" forces fast, "0" slow; null or anything
/// else: by vendor and family).
bf16_dot_speed decide_bf16_dot(std::string_view vendor, unsigned family, const char *env);
/// decide_bf16_dot for this processor and environment (read once).
const bf16_dot_speed &bf16_dot_speed_here();
inline bool fast_bf16_dot() { return bf16_dot_speed_here().fast; }
inline const std::string &fast_bf16_dot_reason() { return bf16_dot_speed_here().reason; }
/// Whether this machine multiplies bf16 faster than f32, where some kernel can use it: AMX
/// tiles, or vdpbf16ps when it outruns the f32 FMA. fpmath_mode `any` then runs f32 ops on the
/// bf16 kernels that take them.
inline bool bf16_multiplies_faster() {
    return isa_available(cpu_isa::amx) || (isa_available(cpu_isa::avx512_bf16) && fast_bf16_dot());
}

}  // namespace convgrad::detail
