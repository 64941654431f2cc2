// The backend-generic template-matching bodies (tests/generic/match_body.hpp) on the cuda backend:
// interpolation, rigid transforms and masks against the same host references as on cpu.
#include <fusor/cuda.cuh>
#define TEST_BACKEND fusor::cuda
#include "generic/match_body.hpp"
