# Debian 12 with the distribution's libraries: `conan create . -pr:a conan/debian.profile`
# resolves fusor's requirements to the apt packages scripts/deps installs (libxsimd-dev,
# libfftw3-dev, libopenblas-dev, libzip-dev), so nothing is downloaded or built.
[settings]
os=Linux
arch=x86_64
compiler=gcc
compiler.version=12
compiler.libcxx=libstdc++11
compiler.cppstd=20
build_type=Release

[platform_requires]
xsimd/8.1.0
fftw/3.3.10
openblas/0.3.21
libzip/1.7.3

[conf]
tools.cmake.cmaketoolchain:generator=Ninja
