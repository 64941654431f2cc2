// The backend-generic convolution bodies (tests/generic/conv_body.hpp) on the cpu backend.
#define TEST_BACKEND fusor::cpu
#include "generic/conv_body.hpp"
