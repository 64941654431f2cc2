// Reverse mode through 16-bit variables (tests/generic/ad_half_body.hpp) on the cpu backend.
#define TEST_BACKEND fusor::cpu
#include "generic/ad_half_body.hpp"
