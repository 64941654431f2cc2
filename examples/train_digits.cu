// The digits training example (examples/train_digits.hpp) on the cuda backend.
#include <fusor/cuda.cuh>

#include <cstdio>

#include "train_digits.hpp"
#include "data_path.hpp"

int main(int argc, char** argv) {
  if (fusor::cuda_device_count() == 0) {
    std::printf("skipped: no CUDA device\n");
    return 77;
  }
  const auto r = digits_example::run<fusor::cuda>(argc > 1 ? std::string(argv[1]) : example::data_path(FUSOR_DIGITS_DIR));
  std::printf("test accuracy %.2f%% on the held-out 20%%\n", 100 * r.test_accuracy);
  return r.test_accuracy >= 0.95 ? 0 : 1;
}
