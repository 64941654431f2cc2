// The cuda backend in one .cu file: move data to the GPU, run fused statements (one kernel
// each), reduce, draw random numbers with the cpu's values, and bring results back.
// Build: link fusor::cuda and compile as CUDA (see docs/cuda.md).
#include <fusor/cuda.cuh>

#include <iostream>

using fusor::array;
using gpu = fusor::cuda;  // (inside .cu files, plain `cuda` also names CCCL's namespace)

int main() {
  if (fusor::cuda_device_count() == 0) {
    std::cout << "skipped: no CUDA device\n";
    return 77;
  }
  std::cout << "device         : " << fusor::cuda_device_name() << "\n";
  fusor::random::generator g(42);
  auto x = fusor::random::normal<float, gpu>(g, {1000, 1000});
  auto y = fusor::to<gpu>(fusor::linspace<float>(-1, 1, 1000));     // host -> device
  array<float, gpu> z = 2.0f * x + y * x - sin(x);                  // one kernel, y broadcast over rows
  const float total = fusor::sum(z * z);                            // one kernel, nothing written
  auto col_max = fusor::max(z, 0);                                  // per column, one kernel
  fusor::cuda_synchronize();
  const auto stats = fusor::cuda_memory_stats();
  std::cout << "sum(z*z)       : " << total << "\n"
            << "column maxima  : " << col_max(fusor::range(0, 4)) << "\n"
            << "device memory  : " << stats.allocated / 1e6 << " MB live, " << stats.reserved / 1e6
            << " MB reserved\n";
  // the same seed draws the same numbers on the cpu
  fusor::random::generator gc(42);
  auto xc = fusor::random::normal<float>(gc, {1000, 1000});
  std::cout << "max |x_gpu - x_cpu| : " << fusor::max(abs(fusor::to<fusor::cpu>(x) - xc)) << "\n";
}
