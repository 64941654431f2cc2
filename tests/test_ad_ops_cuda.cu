// The backend-generic reverse-mode operation bodies (tests/generic/ad_ops_body.hpp) on the cuda backend: the
// second translation unit of test_ad_cuda (its units build in parallel).
#include <fusor/cuda.cuh>
#define TEST_BACKEND fusor::cuda
#include "generic/ad_ops_body.hpp"
