// The backend-generic layer, loss and model bodies (tests/generic/nn_body.hpp) on the cpu backend.
#define TEST_BACKEND fusor::cpu
#include "generic/nn_body.hpp"
