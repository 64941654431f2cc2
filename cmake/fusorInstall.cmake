# install(): headers, the module source, the CMake package (fusorConfig.cmake, its version file,
# the exported targets and the files they include) and fusor.pc. `cmake --install <build>`.
include(CMakePackageConfigHelpers)

set(FUSOR_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/fusor CACHE STRING "Where fusorConfig.cmake is installed")
set(FUSOR_INSTALL_MODULEDIR ${CMAKE_INSTALL_DATADIR}/fusor/modules CACHE STRING "Where modules/fusor.cppm is installed")

install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
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

# fusor.pc: the compile and link line for build systems other than CMake
set(FUSOR_PC_LIBS "")
foreach(lib IN LISTS FUSOR_FFTW3_${_fusor_fftw_threads}_LIBRARY FUSOR_FFTW3F_${_fusor_fftw_threads}_LIBRARY BLAS_LIBRARIES LAPACK_LIBRARIES)
  list(APPEND FUSOR_PC_LIBS "${lib}")
endforeach()
set(FUSOR_PC_OPENMP_FLAG "")
if(FUSOR_OPENMP)
  set(FUSOR_PC_OPENMP_FLAG "-fopenmp")
  list(APPEND FUSOR_PC_LIBS -fopenmp)
endif()
list(APPEND FUSOR_PC_LIBS -pthread)
list(JOIN FUSOR_PC_LIBS " " FUSOR_PC_LIBS)
set(FUSOR_PC_DEFINES "")
if(NOT FUSOR_DEFAULT_BACKEND STREQUAL "cpu")
  set(FUSOR_PC_DEFINES " -DFUSOR_DEFAULT_BACKEND=${FUSOR_DEFAULT_BACKEND}")
endif()
configure_file(${PROJECT_SOURCE_DIR}/cmake/fusor.pc.in ${PROJECT_BINARY_DIR}/fusor.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/fusor.pc DESTINATION ${CMAKE_INSTALL_DATADIR}/pkgconfig)
