// The backend-generic reverse-mode operation bodies (tests/generic/ad_ops_body.hpp) on the cpu backend (with
// test_ad_fft.cpp in the same program).
#define TEST_BACKEND fusor::cpu
#include "generic/ad_ops_body.hpp"
