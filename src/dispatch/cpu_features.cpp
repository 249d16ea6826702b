#include "dispatch/cpu_features.hpp"

#include <cpuid.h>

#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#if defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace convgrad::detail {
namespace {

uint64_t xgetbv0() {
    uint32_t eax, edx;
    __asm__ volatile("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
    return (uint64_t(edx) << 32) | eax;
}

// Linux keeps AMX tile data disabled until a process asks for it.
bool request_amx_permission() {
#if defined(__linux__) && defined(SYS_arch_prctl)
    constexpr int arch_req_xcomp_perm = 0x1023;
    constexpr int xfeature_xtiledata = 18;
    return syscall(SYS_arch_prctl, arch_req_xcomp_perm, xfeature_xtiledata) == 0;
#else
    return false;
#endif
}

amx_permission amx_answer = amx_permission::not_asked;

cpu_features detect() {
    using f = cpu_feature;
    cpu_features out;
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return out;
    const bool osxsave = c & (1u << 27);
    if (!osxsave) return out;
    const bool fma = c & (1u << 12), f16c = c & (1u << 29);
    // The OS must save the vector state: YMM for AVX2, opmask + ZMM for AVX-512, tiles for AMX.
    const uint64_t xcr0 = xgetbv0();
    const bool ymm_state = (xcr0 & 0x6) == 0x6;
    const bool zmm_state = (xcr0 & 0xe6) == 0xe6;
    __cpuid_count(7, 0, a, b, c, d);
    const unsigned ebx7 = b, edx7 = d;
    __cpuid_count(7, 1, a, b, c, d);
    const unsigned eax71 = a;
    auto add = [&](bool present, cpu_feature feat) {
        if (present) out = out | cpu_features{feat};
    };
    add(ymm_state && (ebx7 & (1u << 5)), f::avx2);
    add(ymm_state && fma, f::fma);
    add(ymm_state && f16c, f::f16c);
    add(zmm_state && (ebx7 & (1u << 16)), f::avx512f);
    add(zmm_state && (ebx7 & (1u << 30)), f::avx512bw);
    add(zmm_state && (ebx7 & (1u << 31)), f::avx512vl);
    add(zmm_state && (ebx7 & (1u << 17)), f::avx512dq);
    add(zmm_state && (eax71 & (1u << 5)), f::avx512_bf16);
    add(zmm_state && (edx7 & (1u << 23)), f::avx512_fp16);
    return out | amx_features(edx7, eax71, xcr0, request_amx_permission, amx_answer);
}

cpu_features cap_from_env(cpu_features detected) {
    const char *env = std::getenv("CONVGRAD_MAX_ISA");
    if (!env || !*env) return detected;
    cpu_isa cap;
    if (!parse_cpu_isa(env, cap)) return detected;
    return detected & cap_features(cap);
}

}  // namespace

cpu_features amx_features(unsigned edx7, unsigned eax71, uint64_t xcr0,
                          bool (*request_permission)(), amx_permission &answer) {
    using f = cpu_feature;
    answer = amx_permission::not_asked;
    const bool amx_tile = edx7 & (1u << 24);
    const bool tile_state = (xcr0 & (3ull << 17)) == (3ull << 17);
    if (!amx_tile || !tile_state) return {};
    // Asked once per process (detection runs once); a refusal leaves AMX out, so every AMX row
    // reports the missing features and dispatch goes on to the next kernel.
    answer = request_permission() ? amx_permission::granted : amx_permission::refused;
    if (answer == amx_permission::refused) return {};
    cpu_features out{f::amx_tile};
    if (edx7 & (1u << 22)) out = out | cpu_features{f::amx_bf16};
    if (eax71 & (1u << 21)) out = out | cpu_features{f::amx_fp16};
    return out;
}

amx_permission amx_permission_status() {
    (void)detected_features();  // detection is where the permission is asked for
    return amx_answer;
}

const char *to_string(amx_permission a) {
    switch (a) {
        case amx_permission::not_asked: return "not asked (no AMX, or tile state not enabled by the OS)";
        case amx_permission::granted: return "granted";
        case amx_permission::refused: return "refused by the OS (arch_prctl ARCH_REQ_XCOMP_PERM): AMX kernels are not used";
    }
    return "?";
}

const char *to_string(cpu_isa isa) {
    switch (isa) {
        case cpu_isa::generic: return "generic";
        case cpu_isa::avx2: return "avx2";
        case cpu_isa::avx512: return "avx512";
        case cpu_isa::avx512_bf16: return "avx512_bf16";
        case cpu_isa::avx512_fp16: return "avx512_fp16";
        case cpu_isa::amx: return "amx";
    }
    return "?";
}

bool parse_cpu_isa(const char *name, cpu_isa &out) {
    std::string s(name);
    for (char &ch : s) ch = char(std::tolower(static_cast<unsigned char>(ch)));
    for (int i = 0; i < cpu_isa_count; ++i)
        if (s == to_string(cpu_isa(i))) {
            out = cpu_isa(i);
            return true;
        }
    return false;
}

cpu_features features_of(cpu_isa isa) {
    using f = cpu_feature;
    const cpu_features avx2{f::avx2, f::fma, f::f16c};
    const cpu_features avx512 = avx2 | cpu_features{f::avx512f, f::avx512bw, f::avx512vl, f::avx512dq};
    switch (isa) {
        case cpu_isa::generic: return {};
        case cpu_isa::avx2: return avx2;
        case cpu_isa::avx512: return avx512;
        case cpu_isa::avx512_bf16: return avx512 | cpu_features{f::avx512_bf16};
        case cpu_isa::avx512_fp16: return avx512 | cpu_features{f::avx512_fp16};
        // (AVX512_BF16 too: the AMX unit rounds its results with VCVTNE2PS2BF16. Every AMX-BF16
        // CPU has it.)
        case cpu_isa::amx: return avx512 | cpu_features{f::avx512_bf16, f::amx_tile, f::amx_bf16};
    }
    return {};
}

cpu_features cap_features(cpu_isa isa) {
    cpu_features allowed;
    for (int i = 0; i <= int(isa); ++i) allowed = allowed | features_of(cpu_isa(i));
    // The top level allows everything, so that features no level names yet (AMX-FP16) stay
    // visible uncapped.
    if (isa == cpu_isa::amx) allowed = allowed | cpu_features{cpu_feature::amx_fp16};
    return allowed;
}

std::vector<cpu_isa> distinct_caps(const std::vector<cpu_isa> &levels, cpu_features detected) {
    // A cap allows every level before it too, so the caps allow growing sets: a level repeats
    // what an earlier one allows only if it repeats the last one kept.
    std::vector<cpu_isa> kept;
    for (cpu_isa l : levels)
        if (kept.empty() || (detected & cap_features(l)) != (detected & cap_features(kept.back())))
            kept.push_back(l);
    return kept;
}

cpu_isa best_isa(cpu_features available) {
    cpu_isa best = cpu_isa::generic;
    for (int i = 0; i < cpu_isa_count; ++i)
        if (available.contains(features_of(cpu_isa(i)))) best = cpu_isa(i);
    return best;
}

const char *to_string(cpu_feature f) {
    switch (f) {
        case cpu_feature::avx2: return "avx2";
        case cpu_feature::fma: return "fma";
        case cpu_feature::f16c: return "f16c";
        case cpu_feature::avx512f: return "avx512f";
        case cpu_feature::avx512bw: return "avx512bw";
        case cpu_feature::avx512vl: return "avx512vl";
        case cpu_feature::avx512dq: return "avx512dq";
        case cpu_feature::avx512_bf16: return "avx512_bf16";
        case cpu_feature::avx512_fp16: return "avx512_fp16";
        case cpu_feature::amx_tile: return "amx_tile";
        case cpu_feature::amx_bf16: return "amx_bf16";
        case cpu_feature::amx_fp16: return "amx_fp16";
        case cpu_feature::count_: break;
    }
    return "?";
}

std::string cpu_features::to_string() const {
    std::string s;
    for (uint32_t i = 0; i < uint32_t(cpu_feature::count_); ++i)
        if (has(cpu_feature(i))) {
            if (!s.empty()) s += ' ';
            s += detail::to_string(cpu_feature(i));
        }
    return s;
}

cpu_features detected_features() {
    static const cpu_features fs = detect();
    return fs;
}

cpu_features effective_features() {
    static const cpu_features fs = cap_from_env(detected_features());
    return fs;
}

bf16_dot_speed decide_bf16_dot(std::string_view vendor, unsigned family, const char *env) {
    const std::string_view forced = env ? env : "";
    if (forced == "1") return {true, {}};
    if (forced == "0") return {false, "vdpbf16ps kernels turned off by CONVGRAD_BF16_DOT=0"};
    // Zen 4 is family 0x19 (Zen 3 shares it but has no AVX512_BF16, so no such row runs there);
    // Zen 5, family 0x1a, runs it at twice the FMA rate too (measured in session 52).
    if (vendor == "AuthenticAMD" && family >= 0x19) return {true, {}};
    if (vendor == "GenuineIntel")
        return {false, "vdpbf16ps is not faster than the f32 FMA on Intel cores (measured 54 vs "
                       "88 GFLOP/s for the bf16 and f32 microkernels on a Xeon; AMX is Intel's "
                       "fast bf16 path); CONVGRAD_BF16_DOT=1 forces it"};
    return {false, "vdpbf16ps is not known to be faster than the f32 FMA on this CPU (vendor " +
                       std::string(vendor) + ", family " + std::to_string(family) +
                       "); CONVGRAD_BF16_DOT=1 forces it"};
}

const cpu_identity &cpu_identity_here() {
    static const cpu_identity id = [] {
        unsigned a = 0, b = 0, c = 0, d = 0;
        char vendor[13] = {};
        cpu_identity r;
        if (__get_cpuid(0, &a, &b, &c, &d)) {
            std::memcpy(vendor, &b, 4);
            std::memcpy(vendor + 4, &d, 4);
            std::memcpy(vendor + 8, &c, 4);
        }
        r.vendor = vendor;
        if (__get_cpuid(1, &a, &b, &c, &d)) {
            r.family = (a >> 8) & 0xf;
            if (r.family == 0xf) r.family += (a >> 20) & 0xff;
        }
        return r;
    }();
    return id;
}

const bf16_dot_speed &bf16_dot_speed_here() {
    static const bf16_dot_speed speed = [] {
        const cpu_identity &id = cpu_identity_here();
        return decide_bf16_dot(id.vendor, id.family, std::getenv("CONVGRAD_BF16_DOT"));
    }();
    return speed;
}

}  // namespace convgrad::detail
