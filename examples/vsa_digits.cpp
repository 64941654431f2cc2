// Classifies scikit-learn's 8x8 handwritten digits with hyperdimensional computing, written once for
// any backend and any MAP-like model: each pixel's value (0..16) is a level vector, bound to its
// position's random key, and the 64 pairs are bundled into one record per image (encode_record);
// a centroid classifier adds the records of each class (one pass) and then refines the centroids
// as OnlineHD does. It prints the held-out accuracy (the 20% that examples/train_digits holds out)
// after each refinement pass and a confusion table.
// Usage: vsa_digits [directory of images.npy and labels.npy]   (default: tests/data/digits)
#include <fusor/fusor.hpp>

#include <cstdint>
#include <cstdio>
#include <filesystem>

#include "data_path.hpp"

namespace vsa = fusor::vsa;

template <fusor::backend B, vsa::model M>
double classify_digits(const M& m, const std::filesystem::path& dir) {
  using namespace fusor;
  const array<std::uint8_t, B> images = to<B>(load_npy<std::uint8_t, cpu>(dir / "images.npy"));
  const array<std::int64_t, B> labels = to<B>(array<std::int64_t, cpu>(cast<std::int64_t>(load_npy<std::uint8_t, cpu>(dir / "labels.npy"))));
  const index_t n = images.shape()[0], n_test = n / 5, n_train = n - n_test;

  // the encoder: 17 levels for the pixel values 0..16, a random key per pixel position
  const auto pixel = vsa::scalar_encoder<M, B>::level(m, 17, 0.0, 16.0, /*seed=*/1);
  const auto position = vsa::random<B>(m, 64, /*seed=*/2);
  // each image's record: pixel p's level bound to position[p], the 64 pairs bundled, in one pass
  // (the same vectors as vsa::record(m, position, pixel.encode(images)) without the (n, 64, width)
  // bound pixels in memory)
  const auto records = pixel.encode_record(position, images);

  // the split of examples/train_digits: a seeded permutation, the last 20% held out
  random::generator rng(2026);
  const array<std::int64_t, B> order = random::permutation<B>(rng, n);
  const array<std::int64_t, B> train = order(range(0, n_train)).copy(), test = order(range(n_train, n)).copy();
  const auto x_train = take(records, train, 0), x_test = take(records, test, 0);
  const array<std::int64_t, B> y_train = take(labels, train), y_test = take(labels, test);

  vsa::centroid_classifier<M, B> classifier(m, 10);
  classifier.fit(x_train, y_train);
  std::printf("one pass: %.2f%% held out\n", 100 * classifier.accuracy(x_test, y_test));
  for (int epoch = 1; epoch <= 20; ++epoch) {
    const index_t wrong = classifier.refine(x_train, y_train);
    std::printf("refinement %2d: %3lld training samples corrected, %.2f%% held out\n", epoch, (long long)wrong,
                100 * classifier.accuracy(x_test, y_test));
  }

  // the confusion table: rows are the true digits, columns the predicted ones
  const auto truth = to<cpu>(y_test);
  const auto guess = to<cpu>(classifier.predict(x_test));
  index_t table[10][10] = {};
  for (index_t i = 0; i < n_test; ++i) ++table[truth(i)][guess(i)];
  std::printf("true\\predicted");
  for (int c = 0; c < 10; ++c) std::printf("%4d", c);
  std::printf("\n");
  for (int r = 0; r < 10; ++r) {
    std::printf("%14d ", r);
    for (int c = 0; c < 10; ++c) std::printf("%4lld", (long long)table[r][c]);
    std::printf("\n");
  }
  return classifier.accuracy(x_test, y_test);
}

int main(int argc, char** argv) {
  const double accuracy = classify_digits<fusor::cpu>(vsa::map_b(1000), argc > 1 ? std::string(argv[1]) : example::data_path(FUSOR_DIGITS_DIR));
  std::printf("held-out accuracy %.2f%% (MAP-B, d = 1000)\n", 100 * accuracy);
  if (accuracy < 0.90) {
    std::printf("vsa_digits: FAILED (expected >= 90%%)\n");
    return 1;
  }
  std::printf("vsa_digits: ok\n");
  return 0;
}
