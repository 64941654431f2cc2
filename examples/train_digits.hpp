// The digits training example's body, written once for any backend: examples/train_digits.cpp
// runs it on the cpu, examples/train_digits.cu on cuda. It trains a 64-64-10 ReLU MLP with the
// fused softmax cross-entropy and Adam on scikit-learn's 8x8 handwritten digits
// (tests/data/digits), holding out a seeded 20% for testing, and prints one line per epoch.
#pragma once
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>

namespace digits_example {

struct result {
  double test_accuracy = 0;
  double final_loss = 0;
};

template <fusor::backend B>
result run(const std::filesystem::path& dir, int epochs = 20, bool print = true) {
  using namespace fusor;
  namespace nn = ad::nn;
  namespace optim = ad::optim;
  // the data: pixels 0..16 scaled to [0, 1], labels as int64
  const array<float, B> images = to<B>(cast<float>(load_npy<std::uint8_t, cpu>(dir / "images.npy")) / 16.0f);
  const array<std::int64_t, B> labels = to<B>(cast<std::int64_t>(load_npy<std::uint8_t, cpu>(dir / "labels.npy")));
  const index_t n = images.shape()[0], n_test = n / 5, n_train = n - n_test;
  random::generator rng(2026);
  const array<std::int64_t, B> order = random::permutation<B>(rng, n);
  const array<std::int64_t, B> train_rows = order(range(0, n_train)).copy();
  const array<std::int64_t, B> test_rows = order(range(n_train, n)).copy();
  const array<float, B> x_train = take(images, train_rows, 0), x_test = take(images, test_rows, 0);
  const array<std::int64_t, B> y_train = take(labels, train_rows), y_test = take(labels, test_rows);

  // the model and its named parameters ("0.weight", "0.bias", "2.weight", "2.bias")
  const auto model = nn::sequential<float, B>(nn::linear(64, 64), nn::relu, nn::linear(64, 10));
  nn::parameters<float, B> params = model.init(7);
  optim::adam<float, B> opt({.lr = 1e-2});
  // x and y are the batch being trained on: the loss reads them through these pointers
  const array<float, B>* x = nullptr;
  const array<std::int64_t, B>* y = nullptr;
  auto step = ad::value_and_grad([&](const auto& p) { return nn::cross_entropy(model(p, *x), *y); });

  result r;
  for (int epoch = 1; epoch <= epochs; ++epoch) {
    const nn::stopwatch clock;
    double loss_sum = 0;
    for (const auto& batch : nn::shuffled_batches<B>(n_train, 32, rng)) {
      const array<float, B> xb = take(x_train, batch, 0);
      const array<std::int64_t, B> yb = take(y_train, batch);
      x = &xb;
      y = &yb;
      auto [loss, grads] = step(params);
      opt.step(params, grads);
      loss_sum += double(loss) * double(batch.size());
    }
    const double seconds = clock.seconds();
    r.final_loss = loss_sum / double(n_train);
    r.test_accuracy = nn::accuracy(model(params, x_test), y_test);
    if (print) {
      const double train_accuracy = nn::accuracy(model(params, x_train), y_train);
      std::printf("%s\n", nn::progress_line(epoch, epochs, r.final_loss, train_accuracy, r.test_accuracy,
                                            double(n_train), seconds).c_str());
    }
  }
  return r;
}

}  // namespace digits_example
