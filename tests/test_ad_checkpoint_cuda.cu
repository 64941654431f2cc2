// The backend-generic checkpointing bodies (tests/generic/checkpoint_body.hpp) on the cuda
// backend, a unit of the autodiff layer's cuda test program.
#include <fusor/cuda.cuh>
#define TEST_BACKEND fusor::cuda
#include "generic/checkpoint_body.hpp"
