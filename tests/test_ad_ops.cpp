// The backend-generic reverse-mode operation bodies (tests/generic/ad_ops_body.hpp) on the cpu backend.
#define TEST_BACKEND fusor::cpu
#include "generic/ad_ops_body.hpp"
