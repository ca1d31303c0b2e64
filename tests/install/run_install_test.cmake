# ctest's install_consumer: `cmake --install` of this build into a fresh prefix, checks on what
# landed there, then configures, builds and runs tests/install/consumer against that prefix.
#   cmake -DNORMJIT_BUILD_DIR=... -DCONSUMER_SOURCE_DIR=... -DWORK_DIR=... -DGENERATOR=...
#         -DC_COMPILER=... -DCXX_COMPILER=... -DEXPECTED_VERSION=... -P run_install_test.cmake
# WORK_DIR is wiped first, and removed again when everything passed (kept on failure).
cmake_minimum_required(VERSION 3.20)
foreach(var NORMJIT_BUILD_DIR CONSUMER_SOURCE_DIR WORK_DIR GENERATOR C_COMPILER CXX_COMPILER EXPECTED_VERSION)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "run_install_test.cmake: pass -D${var}=... (tests/CMakeLists.txt does).")
  endif()
endforeach()

set(prefix ${WORK_DIR}/prefix)
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})

# run(STEP command...): runs it, shows its output, and stops the test if it failed; its stdout
# is left in last_output. capture(...) is the same without showing the output.
function(capture step)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message("${out}${err}")
    message(FATAL_ERROR "install test: ${step} failed (${rc}); its files are kept in ${WORK_DIR}.")
  endif()
  set(last_output "${out}" PARENT_SCOPE)
endfunction()
function(run step)
  capture("${step}" ${ARGN})
  message("${last_output}")
  set(last_output "${last_output}" PARENT_SCOPE)
endfunction()

run("cmake --install" ${CMAKE_COMMAND} --install ${NORMJIT_BUILD_DIR} --prefix ${prefix})

# Public headers may include each other and the standard library, nothing else: a consumer
# has no LLVM, toml++ or CUDA headers.
file(GLOB_RECURSE headers ${prefix}/include/*)
if(NOT headers)
  message(FATAL_ERROR "install test: no headers under ${prefix}/include.")
endif()
foreach(header IN LISTS headers)
  file(STRINGS ${header} includes REGEX "^[ \t]*#[ \t]*include")
  foreach(line IN LISTS includes)
    string(REGEX MATCH "include[ \t]*(<[^>]*>|\"[^\"]*\")" target "${line}")
    set(target "${CMAKE_MATCH_1}")
    if(target MATCHES "^\"(normjit/[a-z_]+\\.(h|hpp))\"$")
      if(NOT EXISTS ${prefix}/include/${CMAKE_MATCH_1})
        message(FATAL_ERROR "install test: ${header} includes ${target}, which was not installed.")
      endif()
    elseif(NOT target MATCHES "^<([a-z_]+|std(def|int|bool|lib|io)\\.h|string\\.h)>$")
      message(FATAL_ERROR "install test: ${header} includes ${target}: installed headers may include only "
                          "normjit/ headers and the standard library.")
    endif()
  endforeach()
endforeach()

# The library: versioned, with the SONAME an executable records, and needing only the C and
# C++ runtimes (LLVM is linked in, libcuda and libnvrtc are opened with dlopen).
file(GLOB sonames ${prefix}/lib*/libnormjit.so.[0-9])
list(LENGTH sonames count)
if(NOT count EQUAL 1)
  message(FATAL_ERROR "install test: expected one libnormjit.so.<major> under ${prefix}, found '${sonames}'.")
endif()
get_filename_component(soname ${sonames} NAME)
get_filename_component(libdir ${sonames} DIRECTORY)
if(NOT EXISTS ${libdir}/libnormjit.so OR NOT EXISTS ${prefix}/bin/normjit
   OR NOT EXISTS ${libdir}/cmake/normjit/normjitConfig.cmake
   OR NOT EXISTS ${libdir}/cmake/normjit/normjitConfigVersion.cmake)
  message(FATAL_ERROR "install test: the prefix lacks libnormjit.so, bin/normjit or the CMake package files.")
endif()
find_program(READELF readelf REQUIRED)
capture("readelf -d" ${READELF} -d ${sonames})
if(NOT last_output MATCHES "\\(SONAME\\)[^\n]*\\[${soname}\\]")
  message(FATAL_ERROR "install test: the SONAME of ${sonames} is not ${soname}.")
endif()
if(last_output MATCHES "\\((RUNPATH|RPATH)\\)[^\n]*\\[([^]\n]*)\\]")
  message(FATAL_ERROR "install test: the installed library keeps a ${CMAKE_MATCH_1} (${CMAKE_MATCH_2}); "
                      "it needs none and must not point into the build tree.")
endif()
string(REGEX MATCHALL "\\(NEEDED\\)[^\n]*\\[[^]\n]*\\]" needed "${last_output}")
if(NOT needed)
  message(FATAL_ERROR "install test: readelf -d ${sonames} shows no NEEDED entry; cannot check what it links.")
endif()
set(libs "")
foreach(entry IN LISTS needed)
  string(REGEX REPLACE ".*\\[(.*)\\]" "\\1" lib "${entry}")
  list(APPEND libs ${lib})
  if(NOT lib MATCHES "^(libc|libm|libstdc\\+\\+|libgcc_s|libpthread|libdl|librt)\\.so|^ld-linux")
    message(FATAL_ERROR "install test: the installed library needs ${lib}; it should need only the C and C++ runtimes.")
  endif()
endforeach()
list(JOIN libs ", " libs)
message("install test: ${sonames}: SONAME ${soname}, no RUNPATH, needs ${libs}")

# The consumer, against the prefix alone (no package registries: only CMAKE_PREFIX_PATH).
run("configuring the consumer" ${CMAKE_COMMAND} -S ${CONSUMER_SOURCE_DIR} -B ${WORK_DIR}/build -G ${GENERATOR}
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_COMPILER=${C_COMPILER} -DCMAKE_CXX_COMPILER=${CXX_COMPILER}
    -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF
    -DCMAKE_FIND_USE_SYSTEM_PACKAGE_REGISTRY=OFF
    -DNORMJIT_EXPECTED_PREFIX=${prefix} -DNORMJIT_EXPECTED_VERSION=${EXPECTED_VERSION})
run("building the consumer" ${CMAKE_COMMAND} --build ${WORK_DIR}/build)

# Run with no LD_LIBRARY_PATH: the consumer must find the installed library by itself.
set(env ${CMAKE_COMMAND} -E env --unset=LD_LIBRARY_PATH NORMJIT_CACHE_DIR=${WORK_DIR}/cache)
run("running consumer_c" ${env} ${WORK_DIR}/build/consumer_c)
if(NOT last_output MATCHES "libnormjit: ([^\n]*)")
  message(FATAL_ERROR "install test: consumer_c did not say where libnormjit was loaded from.")
endif()
cmake_path(IS_PREFIX prefix "${CMAKE_MATCH_1}" NORMALIZE installed)
if(NOT installed)
  message(FATAL_ERROR "install test: consumer_c loaded ${CMAKE_MATCH_1}, not the library installed in ${prefix}.")
endif()
run("running consumer_cpp" ${env} ${WORK_DIR}/build/consumer_cpp)

file(REMOVE_RECURSE ${WORK_DIR})
message("install test: passed")
