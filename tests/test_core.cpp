// The backend-generic core bodies (tests/generic/core_body.hpp) on the cpu backend.
#define TEST_BACKEND fusor::cpu
#include "generic/core_body.hpp"
