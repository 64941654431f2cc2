// The cuda build (BACKEND=cuda): the same run() compiled by nvcc, with fusor::default_backend =
// cuda. Without a device it says so and exits 77 (ctest's skip code).
#include <fusor/cuda.cuh>

#include "run.hpp"

// the configure-time choice reached this file (through fusor::fusor or this target's definitions)
static_assert(std::is_same_v<fusor::default_backend, fusor::cuda>, "BACKEND=cuda must make fusor::default_backend cuda");

int main() {
  if (fusor::cuda_device_count() == 0) {
    std::printf("skipped: no CUDA device\n");
    return 77;
  }
  return run();
}
