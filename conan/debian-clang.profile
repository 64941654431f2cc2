# The same system packages with clang-19, which can build and import fusor's C++20 module:
# `conan test test_package fusor/0.1.0 -pr:a conan/debian-clang.profile`
include(debian.profile)

[settings]
compiler=clang
compiler.version=19
compiler.libcxx=libstdc++11

[conf]
tools.build:compiler_executables={"c": "clang-19", "cpp": "clang++-19"}
