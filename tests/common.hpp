#pragma once
// Helpers shared by the test programs: deterministic inputs from a plain generator (independent
// of fusor's), the sizes that exercise SIMD head/body/tail, and tolerant comparison.
#include <doctest/doctest.h>

#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include <fusor/fusor.hpp>

namespace test {

using fusor::index_t;

/// SIMD width (lanes) of T on this build.
template <class T>
inline constexpr index_t lanes = index_t(xsimd::batch<T>::size);

/// 0, 1, W-1, W, W+1, 3W+5 and a large odd size.
template <class T>
std::vector<index_t> edge_sizes(bool with_large = true) {
  constexpr index_t w = lanes<T>;
  std::vector<index_t> s{0, 1, w - 1, w, w + 1, 3 * w + 5};
  if (with_large) s.push_back(1'000'003);
  return s;
}

/// A small linear congruential generator: test inputs must not come from the code under test.
struct lcg {
  std::uint64_t state;
  double next() {  // [0, 1)
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return double(state >> 11) * 0x1.0p-53;
  }
};

template <class T>
std::vector<T> values(index_t n, double lo, double hi, std::uint64_t seed = 1) {
  lcg g{seed * 0x9E3779B97F4A7C15ull + 7};
  std::vector<T> v(std::size_t(n > 0 ? n : 0));
  for (auto& x : v) {
    const double a = lo + (hi - lo) * g.next();
    if constexpr (fusor::is_complex_v<T>) {
      const double b = lo + (hi - lo) * g.next();
      x = T(typename T::value_type(a), typename T::value_type(b));
    } else if constexpr (std::is_same_v<T, bool>) {
      x = a > (lo + hi) / 2;
    } else if constexpr (std::is_integral_v<T>) {
      x = T(std::floor(a));
    } else {
      x = T(a);
    }
  }
  return v;
}

template <class T, class B = fusor::cpu>
fusor::array<T, B> make(const std::vector<T>& v) {
  return fusor::array<T, B>(std::span<const T>(v.data(), v.size()), fusor::extents{index_t(v.size())});
}

/// An array of backend B holding v (made on the host, moved there with to<B>).
template <class B, class T>
fusor::array<T, B> on(const std::vector<T>& v, const fusor::extents& shape) {
  return fusor::to<B>(fusor::array<T>(std::span<const T>(v.data(), v.size()), shape));
}
template <class B, class T>
fusor::array<T, B> on(const std::vector<T>& v) {
  return on<B>(v, fusor::extents{index_t(v.size())});
}
/// The elements of an array or expression of any backend, back on the host, in C order.
template <class E>
auto host_values(const E& e) {
  const auto h = fusor::to<fusor::cpu>(e);
  using T = fusor::value_t<decltype(h)>;
  std::vector<T> out(std::size_t(h.size()));
  for (index_t i = 0; i < h.size(); ++i) out[std::size_t(i)] = h.data()[i];
  return out;
}

/// Host copy of an array of any backend (cpu: a plain copy).
template <class T, class B>
fusor::array<T, fusor::cpu> host(const fusor::array<T, B>& a) {
  return a.copy();
}

/// |a - b| <= tol * max(1, |b|), with NaN == NaN and equal infinities accepted.
template <class T>
bool close(const T& a, const T& b, double tol) {
  if constexpr (fusor::is_complex_v<T>) {
    // relative to the modulus: a component may cancel to near zero (x*y = ac - bd)
    if (!std::isfinite(std::abs(b)) || !std::isfinite(std::abs(a))) return close(a.real(), b.real(), tol) && close(a.imag(), b.imag(), tol);
    return std::abs(a - b) <= tol * std::max(1.0, double(std::abs(b)));
  } else if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
    if (std::isinf(a) || std::isinf(b)) return a == b;
    return std::abs(double(a) - double(b)) <= tol * std::max(1.0, std::abs(double(b)));
  } else {
    return a == b;
  }
}

/// Default tolerance: a few ulps of the type (SIMD transcendental functions are not correctly rounded).
template <class T>
double ulps(double n) {
  using R = fusor::real_t<T>;
  if constexpr (std::is_floating_point_v<R>) return n * double(std::numeric_limits<R>::epsilon());
  else return 0;
}

}  // namespace test

namespace test {
/// A view's elements in C order, read by walking its pointer and strides by hand (independent of
/// the executor).
template <class V>
auto walk(const V& v) {
  using T = typename V::value_type;
  std::vector<T> out;
  const auto& s = v.shape();
  const index_t n = s.numel();
  if (n == 0) return out;
  std::vector<index_t> idx(std::size_t(s.size()), 0);
  for (index_t c = 0; c < n; ++c) {
    index_t off = 0;
    for (int k = 0; k < s.size(); ++k) off += idx[std::size_t(k)] * v.strides()[k];
    out.push_back(v.data()[off]);
    for (int k = s.size() - 1; k >= 0; --k) {
      if (++idx[std::size_t(k)] < s[k]) break;
      idx[std::size_t(k)] = 0;
    }
  }
  return out;
}
template <class T, class B>
auto walk(const fusor::array<T, B>& a) {
  return walk(a.view());
}
/// 0, 1, 2, ... as an array of the given shape (exact in every dtype for small sizes).
template <class T>
fusor::array<T> iota(const fusor::extents& shape) {
  fusor::array<T> a(shape);
  for (index_t i = 0; i < a.size(); ++i) a.data()[i] = T(i % 127);
  return a;
}
}  // namespace test
