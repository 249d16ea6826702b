# Included by ctest when it reads the test list (TEST_INCLUDE_FILES, set in tests/CMakeLists.txt
# with CONVGRAD_TESTS_BIN, CONVGRAD_CAP_FILTER and CONVGRAD_AMX_CAPS): asks the test binary for
# the instruction-set levels of the kernel inventory and adds, per level, a run of the kernel
# tests with CONVGRAD_MAX_ISA=<level>, so that every row runs on this machine up to what it has
# (the binary leaves out a level whose cap allows on this CPU just what a lower one allows: its
# run would be a repeat, e.g. cap amx on an AVX2 machine, whose AVX-512 rows run emulated under
# cap avx2). A level added to the inventory adds its cap run here without editing any CMake file.
execute_process(COMMAND "${CONVGRAD_TESTS_BIN}" --kernel-isa-levels
                OUTPUT_VARIABLE levels RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  # A test that fails and shows why, rather than no cap runs at all.
  add_test(kernels_vs_reference_cap_levels "${CONVGRAD_TESTS_BIN}" --kernel-isa-levels)
  return()
endif()
string(REGEX REPLACE "\n$" "" levels "${levels}")
string(REPLACE "\n" ";" levels "${levels}")
list(GET levels 0 lowest)
list(GET levels -1 highest)
foreach(isa IN LISTS levels)
  add_test(kernels_vs_reference_cap_${isa} "${CONVGRAD_TESTS_BIN}" "--gtest_filter=${CONVGRAD_CAP_FILTER}")
  # Label cap_between: the caps strictly between the lowest and the highest. The highest cap's
  # run already runs every inventory row this CPU can (KernelRow.*), so what the runs between
  # add is dispatch under those caps and the rows they emulate; the sanitizer job leaves them
  # out (scripts/ci-hardening.sh: 130-140 s each under ASan on Zen 4), scripts/test.sh runs all.
  if(NOT isa STREQUAL lowest AND NOT isa STREQUAL highest)
    set_tests_properties(kernels_vs_reference_cap_${isa} PROPERTIES LABELS cap_between)
  endif()
  # COST: ctest starts the costliest tests first. The cap runs are the longest (under ASan on an
  # AVX2 machine, cap avx2 192 s of a 356 s ctest); numbered near the end, a fresh build's ctest
  # started them last and left the other core idle while they finished.
  set_tests_properties(kernels_vs_reference_cap_${isa} PROPERTIES
                       ENVIRONMENT CONVGRAD_MAX_ISA=${isa} COST 1000)
endforeach()

# The AMX tests under each cap of CONVGRAD_AMX_CAPS that withholds a feature this CPU has: cap
# avx512_fp16 refuses the native AMX paths only on a machine with AMX; elsewhere the run would
# repeat the AMX tests' own (on an AVX2 machine it took 34 s under ASan).
foreach(isa IN LISTS CONVGRAD_AMX_CAPS)
  execute_process(COMMAND "${CONVGRAD_TESTS_BIN}" --cap-withholds ${isa}
                  OUTPUT_QUIET ERROR_QUIET RESULT_VARIABLE withholds)
  if(NOT withholds MATCHES "^[01]$")  # (an error: a test that fails and shows why)
    add_test(amx_cap_${isa}_query "${CONVGRAD_TESTS_BIN}" --cap-withholds ${isa})
  elseif(withholds EQUAL 0)
    add_test(amx_cap_${isa} "${CONVGRAD_TESTS_BIN}" "--gtest_filter=*Amx*")
    # Label amx_cap: the sanitizer job leaves these out (60 s under ASan on Zen 5); the AMX
    # tests' emulated paths run there uncapped, and scripts/test.sh checks the caps' refusals.
    set_tests_properties(amx_cap_${isa} PROPERTIES ENVIRONMENT CONVGRAD_MAX_ISA=${isa} LABELS amx_cap)
  endif()
endforeach()
