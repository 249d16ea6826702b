// The test binary's entry point: Google Test, plus
//   --kernel-isa-levels   prints the instruction-set levels the kernel inventory is built for,
//                         one a line, and exits (tests/isa_caps.cmake runs the kernel tests
//                         under each of them as a CONVGRAD_MAX_ISA cap). Levels whose caps
//                         allow the same features on this CPU are printed once, the first of
//                         them: on an AVX2 machine, caps avx512 and amx would repeat avx2's run;
//   --cap-withholds ISA   prints yes (exit 0) if CONVGRAD_MAX_ISA=ISA withholds a feature this
//                         CPU has, else no (exit 1): tests/isa_caps.cmake runs the AMX tests under
//                         such caps only, where the run differs from the uncapped one;
// and, after the tests, one line saying which inventory rows ran natively, which emulated and
// which were skipped (with the reason), so that a machine's gaps show in every log.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>

#include "dispatch/cpu_features.hpp"
#include "util/kernel_check.hpp"

namespace {

class kernel_summary final : public ::testing::EmptyTestEventListener {
    void OnTestProgramEnd(const ::testing::UnitTest &) override {
        const auto &seen = convgrad::testing::row_modes_seen();
        if (seen.empty()) return;
        std::string native, emulated, skipped;
        for (const auto &[name, mode] : seen) {
            if (mode == "native")
                native += " " + name;
            else if (mode.rfind("native, ", 0) == 0)  // "native, emulated where <reason>"
                native += " " + name + " (" + mode.substr(std::strlen("native, ")) + ")";
            else if (mode == "emulated")
                emulated += " " + name;
            else
                skipped += " " + name + " (" + mode.substr(std::strlen("skipped: ")) + ")";
        }
        std::printf("kernel rows: native:%s; emulated:%s; skipped:%s\n",
                    native.empty() ? " none" : native.c_str(),
                    emulated.empty() ? " none" : emulated.c_str(),
                    skipped.empty() ? " none" : skipped.c_str());
    }
};

}  // namespace

int main(int argc, char **argv) {
    for (int i = 1; i < argc; ++i)
        if (std::strcmp(argv[i], "--kernel-isa-levels") == 0) {
            using namespace convgrad::detail;
            for (cpu_isa l : distinct_caps(inventory_isa_levels(), detected_features()))
                std::printf("%s\n", to_string(l));
            return 0;
        }
    for (int i = 1; i + 1 < argc; ++i)
        if (std::strcmp(argv[i], "--cap-withholds") == 0) {
            using namespace convgrad::detail;
            cpu_isa cap;
            if (!parse_cpu_isa(argv[i + 1], cap)) {
                std::fprintf(stderr, "--cap-withholds: unknown instruction-set level '%s'\n",
                             argv[i + 1]);
                return 2;
            }
            const bool withholds = cap_withholds(cap, detected_features());
            std::printf("%s\n", withholds ? "yes" : "no");
            return withholds ? 0 : 1;
        }
    ::testing::InitGoogleTest(&argc, argv);
    ::testing::UnitTest::GetInstance()->listeners().Append(new kernel_summary);
    return RUN_ALL_TESTS();
}
