// Trains a small convolutional network on scikit-learn's 8x8 handwritten digits on the cpu: two
// 3x3 convolutions, each with batch normalisation, ReLU and 2x2 max pooling, then a linear layer;
// the fused softmax cross-entropy and Adam; a seeded 20% held out for testing (the same split as
// train_digits' MLP). One line per epoch.
// Usage: train_cnn_digits [directory of images.npy and labels.npy] [epochs]   (default: tests/data/digits, 12)
#include <fusor/fusor.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "data_path.hpp"

int main(int argc, char** argv) {
  using namespace fusor;
  namespace nn = ad::nn;
  const std::filesystem::path dir = argc > 1 ? std::string(argv[1]) : example::data_path(FUSOR_DIGITS_DIR);
  const int epochs = argc > 2 ? std::atoi(argv[2]) : 12;
  // the data: pixels 0..16 scaled to [0, 1] as (n, 1, 8, 8) images, labels as int64
  const array<float> flat = cast<float>(load_npy<std::uint8_t>(dir / "images.npy")) / 16.0f;
  const index_t n = flat.shape()[0], n_test = n / 5, n_train = n - n_test;
  const array<float> images = reshape(flat, {n, 1, 8, 8});
  const array<std::int64_t> labels = cast<std::int64_t>(load_npy<std::uint8_t>(dir / "labels.npy"));
  random::generator rng(2026);
  const array<std::int64_t> order = random::permutation(rng, n);
  const array<std::int64_t> train_rows = order(range(0, n_train)).copy(), test_rows = order(range(n_train, n)).copy();
  const array<float> x_train = take(images, train_rows, 0), x_test = take(images, test_rows, 0);
  const array<std::int64_t> y_train = take(labels, train_rows), y_test = take(labels, test_rows);

  auto model = nn::sequential<float>(
      nn::conv2d(1, 16, {3}, nn::conv_options{.padding = {1}}), nn::batch_norm(16), nn::relu, nn::max_pool2d({2}),  // (16, 4, 4)
      nn::conv2d(16, 32, {3}, nn::conv_options{.padding = {1}}), nn::batch_norm(32), nn::relu, nn::max_pool2d({2}),  // (32, 2, 2)
      nn::flatten, nn::linear(32 * 2 * 2, 10));
  nn::parameters<float> params = model.init(7);
  ad::optim::adam<float, cpu> opt({.lr = 1e-2});
  const array<float>* x = nullptr;  // the batch being trained on
  const array<std::int64_t>* y = nullptr;
  auto step = ad::value_and_grad([&](const auto& p) { return nn::cross_entropy(model(p, *x), *y); });

  double test_accuracy = 0;
  for (int epoch = 1; epoch <= epochs; ++epoch) {
    const nn::stopwatch clock;
    double loss_sum = 0;
    model.train();
    for (const auto& batch : nn::shuffled_batches(n_train, 32, rng)) {
      const array<float> xb = take(x_train, batch, 0);
      const array<std::int64_t> yb = take(y_train, batch);
      x = &xb;
      y = &yb;
      auto [loss, grads] = step(params);
      opt.step(params, grads);
      loss_sum += double(loss) * double(batch.size());
    }
    const double seconds = clock.seconds();
    model.eval();  // batch normalisation from its running statistics
    test_accuracy = nn::accuracy(model(params, x_test), y_test);
    const double train_accuracy = nn::accuracy(model(params, x_train), y_train);
    std::printf("%s\n", nn::progress_line(epoch, epochs, loss_sum / double(n_train), train_accuracy, test_accuracy,
                                          double(n_train), seconds).c_str());
  }
  std::printf("test accuracy %.2f%% on the held-out 20%%\n", 100 * test_accuracy);
  if (test_accuracy < 0.98) {
    std::printf("train_cnn_digits: FAILED (expected >= 98%%)\n");
    return 1;
  }
  std::printf("train_cnn_digits: ok\n");
  return 0;
}
