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

cpu_isa detect() {
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return cpu_isa::generic;
    const bool osxsave = c & (1u << 27), fma = c & (1u << 12), f16c = c & (1u << 29);
    if (!osxsave) return cpu_isa::generic;
    const uint64_t xcr0 = xgetbv0();
    const bool ymm_state = (xcr0 & 0x6) == 0x6;
    const bool zmm_state = (xcr0 & 0xe6) == 0xe6;
    __cpuid_count(7, 0, a, b, c, d);
    const unsigned ebx7 = b, edx7 = d;
    const bool avx2 = ebx7 & (1u << 5);
    const bool avx512f = ebx7 & (1u << 16), avx512dq = ebx7 & (1u << 17),
               avx512bw = ebx7 & (1u << 30), avx512vl = ebx7 & (1u << 31);
    const bool avx512fp16 = edx7 & (1u << 23);
    const bool amx_bf16 = edx7 & (1u << 22), amx_tile = edx7 & (1u << 24);
    __cpuid_count(7, 1, a, b, c, d);
    const bool avx512bf16 = a & (1u << 5);

    cpu_isa isa = cpu_isa::generic;
    if (!(ymm_state && avx2 && fma && f16c)) return isa;
    isa = cpu_isa::avx2;
    if (!(zmm_state && avx512f && avx512dq && avx512bw && avx512vl)) return isa;
    isa = cpu_isa::avx512;
    if (!avx512bf16) return isa;
    isa = cpu_isa::avx512_bf16;
    if (!avx512fp16) return isa;
    isa = cpu_isa::avx512_fp16;
    const bool tile_state = (xcr0 & (3ull << 17)) == (3ull << 17);
    if (amx_bf16 && amx_tile && tile_state && request_amx_permission()) isa = cpu_isa::amx;
    return isa;
}

cpu_isa cap_from_env(cpu_isa detected) {
    const char *env = std::getenv("CONVGRAD_MAX_ISA");
    if (!env || !*env) return detected;
    cpu_isa cap;
    if (!parse_cpu_isa(env, cap)) return detected;
    return cap < detected ? cap : detected;
}

}  // namespace

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
    for (int i = 0; i <= int(cpu_isa::amx); ++i)
        if (s == to_string(cpu_isa(i))) {
            out = cpu_isa(i);
            return true;
        }
    return false;
}

cpu_isa detected_isa() {
    static const cpu_isa isa = detect();
    return isa;
}

cpu_isa effective_isa() {
    static const cpu_isa isa = cap_from_env(detected_isa());
    return isa;
}

}  // namespace convgrad::detail
