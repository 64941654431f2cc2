# One step of the package tests, run by ctest as `cmake -DSTEP=<step> ... -P step.cmake`:
#   stage          configure, build and install fusor from SOURCE into WORK/stage
#   find_package   build and test the consumer against WORK/stage with CXX (clang: imports the module)
#   add_subdirectory  build and test the consumer with fusor's source tree added as a subdirectory
#   project        configure and build the project SRC in BUILD with ARGS, then run BUILD/EXE if given
#                  (without EXE it only builds: a gpu program then runs as its own ctest entry)
#   pkg_config     compile the header consumer with the flags `pkg-config --cflags --libs fusor` gives
#   conan          `conan create` with conan/debian.profile (g++), then `conan test` of test_package
#                  with conan/debian-clang.profile (imports the module); CONAN_HOME is WORK/conan-home
cmake_minimum_required(VERSION 3.28)

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    list(JOIN ARGN " " cmd)
    message(FATAL_ERROR "package test step '${STEP}' failed (exit ${rc}): ${cmd}")
  endif()
endfunction()
# a fresh configure and build of one project, as a user would run them
function(configure_and_build src build)
  file(REMOVE_RECURSE ${build})
  run(${CMAKE_COMMAND} -S ${src} -B ${build} -G Ninja -DCMAKE_MAKE_PROGRAM=${MAKE_PROGRAM} ${ARGN})
  run(${CMAKE_COMMAND} --build ${build})
endfunction()
set(stage ${WORK}/stage)

if(STEP STREQUAL "stage")
  file(REMOVE_RECURSE ${stage})
  # docs/packaging.md's recipe (its three OFF options and the prefix), with this build's compiler
  # and CUDA choice: it builds no program, and installs exactly the files the page lists
  configure_and_build(${SOURCE} ${WORK}/fusor-build -DCMAKE_CXX_COMPILER=${CXX}
      -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX=${stage} -DFUSOR_BUILD_TESTS=OFF -DFUSOR_BUILD_BENCH=OFF
      -DFUSOR_BUILD_EXAMPLES=OFF -DFUSOR_CUDA=${CUDA} ${CUDA_COMPILER})
  run(${CMAKE_COMMAND} --install ${WORK}/fusor-build)
  file(GLOB_RECURSE installed RELATIVE ${stage} ${stage}/*)
  set(unexpected "")
  foreach(f IN LISTS installed)
    if(NOT f MATCHES "^include/fusor/.*\\.(hpp|cuh)$" AND NOT f MATCHES "^lib[^/]*(/[^/]+)?/cmake/fusor/[^/]+\\.cmake$" AND
       NOT f STREQUAL "share/fusor/modules/fusor.cppm" AND NOT f STREQUAL "share/pkgconfig/fusor.pc" AND
       NOT f STREQUAL "share/licenses/fusor/LICENSE")
      list(APPEND unexpected ${f})
    endif()
  endforeach()
  foreach(f IN ITEMS include/fusor/fusor.hpp share/fusor/modules/fusor.cppm share/pkgconfig/fusor.pc
                     share/licenses/fusor/LICENSE)
    if(NOT f IN_LIST installed)
      list(APPEND unexpected "(missing) ${f}")
    endif()
  endforeach()
  if(unexpected)
    message(FATAL_ERROR "the install differs from docs/packaging.md's list: ${unexpected}")
  endif()
  list(LENGTH installed count)
  message(STATUS "installed ${count} files, as docs/packaging.md lists them")
elseif(STEP STREQUAL "find_package" OR STEP STREQUAL "add_subdirectory")
  set(build ${WORK}/consumer-${STEP})
  if(STEP STREQUAL "find_package")
    set(how -DCMAKE_PREFIX_PATH=${stage} -DREQUIRE_MODULE=${MODULE} -DEXPECT_CUDA_TARGET=${CUDA_TARGET})
  else()
    set(how -DFUSOR_SOURCE_DIR=${SOURCE})  # fusor's defaults: nvcc on the PATH must not turn CUDA on
  endif()
  # a Release build as a user would configure it, at -O1: the consumer checks that fusor is found,
  # builds and links (and imports the module), not its speed; -O1 about halves the build
  configure_and_build(${SOURCE}/tests/package/consumer ${build} -DCMAKE_CXX_COMPILER=${CXX} -DCMAKE_BUILD_TYPE=Release
                      "-DCMAKE_CXX_FLAGS_RELEASE=-O1 -DNDEBUG" ${how})
  run(${CMAKE_CTEST_COMMAND} --test-dir ${build} --output-on-failure)
elseif(STEP STREQUAL "project")
  configure_and_build(${SRC} ${BUILD} ${ARGS})
  if(EXE)
    run(${BUILD}/${EXE})
  endif()
elseif(STEP STREQUAL "pkg_config")
  set(ENV{PKG_CONFIG_PATH} ${stage}/share/pkgconfig)
  execute_process(COMMAND ${PKG_CONFIG} --cflags --libs fusor OUTPUT_VARIABLE flags RESULT_VARIABLE rc
                  OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "pkg-config does not find fusor in ${stage}/share/pkgconfig")
  endif()
  message(STATUS "pkg-config --cflags --libs fusor: ${flags}")
  # dependencies by their own pkg-config names: no library file paths, nothing twice
  file(READ ${stage}/share/pkgconfig/fusor.pc pc)
  if(pc MATCHES "/[^ \n]*\\.(so|a)[ \n]")
    message(FATAL_ERROR "fusor.pc names a library by its path (expected Requires or -l flags):\n${pc}")
  endif()
  string(REGEX MATCH "\nLibs:[^\n]*" libs "${pc}")
  string(REPLACE " " ";" libs "${libs}")
  set(seen "")
  foreach(l IN LISTS libs)
    if(l MATCHES "^-l" AND l IN_LIST seen)
      message(FATAL_ERROR "fusor.pc links ${l} twice:\n${pc}")
    endif()
    list(APPEND seen ${l})
  endforeach()
  separate_arguments(flags UNIX_COMMAND "${flags}")
  run(${CXX} -O1 ${SOURCE}/tests/package/consumer/headers_main.cpp ${flags} -o ${WORK}/headers_pkg_config)
  run(${WORK}/headers_pkg_config)
elseif(STEP STREQUAL "conan")
  set(ENV{CONAN_HOME} ${WORK}/conan-home)
  file(REMOVE_RECURSE ${WORK}/conan-home ${WORK}/conan-test-gcc ${WORK}/conan-test-clang)
  # test_package builds inside its folder: copies keep the source tree clean
  file(COPY ${SOURCE}/test_package/ DESTINATION ${WORK}/conan-test-gcc PATTERN build EXCLUDE)
  file(COPY ${SOURCE}/test_package/ DESTINATION ${WORK}/conan-test-clang PATTERN build EXCLUDE)
  run(${CONAN} create ${SOURCE} -pr:a ${SOURCE}/conan/debian.profile --no-remote -tf ${WORK}/conan-test-gcc)
  execute_process(COMMAND ${CONAN} test ${WORK}/conan-test-clang fusor/0.1.0 -pr:a ${SOURCE}/conan/debian-clang.profile
                          --no-remote RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  message("${out}")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "conan test with conan/debian-clang.profile failed (exit ${rc})")
  endif()
  # test_package skips the module program where fusor::module is unavailable: here it must run
  if(NOT out MATCHES "fusor test_package \\(import fusor;\\): sum 10000\\.0\n")
    message(FATAL_ERROR "conan test did not build and run the module program (test_package_module)")
  endif()
else()
  message(FATAL_ERROR "unknown STEP '${STEP}'")
endif()
