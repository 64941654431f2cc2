// A consumer that includes fusor's headers: a fused expression and a reduction against a plain
// loop, an FFT round trip, a GEMM and an .npz round trip (links FFTW, CBLAS and libzip through the
// package's targets or fusor.pc).
#include <fusor/fusor.hpp>

#include <cmath>
#include <cstdio>
#include <filesystem>

int main() {
  using fusor::index_t;
  const index_t n = 1001;
  fusor::array<float> x = fusor::arange<float>(0, n);
  fusor::array<float> y = 3.0f * x - fusor::sqrt(x);
  double ref = 0;
  bool ok = true;
  for (index_t i = 0; i < n; ++i) {
    const float r = 3.0f * float(i) - std::sqrt(float(i));
    ok = ok && std::abs(y(i) - r) <= 1e-6f * (1 + std::abs(r));
    ref += double(r);
  }
  ok = ok && std::abs(fusor::sum(y) - ref) <= 1e-6 * std::abs(ref);
  fusor::array<float> back = fusor::fft::irfft(fusor::fft::rfft(y), n);
  ok = ok && fusor::max(fusor::abs(back - y)) < 1e-2f;
  fusor::array<float> p = fusor::matmul(fusor::reshape(x, {7, 143}), fusor::ones<float>({143, 1}));
  ok = ok && p(6, 0) == float(143 * (6 * 143) + 143 * 142 / 2);
  const auto archive = std::filesystem::temp_directory_path() / "fusor_headers_consumer.npz";
  fusor::npz_writer w(archive);
  w.add("p", p);
  w.close();
  ok = ok && fusor::npz_archive(archive).load<float>("p")(6, 0) == p(6, 0);
  std::filesystem::remove(archive);
  std::printf("%s\n", ok ? "headers consumer: ok" : "headers consumer: WRONG RESULT");
  return ok ? 0 : 1;
}
