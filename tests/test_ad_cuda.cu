// The backend-generic autodiff bodies on the cuda backend: tests/generic/ad_body.hpp here (ad_ops_body.hpp and
// ad_fft_body.hpp in test_ad_ops_cuda.cu and test_ad_fft_cuda.cu, linked into the same program), plus the same
// numbers as the cpu backend for a dual statement run in the one kernel.
#include <fusor/cuda.cuh>
#define TEST_BACKEND fusor::cuda
#include "generic/ad_body.hpp"

TEST_CASE("a dual statement is one kernel and gives the cpu's numbers") {
  const index_t n = 300'001;
  const auto xs = test::values<float>(n, -2, 2, 21), vs = test::values<float>(n, -1, 1, 22);
  array<float, fusor::cuda> x = adbody::dev(xs), v = adbody::dev(vs);
  array<dual<float>, fusor::cuda> y(x.shape());
  instrument::kernel_launches = 0;
  y = sin(ad::make_dual(x, v)) * exp(-ad::make_dual(x, v) / 4.0f);
  CHECK(instrument::kernel_launches == 1);
  array<float> xc = test::make(xs), vc = test::make(vs);
  const array<dual<float>> yc = sin(ad::make_dual(xc, vc)) * exp(-ad::make_dual(xc, vc) / 4.0f);
  const auto yd = adbody::host_values(y);
  index_t bad = 0;
  for (index_t i = 0; i < n; ++i) {
    const auto a = yd[std::size_t(i)], b = yc.data()[i];
    bad += !(test::close(a.value, b.value, 2e-6) && test::close(a.tangent[0], b.tangent[0], 2e-6));
  }
  CHECK(bad == 0);
}
