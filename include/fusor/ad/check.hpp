#pragma once
// Central differences and gradient checking (KlongPy's ∇ and .gradcheck, PyTorch's gradcheck):
// the independent reference every derivative in fusor is tested against, and a tool for users'
// own functions and custom adjoints. Generic over the backend; the comparisons run on host copies.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "../core/array.hpp"
#include "../core/create.hpp"
#include "../core/error.hpp"
#include "../core/random.hpp"
#include "../core/slice.hpp"
#include "../core/transfer.hpp"
#include "forward.hpp"
#include "transforms.hpp"

namespace fusor::ad {

namespace detail {
// The values of a function's result (a number, an array or an expression) as host doubles.
template <class R>
std::vector<double> host_values(const R& r) {
  if constexpr (std::is_arithmetic_v<R>) {
    return {double(r)};
  } else if constexpr (expression<R>) {
    using T = value_t<R>;
    static_assert(std::is_floating_point_v<T>, "fusor: central differences need a real floating result");
    const array<T, cpu> h = to<cpu>(r);
    std::vector<double> v(std::size_t(h.size()));
    const auto c = h.copy();  // contiguous
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = double(c.data()[i]);
    return v;
  } else {
    static_assert(std::is_arithmetic_v<R>, "fusor: central differences need f to return a number or an array");
    return {};
  }
}

template <class T>
constexpr T default_step() {
  // the step that balances truncation (h^2) against rounding (eps / h): about eps^(1/3)
  return std::is_same_v<T, float> ? T(1e-3) : T(1e-6);
}

template <class T, class B>
void set_element(array<T, B>& a, index_t i, T value) {
  auto flat = a.reshape(extents{a.size()});
  flat(range(i, i + 1)) = value;
}
}  // namespace detail

/// (f(x + h v) - f(x - h v)) / 2h, for f returning a number or an array: the directional
/// derivative by central differences (error O(h^2)), as host doubles.
template <class F, class T, class B>
std::vector<double> numeric_jvp(F&& f, const array<T, B>& x, const array<T, B>& v, T h = detail::default_step<T>()) {
  static_assert(std::is_floating_point_v<T>, "fusor: central differences need a float or double input");
  if (x.shape() != v.shape())
    throw shape_error("fusor: numeric_jvp: the direction must have the input's shape " + to_string(x.shape()) +
                      ", got " + to_string(v.shape()));
  if (!(h > T(0))) throw value_error("fusor: numeric_jvp needs a step h > 0, got " + std::to_string(h));
  const array<T, B> xp = x + h * v;
  const array<T, B> xm = x - h * v;
  const auto fp = detail::host_values(f(xp));
  const auto fm = detail::host_values(f(xm));
  std::vector<double> d(fp.size());
  for (std::size_t i = 0; i < d.size(); ++i) d[i] = (fp[i] - fm[i]) / (2.0 * double(h));
  return d;
}

/// The gradient of a scalar function by central differences, one coordinate at a time
/// (KlongPy's ∇): 2n evaluations of f, for checking and for functions with no derivative code.
template <class F, class T, class B>
array<T, B> numeric_grad(F&& f, const array<T, B>& x, T h = detail::default_step<T>()) {
  static_assert(std::is_floating_point_v<T>, "fusor: central differences need a float or double input");
  if (!(h > T(0))) throw value_error("fusor: numeric_grad needs a step h > 0, got " + std::to_string(h));
  const index_t n = x.size();
  const array<T, cpu> hx = to<cpu>(x);
  std::vector<T> g(static_cast<std::size_t>(n));
  array<T, B> probe = x.copy();
  for (index_t i = 0; i < n; ++i) {
    const T xi = hx.data()[i];
    detail::set_element(probe, i, T(xi + h));
    const auto fp = detail::host_values(f(probe));
    detail::set_element(probe, i, T(xi - h));
    const auto fm = detail::host_values(f(probe));
    detail::set_element(probe, i, xi);
    if (fp.size() != 1)
      throw shape_error("fusor: numeric_grad needs f to return one number, got " + std::to_string(fp.size()) +
                        " values (use numeric_jvp, or jacfwd, for a vector function)");
    g[std::size_t(i)] = T((fp[0] - fm[0]) / (2.0 * double(h)));
  }
  return array<T, B>(std::span<const T>(g.data(), g.size()), x.shape());
}

/// Which derivative gradcheck checks (JAX's check_grads modes), a template argument because it
/// decides what f is called with: forward mode (jvp: arrays of duals), reverse mode (vjp:
/// variables, so matmul, FFT convolutions and custom_vjp adjoints are checked too), or both.
enum class gradcheck_mode { forward, reverse, both };

struct gradcheck_options {
  int directions = 8;            ///< random directions (normal draws) to check
  bool per_coordinate = false;   ///< also check every coordinate direction e_i (small inputs)
  double step = 0;               ///< central-difference step; 0: 1e-6 for double, 1e-3 for float
  double atol = -1;              ///< absolute tolerance; < 0: 1e-6 for double, 1e-2 for float
  double rtol = -1;              ///< relative tolerance; < 0: 1e-5 for double, 1e-2 for float
  std::uint64_t seed = 0;        ///< seed of the random directions
};

/// What gradcheck found: the largest errors between the derivative fusor computes and central
/// differences, over all directions, and the direction where the error was worst.
template <class T, class B>
struct gradcheck_result {
  bool passed = true;
  double max_abs_error = 0;
  double max_rel_error = 0;
  int directions_checked = 0;
  index_t worst_coordinate = -1;  ///< the coordinate direction of the worst error, -1 if a random one
  array<T, B> worst_direction;    ///< the direction of the worst error
  std::string report() const {
    std::ostringstream s;
    s << (passed ? "gradcheck passed" : "gradcheck FAILED") << ": " << directions_checked
      << " directions, max abs error " << max_abs_error << ", max rel error " << max_rel_error;
    if (worst_coordinate >= 0) s << ", worst along coordinate " << worst_coordinate;
    return s.str();
  }
};

/// Checks f's derivative at x against central differences along random directions v (and every
/// coordinate with per_coordinate), with |error| <= atol + rtol |reference| required:
/// - forward mode: jvp(f, x, v) against (f(x + hv) - f(x - hv)) / 2h, every output element;
/// - reverse mode: the pullback of a random cotangent u (1 for a scalar f), uᵀJ, dotted with v,
///   against uᵀ(f(x + hv) - f(x - hv)) / 2h: one number per direction, from one recording.
/// f is written once (a generic lambda or template) returning a number or an array, for T and
/// dual<T> (forward) or variables (reverse). gradcheck<gradcheck_mode::reverse>(f, x) picks the mode.
template <gradcheck_mode Mode = gradcheck_mode::forward, class F, class T, class B>
gradcheck_result<T, B> gradcheck(F&& f, const array<T, B>& x, gradcheck_options opt = {}) {
  static_assert(std::is_floating_point_v<T>, "fusor: gradcheck needs a float or double input");
  constexpr bool single = std::is_same_v<T, float>;
  const T h = opt.step > 0 ? T(opt.step) : detail::default_step<T>();
  const double atol = opt.atol >= 0 ? opt.atol : (single ? 1e-2 : 1e-6);
  const double rtol = opt.rtol >= 0 ? opt.rtol : (single ? 1e-2 : 1e-5);
  if (opt.directions < 0)
    throw value_error("fusor: gradcheck needs directions >= 0, got " + std::to_string(opt.directions));
  gradcheck_result<T, B> res;
  fusor::random::generator g(opt.seed);
  // one comparison: the derivative's values against the reference's, element by element
  auto compare = [&](const std::vector<double>& ad_values, const std::vector<double>& ref, const array<T, B>& v,
                     index_t coordinate) {
    if (ad_values.size() != ref.size())
      throw shape_error("fusor: gradcheck: the derivative has " + std::to_string(ad_values.size()) +
                        " values and the function " + std::to_string(ref.size()));
    bool worst = false;
    for (std::size_t i = 0; i < ref.size(); ++i) {
      const double err = std::abs(ad_values[i] - ref[i]);
      const double rel = err / std::max(std::abs(ref[i]), atol);  // relative where the reference is not tiny
      if (!(err <= atol + rtol * std::abs(ref[i]))) res.passed = false;  // NaN fails too
      if (err > res.max_abs_error || std::isnan(err)) {
        res.max_abs_error = err;
        worst = true;
      }
      res.max_rel_error = std::max(res.max_rel_error, rel);
    }
    if (worst || res.directions_checked == 0) {
      res.worst_direction = v.copy();
      res.worst_coordinate = coordinate;
    }
    ++res.directions_checked;
  };
  auto each_direction = [&](auto&& check) {
    for (int d = 0; d < opt.directions; ++d) check(fusor::random::normal<T, B>(g, x.shape()), -1);
    if (opt.per_coordinate) {
      for (index_t i = 0; i < x.size(); ++i) {
        array<T, B> e = zeros<T, B>(x.shape());
        detail::set_element(e, i, T(1));
        check(e, i);
      }
    }
  };
  if constexpr (Mode != gradcheck_mode::reverse) {
    each_direction([&](const array<T, B>& v, index_t coordinate) {
      const auto [value, tangent] = jvp(f, x, v);
      (void)value;
      compare(detail::host_values(tangent), numeric_jvp(f, x, v, h), v, coordinate);
    });
  }
  if constexpr (Mode != gradcheck_mode::forward) {
    const auto recorded = vjp(f, x);  // (value, pullback): one recording for every direction
    const auto& pb = recorded.second;
    using R = value_t<std::remove_cvref_t<decltype(recorded.first)>>;
    const bool scalar = pb.output_shape().numel() == 1;
    auto reverse = [&](const array<T, B>& v, index_t coordinate) {
      const array<R, B> u = scalar ? full<R, B>(pb.output_shape(), R(1)) : fusor::random::normal<R, B>(g, pb.output_shape());
      const auto gx = detail::host_values(pb(u)), hv = detail::host_values(v), hu = detail::host_values(u);
      const auto diff = numeric_jvp(f, x, v, h);
      if (diff.size() != hu.size())
        throw shape_error("fusor: gradcheck: the recorded output has " + std::to_string(hu.size()) +
                          " values and the function " + std::to_string(diff.size()));
      double got = 0, want = 0;
      for (std::size_t i = 0; i < gx.size(); ++i) got += gx[i] * hv[i];
      for (std::size_t i = 0; i < diff.size(); ++i) want += hu[i] * diff[i];
      compare({got}, {want}, v, coordinate);
    };
    each_direction(reverse);
  }
  return res;
}

}  // namespace fusor::ad
