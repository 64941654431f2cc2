// The backend-generic reverse-mode FFT bodies (tests/generic/ad_fft_body.hpp) on the cuda backend: the third
// translation unit of test_ad_cuda.
#include <fusor/cuda.cuh>
#define TEST_BACKEND fusor::cuda
#include "generic/ad_fft_body.hpp"
