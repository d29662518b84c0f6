# Installs dprl's public headers as include/dprl/<folder>/... (run by `cmake --install`, component
# dprl_dev). Every header under DPRL_HEADER_DIRS is installed except those named in
# DPRL_INTERNAL_HEADERS (file names: helpers of the .cpp files, or headers that expose a third-party
# library), whatever subfolder they live in. Their includes of one another are rewritten from
# "engine/x.hpp" to "dprl/engine/x.hpp", so a consumer needs only <prefix>/include on its path and
# includes <dprl/...>: no bare engine/, envs/, privacy/ or algos/ folder reaches its search path.
# An installed header that includes an internal one fails the installation.
# Inputs: DPRL_SOURCE_DIR, DPRL_STAGE_DIR (scratch, in the build tree), DPRL_HEADER_DIRS,
# DPRL_INTERNAL_HEADERS, DPRL_GENERATED_DIR and DPRL_GENERATED_HEADERS (relative to it).
cmake_policy(PUSH)
cmake_policy(SET CMP0057 NEW)  # if(IN_LIST) in an install script
set(folders_regex "")
foreach(dir ${DPRL_HEADER_DIRS})
  if(folders_regex)
    string(APPEND folders_regex "|")
  endif()
  string(APPEND folders_regex "${dir}")
endforeach()

set(headers "")  # "root|relative path" pairs
foreach(dir ${DPRL_HEADER_DIRS})
  file(GLOB_RECURSE found RELATIVE ${DPRL_SOURCE_DIR} ${DPRL_SOURCE_DIR}/${dir}/*.hpp)
  foreach(rel ${found})
    get_filename_component(name ${rel} NAME)
    if(NOT name IN_LIST DPRL_INTERNAL_HEADERS)
      list(APPEND headers "${DPRL_SOURCE_DIR}|${rel}")
    endif()
  endforeach()
endforeach()
foreach(rel ${DPRL_GENERATED_HEADERS})
  list(APPEND headers "${DPRL_GENERATED_DIR}|${rel}")
endforeach()

set(installed "")
foreach(pair ${headers})
  string(REPLACE "|" ";" parts "${pair}")
  list(GET parts 1 rel)
  list(APPEND installed "dprl/${rel}")
endforeach()

file(REMOVE_RECURSE ${DPRL_STAGE_DIR})
foreach(pair ${headers})
  string(REPLACE "|" ";" parts "${pair}")
  list(GET parts 0 root)
  list(GET parts 1 rel)
  file(READ ${root}/${rel} text)
  string(REGEX REPLACE "#include \"(${folders_regex})/" "#include \"dprl/\\1/" text "${text}")
  string(REGEX MATCHALL "#include \"dprl/[^\"]+\"" includes "${text}")
  foreach(inc ${includes})
    string(REGEX REPLACE "#include \"(.*)\"" "\\1" target "${inc}")
    if(NOT target IN_LIST installed)
      message(FATAL_ERROR "${rel} is installed but includes ${target}, which is not "
                          "(DPRL_INTERNAL_HEADERS in CMakeLists.txt)")
    endif()
  endforeach()
  file(WRITE ${DPRL_STAGE_DIR}/dprl/${rel} "${text}")
endforeach()
file(INSTALL ${DPRL_STAGE_DIR}/dprl DESTINATION "${CMAKE_INSTALL_PREFIX}/include")
cmake_policy(POP)
