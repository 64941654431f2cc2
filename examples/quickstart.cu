// The quickstart on the GPU: the same showcase body as quickstart.cpp, instantiated for cuda.
#include <fusor/cuda.cuh>

#include <iostream>

#include "showcase.hpp"

int main() {
  if (fusor::cuda_device_count() == 0) {
    std::cout << "skipped: no CUDA device\n";
    return 77;
  }
  std::cout << "device         : " << fusor::cuda_device_name() << "\n";
  quickstart::showcase<fusor::cuda>(42);
}
