"""Conan 2 recipe for fusor, a header-only library.

The package is what `cmake --install` of fusor's own CMake project lays down (headers, the module
source, fusorConfig.cmake, fusor.pc), so a CMake consumer gets the same targets as without Conan:
fusor::fusor, fusor::cuda (option cuda) and fusor::module (option with_module, built in the
consumer's project with its compiler, as the installed config does). Conan's CMakeDeps is told
not to generate a config for fusor: a generated config cannot carry a C++20 module target, and
with [platform_requires] (conan/debian.profile) it would drop the system libraries from the link.
fusor's config finds xsimd, FFTW, BLAS and libzip itself (find_dependency).

Tested with conan/debian.profile and conan/debian-clang.profile, which map the requirements to
Debian's packages. ConanCenter's binaries are not tried: its fftw packages one precision without
OpenMP per package, where fusor needs float and double with fftw3_omp.
"""
import os

from conan import ConanFile
from conan.tools.build import check_min_cppstd
from conan.tools.cmake import CMake, CMakeDeps, CMakeToolchain, cmake_layout
from conan.tools.files import copy, rmdir


class FusorConan(ConanFile):
    name = "fusor"
    version = "0.1.0"
    license = "MIT"
    description = ("C++20 arrays with the backend as a type: fused SIMD (xsimd) and CUDA expressions, "
                   "FFTs (FFTW3/cuFFT), linear algebra (CBLAS/cuBLAS)")
    topics = ("arrays", "simd", "cuda", "fft", "expression-templates", "header-only")
    package_type = "header-library"
    settings = "os", "arch", "compiler", "build_type"
    options = {"cuda": [True, False], "with_module": [True, False]}
    default_options = {"cuda": False, "with_module": True}
    exports_sources = ("CMakeLists.txt", "LICENSE", "include/*", "modules/*", "cmake/*")
    no_copy_source = True

    def layout(self):
        cmake_layout(self, src_folder=".")

    def requirements(self):
        self.requires("xsimd/[>=8.1 <14]")
        self.requires("fftw/[>=3.3.9 <4]")
        self.requires("openblas/[>=0.3.20 <1]")
        self.requires("libzip/[>=1.7 <2]")

    def package_id(self):
        # header-only: one package for every compiler, architecture and build type. The options
        # stay in the id because they change the package's files (cuda adds the fusor::cuda
        # export, with_module the module source), so two option sets cannot share one package.
        self.info.settings.clear()

    def validate(self):
        check_min_cppstd(self, 20)

    def generate(self):
        tc = CMakeToolchain(self)
        tc.cache_variables.update({
            "FUSOR_BUILD_TESTS": False, "FUSOR_BUILD_BENCH": False, "FUSOR_BUILD_EXAMPLES": False,
            "FUSOR_BUILD_APPS": False,
            "FUSOR_PACKAGE_TESTS": False, "FUSOR_MODULE": "OFF",
            "FUSOR_CUDA": "ON" if self.options.cuda else "OFF",
            "FUSOR_INSTALL_MODULE": bool(self.options.with_module),
            # find the distribution's packages (platform_requires) or Conan's CMakeDeps files
            "CMAKE_FIND_PACKAGE_PREFER_CONFIG": True,
        })
        tc.generate()
        # config files for requirements that come from Conan packages (none are generated for
        # [platform_requires], which fusor's CMake finds on the system)
        CMakeDeps(self).generate()

    def build(self):
        pass  # header-only: nothing to compile

    def package(self):
        cmake = CMake(self)
        cmake.configure()
        cmake.install()

    def package_info(self):
        # fusor's own fusorConfig.cmake (lib/cmake/fusor) defines the targets; see the docstring
        self.cpp_info.set_property("cmake_find_mode", "none")
        self.cpp_info.set_property("pkg_config_name", "fusor")
        # Conan's own view of the package, under the same names (CMake consumers use fusor's
        # config instead; only CMake consumers are tested, by test_package)
        self.cpp_info.components["fusor"].set_property("cmake_target_name", "fusor::fusor")
        self.cpp_info.components["fusor"].includedirs = ["include"]
        # the package root goes on CMAKE_PREFIX_PATH, where find_package finds lib/cmake/fusor
        self.cpp_info.components["fusor"].builddirs = [""]
        self.cpp_info.components["fusor"].requires = ["xsimd::xsimd", "fftw::fftw", "openblas::openblas", "libzip::libzip"]
        if self.settings.os in ("Linux", "FreeBSD"):
            # FFTW's OpenMP threading libraries and OpenMP itself, as fusorDependencies.cmake links
            self.cpp_info.components["fusor"].system_libs = ["fftw3_omp", "fftw3f_omp", "pthread", "m"]
            self.cpp_info.components["fusor"].cxxflags = ["-fopenmp"]
            self.cpp_info.components["fusor"].exelinkflags = ["-fopenmp"]
            self.cpp_info.components["fusor"].sharedlinkflags = ["-fopenmp"]
        if self.options.cuda:
            self.cpp_info.components["cuda"].set_property("cmake_target_name", "fusor::cuda")
            self.cpp_info.components["cuda"].requires = ["fusor"]
            self.cpp_info.components["cuda"].system_libs = ["cudart", "cufft", "cublas", "cusolver"]
        if self.options.with_module:
            self.cpp_info.components["module"].set_property("cmake_target_name", "fusor::module")
            self.cpp_info.components["module"].requires = ["fusor"]
            self.cpp_info.components["module"].resdirs = [os.path.join("share", "fusor", "modules")]
        for component in self.cpp_info.components.values():  # header-only: no binaries, no libraries
            component.bindirs = []
            component.libdirs = []
