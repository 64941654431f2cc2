// Tells which of five languages a single word comes from, with hyperdimensional computing written once
// for any backend and any model whose vectors add: each letter is a random vector, a word (with a
// boundary mark before and after it, so prefixes and suffixes count) is its n-gram profile (the
// sum of its letter bigrams, trigrams and 4-grams, each an n-gram bound as permuted products), and a centroid classifier adds the words of each language (one pass) and then refines
// the centroids as OnlineHD does. The words are a fixed sample of Debian's word lists (wamerican,
// wngerman, wfrench, wspanish, witalian; tests/data/make_language_fixtures.py). It prints the
// held-out accuracy (a seeded 20%) after each refinement pass and a confusion table.
// Usage: vsa_language [directory of words.npy and labels.npy]   (default: tests/data/language)
#include <fusor/fusor.hpp>

#include <cstdint>
#include <cstdio>
#include <filesystem>

#include "data_path.hpp"

namespace vsa = fusor::vsa;

constexpr const char* languages[] = {"english", "german", "french", "spanish", "italian"};
constexpr int n_languages = 5;

/// Words as rows of letter codes 1..A padded with 0 (the fixture) to token rows: the boundary mark
/// (token 0), the letters (tokens 1..A), the boundary mark again, then -1 (ngrams' padding).
template <fusor::backend B>
fusor::array<std::int64_t, B> tokens_of(const fusor::array<std::uint8_t, fusor::cpu>& words) {
  using namespace fusor;
  const index_t n = words.shape()[0], len = words.shape()[1];
  array<std::int64_t, cpu> t = full<std::int64_t, cpu>(extents{n, len + 2}, -1);
  for (index_t i = 0; i < n; ++i) {
    index_t l = 0;
    t(i, 0) = 0;
    for (; l < len && words(i, l) != 0; ++l) t(i, l + 1) = words(i, l);
    t(i, l + 1) = 0;
  }
  return to<B>(t);
}

template <fusor::backend B, vsa::model M>
double identify_languages(const M& m, const std::filesystem::path& dir, int refinements) {
  using namespace fusor;
  const auto words = load_npy<std::uint8_t, cpu>(dir / "words.npy");
  const array<std::int64_t, B> labels = to<B>(array<std::int64_t, cpu>(cast<std::int64_t>(load_npy<std::uint8_t, cpu>(dir / "labels.npy"))));
  const index_t n = words.shape()[0], n_test = n / 5, n_train = n - n_test;
  const index_t letters = index_t(max(words)) + 1;  // the boundary mark and the alphabet

  // each word's n-gram profile: its bigrams, trigrams and 4-grams summed (counts, not their sign:
  // the counts carry more than the majority), every word in one call per n
  const auto alphabet = vsa::random<B>(m, letters, /*seed=*/7);
  const auto tokens = tokens_of<B>(words);
  const vsa::bundle_options counts{vsa::normalization::none};
  array<typename M::value_type, B> encoded = vsa::ngrams(m, alphabet, tokens, 2, 1, counts);
  for (index_t n_gram : {3, 4}) encoded += vsa::ngrams(m, alphabet, tokens, n_gram, 1, counts);

  random::generator rng(2026);
  const array<std::int64_t, B> order = random::permutation<B>(rng, n);
  const array<std::int64_t, B> train = order(range(0, n_train)).copy(), test = order(range(n_train, n)).copy();
  const auto x_train = take(encoded, train, 0), x_test = take(encoded, test, 0);
  const array<std::int64_t, B> y_train = take(labels, train), y_test = take(labels, test);

  vsa::centroid_classifier<M, B> classifier(m, n_languages);
  classifier.fit(x_train, y_train);
  std::printf("one pass: %.2f%% held out\n", 100 * classifier.accuracy(x_test, y_test));
  for (int epoch = 1; epoch <= refinements; ++epoch) {
    const index_t wrong = classifier.refine(x_train, y_train);
    std::printf("refinement %2d: %4lld training words corrected, %.2f%% held out\n", epoch, (long long)wrong,
                100 * classifier.accuracy(x_test, y_test));
  }

  // the confusion table: rows are the true languages, columns the predicted ones
  const auto truth = to<cpu>(y_test);
  const auto guess = to<cpu>(classifier.predict(x_test));
  index_t table[n_languages][n_languages] = {};
  for (index_t i = 0; i < n_test; ++i) ++table[truth(i)][guess(i)];
  std::printf("%-8s", "");
  for (const char* l : languages) std::printf("%8s", l);
  std::printf("\n");
  for (int r = 0; r < n_languages; ++r) {
    std::printf("%-8s", languages[r]);
    for (int c = 0; c < n_languages; ++c) std::printf("%8lld", (long long)table[r][c]);
    std::printf("\n");
  }
  return classifier.accuracy(x_test, y_test);
}

int main(int argc, char** argv) {
  const double accuracy = identify_languages<fusor::cpu>(
      vsa::map_b(10'000), argc > 1 ? std::string(argv[1]) : example::data_path(FUSOR_LANGUAGE_DIR), 10);
  std::printf("held-out accuracy %.2f%% (MAP-B, d = 10000, letter 2-, 3- and 4-grams of single words)\n", 100 * accuracy);
  if (accuracy < 0.78) {
    std::printf("vsa_language: FAILED (expected >= 78%%)\n");
    return 1;
  }
  std::printf("vsa_language: ok\n");
  return 0;
}
