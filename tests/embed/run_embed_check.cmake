# Installs dprl into WORK_DIR/prefix, then configures, builds and runs every program of
# tests/embed/project three times: with CMake's default flags, with -march=native (a consumer
# whose instruction set differs from the library's), and with AddressSanitizer (which reports a
# buffer freed by the other side's allocator, the failure mode of mismatched Eigen settings).
# LAUNCHER (optional): the compiler launcher of the outer build (ccache).
file(REMOVE_RECURSE ${WORK_DIR})
execute_process(COMMAND ${CMAKE_COMMAND} --install ${BINARY_DIR} --prefix ${WORK_DIR}/prefix
                        --component dprl_dev
                RESULT_VARIABLE rc OUTPUT_QUIET)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "cmake --install failed (${rc})")
endif()
set(examples env_loop accountant mlp direct_learner experiment)
set(launcher)
if(LAUNCHER)
  set(launcher -DCMAKE_CXX_COMPILER_LAUNCHER=${LAUNCHER})
endif()
set(flags_default "")
set(flags_native "-march=native")
set(flags_asan "-fsanitize=address -fno-omit-frame-pointer")
foreach(variant default native asan)
  set(dir ${WORK_DIR}/build-${variant})
  set(link_flags "")
  if(variant STREQUAL "asan")
    set(link_flags "-fsanitize=address")
  endif()
  execute_process(COMMAND ${CMAKE_COMMAND} -S ${SOURCE_DIR}/tests/embed/project -B ${dir} -G Ninja
                          -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix
                          "-DCMAKE_CXX_FLAGS=${flags_${variant}}"
                          "-DCMAKE_EXE_LINKER_FLAGS=${link_flags}" ${launcher}
                  RESULT_VARIABLE rc OUTPUT_QUIET)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "configuring the embedding project (${variant}) failed (${rc})")
  endif()
  execute_process(COMMAND ${CMAKE_COMMAND} --build ${dir} -j2 RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "building the embedding project (${variant}) failed (${rc})")
  endif()
  foreach(example ${examples})
    execute_process(COMMAND ${dir}/${example} WORKING_DIRECTORY ${dir} RESULT_VARIABLE rc)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "the embedding example ${example} (${variant}) exited ${rc}")
    endif()
  endforeach()
endforeach()
