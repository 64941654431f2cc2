// The same autodiff example (examples/autodiff.hpp) on the cuda backend.
#include <fusor/cuda.cuh>

#include <cstdio>

#include "autodiff.hpp"

int main() {
  if (fusor::cuda_device_count() == 0) {
    std::printf("skipped: no CUDA device\n");
    return 77;
  }
  return autodiff_example::run<fusor::cuda>();
}
