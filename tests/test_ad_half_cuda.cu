// Reverse mode through 16-bit variables (tests/generic/ad_half_body.hpp) on the cuda backend, a
// unit of the autodiff layer's cuda test program.
#include <fusor/cuda.cuh>
#define TEST_BACKEND fusor::cuda
#include "generic/ad_half_body.hpp"
