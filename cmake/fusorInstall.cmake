# install(): headers, the module source, the CMake package (fusorConfig.cmake, its version file,
# the exported targets and the files they include) and fusor.pc. `cmake --install <build>`.
include(CMakePackageConfigHelpers)

set(FUSOR_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/fusor CACHE STRING "Where fusorConfig.cmake is installed")
set(FUSOR_INSTALL_MODULEDIR ${CMAKE_INSTALL_DATADIR}/fusor/modules CACHE STRING "Where modules/fusor.cppm is installed")

install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
# the licence beside the package, where distributions and Conan look for it
install(FILES ${PROJECT_SOURCE_DIR}/LICENSE DESTINATION ${CMAKE_INSTALL_DATADIR}/licenses/fusor)
option(FUSOR_INSTALL_MODULE "Install modules/fusor.cppm, from which consumers build fusor::module" ON)
if(FUSOR_INSTALL_MODULE)
  install(FILES ${PROJECT_SOURCE_DIR}/modules/fusor.cppm DESTINATION ${FUSOR_INSTALL_MODULEDIR})
endif()

install(TARGETS fusor EXPORT fusorTargets)
install(EXPORT fusorTargets NAMESPACE fusor:: DESTINATION ${FUSOR_INSTALL_CMAKEDIR})
if(FUSOR_ENABLE_CUDA)
  set_target_properties(fusor_cuda PROPERTIES EXPORT_NAME cuda)
  install(TARGETS fusor_cuda EXPORT fusorCudaTargets)
  install(EXPORT fusorCudaTargets NAMESPACE fusor:: DESTINATION ${FUSOR_INSTALL_CMAKEDIR})
endif()

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/fusorConfig.cmake.in
  ${PROJECT_BINARY_DIR}/fusorConfig.cmake
  INSTALL_DESTINATION ${FUSOR_INSTALL_CMAKEDIR}
  PATH_VARS FUSOR_INSTALL_MODULEDIR)
# 0.x: a minor version may break the API, so only the same minor version is compatible
write_basic_package_version_file(${PROJECT_BINARY_DIR}/fusorConfigVersion.cmake
  COMPATIBILITY SameMinorVersion ARCH_INDEPENDENT)
install(FILES ${PROJECT_BINARY_DIR}/fusorConfig.cmake ${PROJECT_BINARY_DIR}/fusorConfigVersion.cmake
              ${PROJECT_SOURCE_DIR}/cmake/fusorDependencies.cmake ${PROJECT_SOURCE_DIR}/cmake/fusorModule.cmake
        DESTINATION ${FUSOR_INSTALL_CMAKEDIR})

# fusor.pc: the compile and link line for build systems other than CMake. Dependencies that have a
# pkg-config module are named in Requires (xsimd, FFTW, libzip, and the BLAS when it has one, as
# OpenBLAS does), so the file holds no machine paths for them; the rest (FFTW's threading
# libraries, a BLAS without a module) become -L/-l flags, each once.
find_package(PkgConfig QUIET)
set(FUSOR_PC_REQUIRES "xsimd fftw3 fftw3f libzip")
set(FUSOR_PC_CBLAS_CFLAGS " -I${FUSOR_CBLAS_INCLUDE_DIR}")
set(_fusor_pc_files ${FUSOR_FFTW3_${_fusor_fftw_threads}_LIBRARY} ${FUSOR_FFTW3F_${_fusor_fftw_threads}_LIBRARY})
set(_fusor_blas_files ${BLAS_LIBRARIES} ${LAPACK_LIBRARIES})
list(REMOVE_DUPLICATES _fusor_blas_files)
if(PKG_CONFIG_FOUND)
  set(_fusor_blas_module "")
  if(_fusor_blas_files MATCHES "openblas")
    pkg_check_modules(_fusor_pc_openblas QUIET openblas)
    if(_fusor_pc_openblas_FOUND)
      set(_fusor_blas_module openblas)  # OpenBLAS holds CBLAS and LAPACK; its Cflags find cblas.h
    endif()
  else()
    pkg_check_modules(_fusor_pc_blas QUIET blas lapack)
    if(_fusor_pc_blas_FOUND)
      set(_fusor_blas_module "blas lapack")
    endif()
  endif()
  if(_fusor_blas_module)
    string(APPEND FUSOR_PC_REQUIRES " ${_fusor_blas_module}")
    set(_fusor_blas_files "")
    if(_fusor_blas_module STREQUAL "openblas")
      set(FUSOR_PC_CBLAS_CFLAGS "")
    endif()
  endif()
endif()
if(FUSOR_ONEDNN_USED)
  list(APPEND _fusor_pc_files ${FUSOR_ONEDNN_LIBRARY})
endif()
set(FUSOR_PC_LIBS "")
foreach(lib IN LISTS _fusor_pc_files _fusor_blas_files)
  if(IS_ABSOLUTE "${lib}")
    get_filename_component(_dir "${lib}" DIRECTORY)
    get_filename_component(_name "${lib}" NAME_WE)
    string(REGEX REPLACE "^lib" "" _name "${_name}")
    if(NOT _dir IN_LIST CMAKE_CXX_IMPLICIT_LINK_DIRECTORIES)
      list(APPEND FUSOR_PC_LIBS "-L${_dir}")
    endif()
    list(APPEND FUSOR_PC_LIBS "-l${_name}")
  elseif(lib)
    list(APPEND FUSOR_PC_LIBS "${lib}")
  endif()
endforeach()
set(FUSOR_PC_OPENMP_FLAG "")
if(FUSOR_OPENMP)
  set(FUSOR_PC_OPENMP_FLAG "-fopenmp")
  list(APPEND FUSOR_PC_LIBS -fopenmp)
endif()
list(APPEND FUSOR_PC_LIBS -pthread)
list(REMOVE_DUPLICATES FUSOR_PC_LIBS)
list(JOIN FUSOR_PC_LIBS " " FUSOR_PC_LIBS)
set(FUSOR_PC_DEFINES "")
if(NOT FUSOR_DEFAULT_BACKEND STREQUAL "cpu")
  set(FUSOR_PC_DEFINES " -DFUSOR_DEFAULT_BACKEND=${FUSOR_DEFAULT_BACKEND}")
endif()
if(FUSOR_ONEDNN_USED)
  string(APPEND FUSOR_PC_DEFINES " -DFUSOR_HAS_ONEDNN")
endif()
configure_file(${PROJECT_SOURCE_DIR}/cmake/fusor.pc.in ${PROJECT_BINARY_DIR}/fusor.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/fusor.pc DESTINATION ${CMAKE_INSTALL_DATADIR}/pkgconfig)
