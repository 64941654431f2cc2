# fusor_add_module(): defines fusor::module, the target that makes `import fusor;` work, in the
# project that calls it, compiled with that project's compiler and flags. fusor is header-only,
# so nothing about the module is prebuilt: an installed package ships modules/fusor.cppm and
# each consumer builds the module interface (BMI) with its own flags, which must match the
# importers' (-std, -fopenmp, -march: a BMI built for another configuration is refused or, for
# -march, silently uses other SIMD widths).
#
# Needs CMake >= 3.28, the Ninja generator and clang >= 17 (with clang-scan-deps); with anything
# else fusor::module is not defined and FUSOR_MODULE_REASON says why. GCC 12 cannot import
# modules; GCC >= 14 is not tried.
include_guard(GLOBAL)

function(fusor_module_supported out_var reason_var)
  set(ok FALSE)
  if(POLICY CMP0155)
    cmake_policy(GET CMP0155 _fusor_cmp0155)
  endif()
  if(CMAKE_VERSION VERSION_LESS 3.28)
    set(reason "CMake ${CMAKE_VERSION} is older than 3.28, the first with C++20 module support")
  elseif(NOT CMAKE_GENERATOR MATCHES "Ninja")
    set(reason "the ${CMAKE_GENERATOR} generator cannot build C++20 modules (use -G Ninja)")
  elseif(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang" OR CMAKE_CXX_COMPILER_VERSION VERSION_LESS 17)
    set(reason "${CMAKE_CXX_COMPILER_ID} ${CMAKE_CXX_COMPILER_VERSION} cannot build importers of fusor's module (needs clang >= 17, e.g. -DCMAKE_CXX_COMPILER=clang++-19)")
  elseif(NOT POLICY CMP0155 OR _fusor_cmp0155 STREQUAL "OLD" OR _fusor_cmp0155 STREQUAL "")
    set(reason "this project's cmake_minimum_required is below 3.28 (policy CMP0155 is not NEW), so CMake does not scan its sources for imports")
  elseif(NOT CMAKE_CXX_COMPILER_CLANG_SCAN_DEPS)
    set(reason "clang-scan-deps was not found next to ${CMAKE_CXX_COMPILER} (Debian: clang-tools-19)")
  else()
    set(ok TRUE)
    set(reason "")
  endif()
  set(${out_var} ${ok} PARENT_SCOPE)
  set(${reason_var} "${reason}" PARENT_SCOPE)
endfunction()

# fusor_add_module(SOURCE <fusor.cppm> [LINK <libraries whose flags the BMI must share>...])
function(fusor_add_module)
  cmake_parse_arguments(ARG "" "SOURCE" "LINK" ${ARGN})
  if(TARGET fusor::module)
    return()
  endif()
  get_filename_component(dir "${ARG_SOURCE}" DIRECTORY)
  # built only when something links fusor::module: header-only consumers never compile it
  add_library(fusor_module STATIC EXCLUDE_FROM_ALL)
  target_sources(fusor_module PUBLIC FILE_SET CXX_MODULES BASE_DIRS "${dir}" FILES "${ARG_SOURCE}")
  target_link_libraries(fusor_module PUBLIC fusor::fusor ${ARG_LINK})
  target_compile_features(fusor_module PUBLIC cxx_std_20)
  set_target_properties(fusor_module PROPERTIES CXX_SCAN_FOR_MODULES ON)
  # The module's loops are templates that the importer instantiates, and xsimd's kernels in them
  # call <immintrin.h>'s intrinsics, which are `static inline`: local to the module's unit. Clang
  # before 20 drops such functions from an importer's overload resolution (llvm-project #78173;
  # clang 20 exposes them, #104701), so `import fusor;` alone gave about 400 lines of
  # "no matching function for call to '_mm512_*'". The importer's own copy of xsimd is the cure:
  # clang merges it with the module's. It is force-included into every importing target that has
  # no module units of its own; a module unit must begin with `module;` or `export module`, so a
  # target with module units includes xsimd itself (docs/packaging.md).
  if(CMAKE_CXX_COMPILER_ID STREQUAL "Clang" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 20)
    target_compile_options(fusor_module INTERFACE
      "$<$<AND:$<COMPILE_LANGUAGE:CXX>,$<STREQUAL:$<TARGET_PROPERTY:CXX_MODULE_SETS>,>>:-includexsimd/xsimd.hpp>")
  endif()
  add_library(fusor::module ALIAS fusor_module)
endfunction()
