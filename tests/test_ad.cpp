// The backend-generic autodiff bodies (tests/generic/ad_body.hpp) on the cpu backend.
#define TEST_BACKEND fusor::cpu
#include "generic/ad_body.hpp"
