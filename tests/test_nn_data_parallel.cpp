// The backend-generic data-parallel bodies (tests/generic/data_parallel_body.hpp) on the cpu backend.
#define TEST_BACKEND fusor::cpu
#include "generic/data_parallel_body.hpp"
