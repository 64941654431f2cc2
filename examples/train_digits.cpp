// Trains an MLP on scikit-learn's handwritten digits on the cpu (the body: train_digits.hpp).
// Usage: train_digits [directory of images.npy and labels.npy]   (default: tests/data/digits)
#include <fusor/fusor.hpp>

#include <cstdio>

#include "train_digits.hpp"
#include "data_path.hpp"

int main(int argc, char** argv) {
  const auto r = digits_example::run<fusor::cpu>(argc > 1 ? std::string(argv[1]) : example::data_path(FUSOR_DIGITS_DIR));
  std::printf("test accuracy %.2f%% on the held-out 20%%\n", 100 * r.test_accuracy);
  if (r.test_accuracy < 0.95) {
    std::printf("train_digits: FAILED (expected >= 95%%)\n");
    return 1;
  }
  std::printf("train_digits: ok\n");
  return 0;
}
