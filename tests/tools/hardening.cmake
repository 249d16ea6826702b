# The CLI reproducers of issue 11: each bad input or option gives exit status 2 and a message
# naming the option, file, tensor or op (never a crash, std::terminate or foreign exception);
# batch 0 runs and passes its check. Included from tests/tools/CMakeLists.txt.
set(H ${CMAKE_CURRENT_SOURCE_DIR}/data/hardening)
set(EXPECT ${CMAKE_CURRENT_SOURCE_DIR}/expect_exit.sh)
set(TOOL $<TARGET_FILE:convgrad_tool>)

function(convgrad_cli_case name status regex)
  add_test(NAME cli_${name} COMMAND ${EXPECT} ${status} ${regex} ${ARGN})
  set_tests_properties(cli_${name} PROPERTIES LABELS cli_errors)
endfunction()

convgrad_cli_case(threads_huge 2 "--threads: must be between 1 and 1024, got 100000"
                  ${TOOL} run ${H}/conv_2d_small.json --threads=100000)
convgrad_cli_case(threads_zero 2 "--threads: must be between 1 and 1024, got 0"
                  ${TOOL} run ${H}/conv_2d_small.json --threads=0)
convgrad_cli_case(threads_negative 2 "--threads: must be between 1 and 1024, got -3"
                  ${TOOL} run ${H}/conv_2d_small.json --threads=-3)
convgrad_cli_case(batch_threads_zero 2 "--threads: must be between 1 and 1024, got 0"
                  ${TOOL} batch ${H}/conv_2d_small.json --threads=0)
convgrad_cli_case(omp_num_threads_huge 2 "OMP_NUM_THREADS: must be between 1 and 1024, got 100000"
                  env OMP_NUM_THREADS=100000 ${TOOL} run ${H}/conv_2d_small.json)
convgrad_cli_case(in_shapes_dim_too_long 2 "--in-shapes.*99999999999999999999.*does not fit a 64-bit integer"
                  ${TOOL} run ${H}/conv_2d_small.json --in-shapes=0:99999999999999999999x32x28x28)
convgrad_cli_case(in_shapes_id_too_long 2 "--in-shapes.*id '99999999999999999999999' does not fit"
                  ${TOOL} run ${H}/conv_2d_small.json --in-shapes=99999999999999999999999:1x2)
convgrad_cli_case(input_id_too_long 2 "--input '99999999999999999999999=x.npy': tensor id .* is too large"
                  ${TOOL} run ${H}/conv_2d_small.json --input=99999999999999999999999=x.npy)
convgrad_cli_case(npy_dim_too_long 2 "huge_dim.npy: malformed .npy header \\(shape dimension 99999999999999999999999 does not fit"
                  ${TOOL} run ${H}/conv_2d_small.json --input=0=${H}/huge_dim.npy)
convgrad_cli_case(npy_duplicate_key 2 "duplicate_key.npy: malformed .npy header \\(key 'shape' given twice"
                  ${TOOL} run ${H}/conv_2d_small.json --input=0=${H}/duplicate_key.npy)
convgrad_cli_case(json_number_too_large 2 "huge_number.json: invalid JSON"
                  ${TOOL} run ${H}/huge_number.json)
convgrad_cli_case(mb_overflows_strides 2 "--mb 58546812335685632: tensor 0: size overflow"
                  ${TOOL} run ${H}/conv_3d_small.json --mb=58546812335685632)
convgrad_cli_case(tensor_too_large_named 2 "out_of_memory.*tensor 0 \\(f32 \\[100000,8,1000,1000\\]\\): cannot allocate"
                  ${TOOL} run ${H}/conv_2d_small.json --in-shapes=0:100000x8x1000x1000)
convgrad_cli_case(bench_threads_zero 2 "--threads: must be between 1 and 1024"
                  ${TOOL} bench --threads=0 --no-onednn mb1ic16ih8oc16oh8kh3ph1)
convgrad_cli_case(bench_offset_not_a_float_step 2 "--offset: must be a multiple of 4 from 0 to 60 bytes. got 6"
                  ${TOOL} bench --offset=6 --no-onednn mb1ic16ih8oc16oh8kh3ph1)
convgrad_cli_case(bench_offset_past_a_line 2 "--offset: must be a multiple of 4 from 0 to 60 bytes. got 64"
                  ${TOOL} bench --offset=64 --no-onednn mb1ic16ih8oc16oh8kh3ph1)
convgrad_cli_case(bench_stat_unknown 2 "--stat: must be median or min. got 'mean'"
                  ${TOOL} bench --stat=mean --no-onednn mb1ic16ih8oc16oh8kh3ph1)
# (Not an error: the statistic that --stat=min selects is named in the report.)
convgrad_cli_case(bench_stat_min_named 0 "timing: the fastest execution of each op \\(--stat=min\\)"
                  ${TOOL} bench --stat=min --budget-ms=1 --no-onednn --op=Convolution mb1ic16ih8oc16oh8kh3ph1)
convgrad_cli_case(missing_case_file 2 "no_such_case.json: cannot open"
                  ${TOOL} run ${H}/no_such_case.json)
convgrad_cli_case(missing_harness_file 2 "no_such_harness: cannot open"
                  ${TOOL} batch ${H}/no_such_harness)
convgrad_cli_case(batch_zero_runs 0 "PASS"
                  ${TOOL} run ${H}/conv_2d_small.json --mb=0 --check)
convgrad_cli_case(batch_zero_bf16_runs 0 "PASS"
                  ${TOOL} run ${H}/conv_3d_small.json --mb=0 --dt=bf16 --check)

# Memory exhaustion inside a parallel region of the reference (2 threads, 1.2 GB of address
# space): the out_of_memory error, not std::terminate. An address-space cap cannot be combined
# with AddressSanitizer's shadow memory: label `rlimit`, excluded from the sanitizer job.
add_test(NAME cli_out_of_memory_in_parallel_region
         COMMAND sh -c "ulimit -v 1200000 && exec \"$0\" 2 \"$1\" \"$2\" run \"$3\" --impl=reference --threads=2"
                 ${EXPECT} "out_of_memory.*Convolution \\(op 0.*kernel ref:any could not allocate" ${TOOL}
                 ${H}/conv_1d_50M.json)
set_tests_properties(cli_out_of_memory_in_parallel_region PROPERTIES LABELS "cli_errors;rlimit")
