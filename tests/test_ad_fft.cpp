// The backend-generic reverse-mode FFT bodies (tests/generic/ad_fft_body.hpp) on the cpu backend: the second
// translation unit of test_ad_ops (two units build in parallel).
#define TEST_BACKEND fusor::cpu
#include "generic/ad_fft_body.hpp"
