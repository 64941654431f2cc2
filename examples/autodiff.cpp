// Reverse- and forward-mode autodiff of a function written once (examples/autodiff.hpp), on the cpu.
#include <fusor/fusor.hpp>

#include "autodiff.hpp"

int main() { return autodiff_example::run<fusor::cpu>(); }
