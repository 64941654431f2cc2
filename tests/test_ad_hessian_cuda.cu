// The backend-generic forward-over-reverse bodies (tests/generic/ad_hessian_body.hpp) on the cuda backend: a
// translation unit of test_ad_cuda.
#include <fusor/cuda.cuh>
#define TEST_BACKEND fusor::cuda
#include "generic/ad_hessian_body.hpp"
