# Installs dprl into WORK_DIR/prefix, then configures, builds and runs every program of
# tests/embed/project three times: with CMake's default flags, with -march=native (a consumer
# whose instruction set differs from the library's), and with AddressSanitizer. A fourth build
# compiles the accounting program alone against find_package(dprl COMPONENTS privacy) with
# yaml-cpp, Box2D, MuJoCo and HDF5 hidden from CMake. Finally docs/embedding.md must contain every
# program verbatim.
# LAUNCHER (optional): the compiler launcher of the outer build (ccache).
set(examples env_loop accountant mlp direct_learner experiment run_hooks)
file(READ ${SOURCE_DIR}/docs/embedding.md doc)
foreach(example ${examples})
  file(READ ${SOURCE_DIR}/tests/embed/project/${example}.cpp text)
  string(FIND "${doc}" "```cpp\n${text}```" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "docs/embedding.md does not show tests/embed/project/${example}.cpp "
                        "verbatim (in a cpp code block)")
  endif()
endforeach()

file(REMOVE_RECURSE ${WORK_DIR})
execute_process(COMMAND ${CMAKE_COMMAND} --install ${BINARY_DIR} --prefix ${WORK_DIR}/prefix
                        --component dprl_dev
                RESULT_VARIABLE rc OUTPUT_QUIET)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "cmake --install failed (${rc})")
endif()
set(launcher)
if(LAUNCHER)
  set(launcher -DCMAKE_CXX_COMPILER_LAUNCHER=${LAUNCHER})
endif()
set(flags_default "")
set(flags_native "-march=native")
set(flags_asan "-fsanitize=address -fno-omit-frame-pointer")
set(flags_privacy "")
foreach(variant default native asan privacy)
  set(dir ${WORK_DIR}/build-${variant})
  set(link_flags "")
  set(extra "")
  set(programs ${examples})
  if(variant STREQUAL "asan")
    set(link_flags "-fsanitize=address")
  elseif(variant STREQUAL "privacy")
    set(extra -DDPRL_EMBED_PRIVACY_ONLY=ON -DCMAKE_DISABLE_FIND_PACKAGE_yaml-cpp=ON
              -DCMAKE_DISABLE_FIND_PACKAGE_box2d=ON -DCMAKE_DISABLE_FIND_PACKAGE_mujoco=ON
              -DCMAKE_DISABLE_FIND_PACKAGE_HDF5=ON)
    set(programs accountant)
  endif()
  execute_process(COMMAND ${CMAKE_COMMAND} -S ${SOURCE_DIR}/tests/embed/project -B ${dir} -G Ninja
                          -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix
                          "-DCMAKE_CXX_FLAGS=${flags_${variant}}"
                          "-DCMAKE_EXE_LINKER_FLAGS=${link_flags}" ${launcher} ${extra}
                  RESULT_VARIABLE rc OUTPUT_QUIET)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "configuring the embedding project (${variant}) failed (${rc})")
  endif()
  execute_process(COMMAND ${CMAKE_COMMAND} --build ${dir} -j2 RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "building the embedding project (${variant}) failed (${rc})")
  endif()
  foreach(program ${programs})
    execute_process(COMMAND ${dir}/${program} WORKING_DIRECTORY ${dir} RESULT_VARIABLE rc)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "the embedding program ${program} (${variant}) exited ${rc}")
    endif()
  endforeach()
  if(variant STREQUAL "privacy")
    # the link line names no library of the other components
    file(READ ${dir}/build.ninja ninja)
    foreach(lib dprl_engine dprl_envs dprl_algos yaml-cpp box2d mujoco hdf5)
      string(FIND "${ninja}" "${lib}" at)
      if(NOT at EQUAL -1)
        message(FATAL_ERROR "the privacy-only program links ${lib}")
      endif()
    endforeach()
  endif()
endforeach()
