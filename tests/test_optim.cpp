// The backend-generic optimizer bodies (tests/generic/optim_body.hpp) on the cpu backend.
#define TEST_BACKEND fusor::cpu
#include "generic/optim_body.hpp"
