// The backend-generic data-parallel bodies (tests/generic/data_parallel_body.hpp) on the cuda
// backend (the buckets staged through the host), a unit of the autodiff layer's cuda test program.
#include <fusor/cuda.cuh>
#define TEST_BACKEND fusor::cuda
#include "generic/data_parallel_body.hpp"
