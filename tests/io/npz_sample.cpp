// Writes two .npz archives (stored and deflated) of arrays with closed-form values into the
// directory argv[1], for tests/io/check_npz.py, which reads them with Python's zipfile: a reader
// independent of libzip, the one np.load uses.
#include <fusor/fusor.hpp>

#include <complex>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <vector>

int main(int argc, char** argv) {
  using namespace fusor;
  if (argc != 2) {
    std::fprintf(stderr, "usage: npz_sample <directory>\n");
    return 2;
  }
  try {
    const std::filesystem::path dir = argv[1];
    std::vector<float> f(12);
    for (int i = 0; i < 12; ++i) f[std::size_t(i)] = float(i) * 0.5f - 2.0f;
    std::vector<std::int64_t> l(5);
    for (int i = 0; i < 5; ++i) l[std::size_t(i)] = (i - 2) * 1'000'000'000'000LL;
    std::vector<std::complex<double>> c(3);
    for (int i = 0; i < 3; ++i) c[std::size_t(i)] = {i + 0.5, -2.0 * i};
    for (const auto compression : {npz_compression::stored, npz_compression::deflated}) {
      npz_writer w(dir / (compression == npz_compression::stored ? "stored.npz" : "deflated.npz"), compression);
      w.add("f32", array<float>(std::span<const float>(f), extents{3, 4}));
      w.add("i64", array<std::int64_t>(std::span<const std::int64_t>(l), extents{5}));
      w.add("c128", array<std::complex<double>>(std::span<const std::complex<double>>(c), extents{3}));
      w.add("0.weight", full<double>(extents{}, 3.25));
      w.add("empty", zeros<float>(extents{0, 3}));
      w.close();
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "npz_sample: %s\n", e.what());
    return 1;
  }
  return 0;
}
