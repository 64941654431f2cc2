// Reverse mode through float16 and bfloat16 variables, each operation family against float32 at
// the same values, written once and instantiated per backend: tests/test_ad_half.cpp runs it on
// cpu, tests/test_ad_half_cuda.cu on cuda.
//
// The includer defines TEST_BACKEND (fusor::cpu or fusor::cuda) before including this file.
#include "../common.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace adhalf {

using fusor::extents;
using fusor::index_t;
using B = TEST_BACKEND;
namespace ad = fusor::ad;
namespace nn = fusor::ad::nn;
namespace F = fusor::ad::nn::functional;
using I64 = fusor::array<std::int64_t, B>;
using F32 = fusor::array<float, B>;
inline F32 fvals(index_t n, double lo, double hi, std::uint64_t seed, extents shape) {
  return test::on<B>(test::values<float>(n, lo, hi, seed), shape);
}
inline std::vector<float> fv(const F32& a) { return test::host_values(a); }

/// The value and gradient of f at x in H (x rounded to H) against f at the same values in float32:
/// within `tol` of the largest float32 gradient (the operation computed in float32 and rounded to
/// H, its adjoint the same way).
template <class H, class Fn>
void check_half_reverse(const char* what, Fn f, const F32& x, double tol) {
  const fusor::array<H, B> xh = fusor::cast<H>(x);
  const F32 xr = fusor::cast<float>(xh);
  auto [v32, g32] = ad::value_and_grad([&](const auto& v) { return f(v); })(xr);
  auto [vh, gh] = ad::value_and_grad([&](const auto& v) { return f(v); })(xh);
  const auto a = fv(g32);
  const auto b = fv(F32(fusor::cast<float>(gh)));
  double gmax = 0, diff = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    gmax = std::max(gmax, std::abs(double(a[i])));
    diff = std::max(diff, std::abs(double(b[i]) - double(a[i])));
  }
  INFO(what, ": value ", double(vh), " against ", double(v32), "; gradients differ by ", diff, " of ", gmax);
  CHECK(std::abs(double(vh) - double(v32)) <= tol * std::max(1.0, std::abs(double(v32))));
  CHECK(diff <= tol * gmax);
  CHECK(gmax > 0);
}

/// Each operation family on 16-bit variables, one operation per code path (float16: ten; bfloat16,
/// which shares every path but the rounding: one of each kind, elementwise, a reduction, softmax,
/// the GEMM, a loss and a normalisation). Each is two value_and_grad instantiations (H and the
/// float32 reference), the heaviest kind in the suite: in a unit of their own, clang's asan build
/// of it peaks at 7 GiB (beside the layer bodies it reached 21 GiB and ran the machine out of memory).
template <class H>
void check_half_families() {
  constexpr bool all_families = std::is_same_v<H, fusor::float16>;
  const double tol = all_families ? 3e-3 : 2e-2;
  const F32 x = fvals(6 * 9, -2, 2, 52, extents{6, 9});
  const fusor::array<H, B> c = fusor::cast<H>(fvals(6 * 9, -1, 1, 53, extents{6, 9}));
  const I64 labels = test::on<B>(std::vector<std::int64_t>{0, 8, 1, 7, 2, 6});
  check_half_reverse<H>("elementwise", [&](const auto& v) { return sum(sin(v) * exp(v * H(0.5f)) + v * v); }, x, tol);
  check_half_reverse<H>("mean along an axis", [&](const auto& v) { return sum(mean(v * v, 0)); }, x, tol);
  if constexpr (all_families)
    check_half_reverse<H>("max along an axis", [&](const auto& v) { return sum(max(v, 1)); }, x, tol);
  if constexpr (all_families)
    check_half_reverse<H>("logsumexp", [&](const auto& v) { return sum(logsumexp(v, 1)); }, x, tol);
  check_half_reverse<H>("softmax", [&](const auto& v) { return sum(ad::softmax(v, 1) * c); }, x, tol);
  check_half_reverse<H>("matmul", [&](const auto& v) { return sum(ad::matmul(v, ad::transpose(v)) * H(0.25f)); }, x, tol);
  if constexpr (all_families)
    check_half_reverse<H>("einsum", [&](const auto& v) { return sum(ad::einsum("ij,kj->ik", v, v)); }, x, tol);
  if constexpr (all_families)
    check_half_reverse<H>("concatenate", [&](const auto& v) { return sum(square(ad::concatenate({v, v}, 0))); }, x, tol);
  check_half_reverse<H>("cross_entropy", [&](const auto& v) { return nn::cross_entropy(v, labels); }, x, tol);
  check_half_reverse<H>("layer_norm", [&](const auto& v) { return sum(F::layer_norm(v) * c); }, x, tol);
  // 16-bit logits give float32 losses (PyTorch's autocast runs losses in float32)
  static_assert(std::is_same_v<decltype(nn::cross_entropy(std::declval<const ad::var<H, B>&>(), labels)), ad::var<float, B>>);
}

TEST_CASE("reverse mode through float16 and bfloat16 variables: each operation family within rounding of float32") {
  check_half_families<fusor::float16>();
  check_half_families<fusor::bfloat16>();
}

}  // namespace adhalf
