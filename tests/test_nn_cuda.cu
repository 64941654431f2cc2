// The backend-generic layer, loss and model bodies (tests/generic/nn_body.hpp) on the cuda backend,
// a unit of the autodiff layer's cuda test program.
#include <fusor/cuda.cuh>
#define TEST_BACKEND fusor::cuda
#include "generic/nn_body.hpp"
