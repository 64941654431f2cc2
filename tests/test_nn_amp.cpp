// The backend-generic mixed-precision bodies (tests/generic/amp_body.hpp) on the cpu backend.
#define TEST_BACKEND fusor::cpu
#include "generic/amp_body.hpp"
