#include <fusor/fusor.hpp>

#include <cstdio>
#include <filesystem>

int main() {
  fusor::array<float> x = fusor::arange<float>(0, 100);
  const double s = fusor::sum(2.0f * x + 1.0f);  // 2 * 4950 + 100
  auto f = fusor::fft::rfft(x);
  // an .npz round trip: libzip is linked through the package
  const auto archive = std::filesystem::temp_directory_path() / "fusor_test_package.npz";
  fusor::npz_writer w(archive);
  w.add("x", x);
  w.close();
  const bool npz = fusor::npz_archive(archive).load<float>("x")(99) == 99.0f;
  std::filesystem::remove(archive);
  std::printf("fusor test_package: sum %.1f, rfft bins %lld, npz %s\n", s, static_cast<long long>(f.size()),
              npz ? "ok" : "WRONG");
  return s == 10000.0 && f.size() == 51 && npz ? 0 : 1;
}
