# What fusor::fusor links, found the same way by fusor's own build and by an installed
# fusorConfig.cmake (there each lookup is a find_dependency, so a missing one makes
# find_package(fusor) fail with the dependency's name instead of a broken target).
# In: FUSOR_OPENMP (ON/OFF), FUSOR_ONEDNN (AUTO/ON/OFF). Out: the targets fusor::cblas (CBLAS and
# LAPACK), fusor::fftw, fusor::zip and fusor::onednn (empty where oneDNN is not used), plus xsimd, BLAS::BLAS, LAPACK::LAPACK, Threads::Threads and (with FUSOR_OPENMP) OpenMP::OpenMP_CXX.
# Per directory: imported targets are visible only below the directory that created them, so a
# sibling directory that also calls find_package(fusor) must create its own.
include_guard(DIRECTORY)
include(CMakeFindDependencyMacro)

macro(_fusor_require)
  if(FUSOR_FROM_CONFIG)
    find_dependency(${ARGN})
  else()
    find_package(${ARGN} REQUIRED)
  endif()
endmacro()
macro(_fusor_fail message)
  if(FUSOR_FROM_CONFIG)
    set(fusor_FOUND FALSE)
    set(fusor_NOT_FOUND_MESSAGE "${message}")
    return()
  else()
    message(FATAL_ERROR "fusor: ${message}")
  endif()
endmacro()

# Debian's xsimd config names the xtl target without finding it: find xtl first.
find_package(xtl QUIET)
_fusor_require(xsimd)
if(FUSOR_OPENMP)
  _fusor_require(OpenMP COMPONENTS CXX)
endif()
_fusor_require(Threads)

# .npz archives (io/npz.hpp) are zip files written and read by libzip (Debian: libzip-dev), as
# fusor::zip. pkg-config first: Debian's libzip CMake package fails to load (a hard error, even
# QUIET) unless the zipcmp, zipmerge and ziptool programs are installed too; its CMake package
# where there is no pkg-config file (a libzip built with CMake elsewhere).
if(NOT TARGET fusor::zip)
  find_package(PkgConfig QUIET)
  if(PkgConfig_FOUND)
    pkg_check_modules(FUSOR_LIBZIP QUIET IMPORTED_TARGET libzip)
  endif()
  if(FUSOR_LIBZIP_FOUND)
    set(_fusor_zip_target PkgConfig::FUSOR_LIBZIP)
  else()
    find_package(libzip CONFIG QUIET)
    if(NOT TARGET libzip::zip)
      _fusor_fail("libzip was found neither through pkg-config nor as a CMake package; install libzip-dev")
    endif()
    set(_fusor_zip_target libzip::zip)
  endif()
  add_library(fusor::zip INTERFACE IMPORTED)
  set_target_properties(fusor::zip PROPERTIES INTERFACE_LINK_LIBRARIES ${_fusor_zip_target})
endif()

# GEMM goes to CBLAS. Any CBLAS works: pick one with -DBLA_VENDOR=... (FindBLAS), and point
# FUSOR_CBLAS_INCLUDE_DIR at its cblas.h if it is not on the default paths.
#
# With GCC's OpenMP, and no BLAS chosen, OpenBLAS's OpenMP build (libgomp) is preferred where it
# is installed (Debian's libopenblas-openmp-dev, beside the system's default pthreads build): one
# thread team for BLAS and fusor's loops, as with FFTW below. The pthreads build's threads spin after each call
# while fusor's OpenMP team works, and the team's threads spin while BLAS works: on two cores a
# transformer block's training step took 210 ms on two threads against 122 ms on one; with the
# OpenMP build two threads are faster than one. The directory goes first on the library path for
# FindBLAS alone; the build's run path (CMake adds the directory of a library it links by full
# path) makes programs load that build rather than the system's default.
set(_fusor_blas_openmp_dir "")
if(FUSOR_OPENMP AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND NOT DEFINED BLA_VENDOR AND NOT DEFINED CACHE{BLAS_LIBRARIES})
  foreach(_dir /usr/lib/${CMAKE_LIBRARY_ARCHITECTURE}/openblas-openmp /usr/local/lib/openblas-openmp)
    if(NOT _fusor_blas_openmp_dir AND EXISTS ${_dir}/libopenblas.so)
      set(_fusor_blas_openmp_dir ${_dir})
    endif()
  endforeach()
endif()
# BLAS or LAPACK: from that directory when there is one (FindBLAS and FindLAPACK look there first)
macro(_fusor_require_blas package)
  if(_fusor_blas_openmp_dir)
    set(_fusor_saved_library_path "${CMAKE_LIBRARY_PATH}")
    list(PREPEND CMAKE_LIBRARY_PATH ${_fusor_blas_openmp_dir})
    set(BLA_VENDOR OpenBLAS)
    _fusor_require(${package})
    set(CMAKE_LIBRARY_PATH "${_fusor_saved_library_path}")
    unset(BLA_VENDOR)
  else()
    _fusor_require(${package})
  endif()
endmacro()
_fusor_require_blas(BLAS)
if(_fusor_blas_openmp_dir)
  set(_fusor_cblas_suffixes openblas-openmp ${CMAKE_LIBRARY_ARCHITECTURE}/openblas-openmp)
else()
  set(_fusor_cblas_suffixes openblas openblas-pthread ${CMAKE_LIBRARY_ARCHITECTURE}/openblas-pthread)
endif()
find_path(FUSOR_CBLAS_INCLUDE_DIR cblas.h PATH_SUFFIXES ${_fusor_cblas_suffixes})
if(NOT FUSOR_CBLAS_INCLUDE_DIR)
  _fusor_fail("found a BLAS library (${BLAS_LIBRARIES}) but no cblas.h; install libopenblas-dev or set FUSOR_CBLAS_INCLUDE_DIR")
endif()
# The decompositions (linalg::inv, solve, svd, eigh, ...) call LAPACK's Fortran interface: the
# LAPACK that goes with the BLAS (OpenBLAS carries both; FindLAPACK checks the BLAS first).
_fusor_require_blas(LAPACK)
if(NOT TARGET fusor::cblas)
  add_library(fusor::cblas INTERFACE IMPORTED)
  set_target_properties(fusor::cblas PROPERTIES INTERFACE_LINK_LIBRARIES "BLAS::BLAS;LAPACK::LAPACK"
                                                INTERFACE_INCLUDE_DIRECTORIES "${FUSOR_CBLAS_INCLUDE_DIR}")
  # a system include: warnings in cblas.h are not the consumer's
  set_property(TARGET fusor::cblas PROPERTY INTERFACE_SYSTEM_INCLUDE_DIRECTORIES "${FUSOR_CBLAS_INCLUDE_DIR}")
endif()

# FFTs go to FFTW3 (float and double) and its threading libraries: the OpenMP build when fusor
# uses OpenMP (one thread pool for FFTW and fusor's loops; two pools would spin against each
# other), else the pthreads build. FFTW's own CMake package when it is installed (FFTW built with
# CMake), else pkg-config (Debian ships pkg-config files only).
if(FUSOR_OPENMP)
  set(_fusor_fftw_threads omp)
else()
  set(_fusor_fftw_threads threads)
endif()
if(NOT TARGET fusor::fftw)
  find_package(FFTW3 CONFIG QUIET)
  find_package(FFTW3f CONFIG QUIET)
  if(TARGET FFTW3::fftw3 AND TARGET FFTW3::fftw3f)
    set(_fusor_fftw_targets FFTW3::fftw3 FFTW3::fftw3f)
    get_target_property(_fusor_fftw_dirs FFTW3::fftw3 INTERFACE_LINK_DIRECTORIES)
    set(_fusor_fftw_hints ${FFTW3_LIBRARY_DIRS} ${_fusor_fftw_dirs})
  else()
    _fusor_require(PkgConfig)
    pkg_check_modules(FUSOR_FFTW3 IMPORTED_TARGET fftw3)
    pkg_check_modules(FUSOR_FFTW3F IMPORTED_TARGET fftw3f)
    if(NOT FUSOR_FFTW3_FOUND OR NOT FUSOR_FFTW3F_FOUND)
      _fusor_fail("FFTW3 (fftw3 and fftw3f) was found neither as a CMake package nor through pkg-config; install libfftw3-dev")
    endif()
    set(_fusor_fftw_targets PkgConfig::FUSOR_FFTW3 PkgConfig::FUSOR_FFTW3F)
    set(_fusor_fftw_hints ${FUSOR_FFTW3_LIBRARY_DIRS} ${FUSOR_FFTW3F_LIBRARY_DIRS})
  endif()
  find_library(FUSOR_FFTW3_${_fusor_fftw_threads}_LIBRARY fftw3_${_fusor_fftw_threads} HINTS ${_fusor_fftw_hints})
  find_library(FUSOR_FFTW3F_${_fusor_fftw_threads}_LIBRARY fftw3f_${_fusor_fftw_threads} HINTS ${_fusor_fftw_hints})
  if(NOT FUSOR_FFTW3_${_fusor_fftw_threads}_LIBRARY OR NOT FUSOR_FFTW3F_${_fusor_fftw_threads}_LIBRARY)
    _fusor_fail("found FFTW3 but not its threading libraries (fftw3_${_fusor_fftw_threads}, fftw3f_${_fusor_fftw_threads}); install libfftw3-dev")
  endif()
  add_library(fusor::fftw INTERFACE IMPORTED)
  # the threading libraries first: they call into the plain ones
  set_target_properties(fusor::fftw PROPERTIES INTERFACE_LINK_LIBRARIES
    "${FUSOR_FFTW3_${_fusor_fftw_threads}_LIBRARY};${FUSOR_FFTW3F_${_fusor_fftw_threads}_LIBRARY};${_fusor_fftw_targets}")
endif()

# Convolutions on the cpu (ad/nn/conv.hpp) go to oneDNN where it is used (backend/cpu/onednn_conv.hpp:
# 1.6 to 2 times faster than im2col and the BLAS): fusor::onednn then links libdnnl and defines
# FUSOR_HAS_ONEDNN for every translation unit of the consumer, so all of them compute a convolution
# the same way. FUSOR_ONEDNN: AUTO uses oneDNN version 2 (Debian: libdnnl-dev) where it is
# installed and shares fusor's OpenMP runtime (GCC's libgomp, which Debian's oneDNN is built
# with: two OpenMP runtimes in one process would each keep a thread team spinning); ON requires
# it; OFF keeps the GEMMs.
if(NOT TARGET fusor::onednn)
  if(NOT DEFINED FUSOR_ONEDNN)
    set(FUSOR_ONEDNN AUTO)
  endif()
  set(FUSOR_ONEDNN_USED OFF)
  if(NOT FUSOR_ONEDNN STREQUAL "OFF")
    find_path(FUSOR_ONEDNN_INCLUDE_DIR oneapi/dnnl/dnnl.hpp)
    find_library(FUSOR_ONEDNN_LIBRARY dnnl)
    set(_fusor_onednn_why "")
    if(NOT FUSOR_ONEDNN_INCLUDE_DIR OR NOT FUSOR_ONEDNN_LIBRARY)
      set(_fusor_onednn_why "oneDNN was not found (install libdnnl-dev)")
    else()
      file(STRINGS "${FUSOR_ONEDNN_INCLUDE_DIR}/oneapi/dnnl/dnnl_version.h" _fusor_onednn_major REGEX "#define DNNL_VERSION_MAJOR")
      string(REGEX REPLACE ".*DNNL_VERSION_MAJOR[ \t]+([0-9]+).*" "\\1" _fusor_onednn_major "${_fusor_onednn_major}")
      if(NOT _fusor_onednn_major STREQUAL "2")
        set(_fusor_onednn_why "oneDNN ${_fusor_onednn_major} was found, fusor calls version 2's interface")
      elseif(NOT FUSOR_OPENMP OR NOT CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
        set(_fusor_onednn_why "oneDNN's OpenMP runtime is GCC's and fusor's loops here use another (or none)")
      endif()
    endif()
    if(_fusor_onednn_why STREQUAL "")
      set(FUSOR_ONEDNN_USED ON)
    elseif(FUSOR_ONEDNN STREQUAL "ON")
      _fusor_fail("FUSOR_ONEDNN=ON but ${_fusor_onednn_why}")
    endif()
  endif()
  add_library(fusor::onednn INTERFACE IMPORTED)
  if(FUSOR_ONEDNN_USED)
    set_target_properties(fusor::onednn PROPERTIES INTERFACE_LINK_LIBRARIES "${FUSOR_ONEDNN_LIBRARY}"
                                                   INTERFACE_COMPILE_DEFINITIONS FUSOR_HAS_ONEDNN)
    set_property(TARGET fusor::onednn PROPERTY INTERFACE_SYSTEM_INCLUDE_DIRECTORIES "${FUSOR_ONEDNN_INCLUDE_DIR}")
  endif()
endif()
