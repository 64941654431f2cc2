#pragma once
// Reduction operators, shared by every backend: the accumulator type each uses (NumPy's result
// types, read from element_traits: integer sums in 64 bits; float sums collected in double
// between SIMD blocks), its
// identity and how two partial results combine. A backend only decides how to loop.
#include <complex>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "functors.hpp"

namespace fusor::detail {

/// What a sum of V collects in (element_traits<V>::accumulator: double for floats, int64 for bool
/// and signed integers, uint64 for unsigned ones, complex<double> for complex).
template <class V>
using sum_wide_t = typename element_traits<V>::accumulator;
/// NumPy's result type of a sum: floats keep their type, bool and signed integers give int64,
/// unsigned integers uint64.
template <class V>
using sum_result_t = typename element_traits<V>::sum_type;

struct sum_op {
  template <class V>
  using wide = sum_wide_t<V>;
  template <class W>
  FUSOR_HD static constexpr W identity() { return W(0); }
  template <class W>
  FUSOR_HD static W combine(const W& a, const W& b) { return add_fn{}(a, b); }
};
/// A sum for means: integers collect in float64 (NumPy's mean), so int64 data cannot wrap.
struct mean_sum_op : sum_op {
  template <class V>
  using wide = std::conditional_t<std::is_integral_v<V>, double, sum_wide_t<V>>;
};
/// The last step of a whole reduction that executor<B>::reduce_into writes where it lies: the
/// accumulator w divided by `divisor` (a mean's count: fusor::mean's w / n, so a mean of nothing
/// is 0/0, NaN), converted to R, then multiplied by `factor` (both exact when they are 1).
template <class R>
struct finish_as {
  double divisor = 1;
  R factor = R(1);
  template <class W>
  FUSOR_HD R operator()(const W& w) const {
    return R(w / W(divisor)) * factor;
  }
};
struct prod_op {
  template <class V>
  using wide = sum_wide_t<V>;
  template <class W>
  FUSOR_HD static constexpr W identity() { return W(1); }
  template <class W>
  FUSOR_HD static W combine(const W& a, const W& b) { return multiply_fn{}(a, b); }
};
/// NaN-propagating maximum (np.max): once a NaN is seen the result is NaN.
struct max_op {
  template <class V>
  using wide = V;
  template <class W>
  FUSOR_HD static constexpr W identity() {
    // (floating types, float16 and bfloat16 included, start from -inf)
    if constexpr (std::numeric_limits<W>::has_infinity) return -std::numeric_limits<W>::infinity();
    else return std::numeric_limits<W>::lowest();
  }
  template <class W>
  FUSOR_HD static W combine(const W& a, const W& b) { return (b > a || is_nan(b)) ? b : a; }
};
struct min_op {
  template <class V>
  using wide = V;
  template <class W>
  FUSOR_HD static constexpr W identity() {
    if constexpr (std::numeric_limits<W>::has_infinity) return std::numeric_limits<W>::infinity();
    else return std::numeric_limits<W>::max();
  }
  template <class W>
  FUSOR_HD static W combine(const W& a, const W& b) { return (b < a || is_nan(b)) ? b : a; }
};
struct any_op {
  template <class V>
  using wide = bool;
  template <class W>
  FUSOR_HD static constexpr W identity() { return false; }
  FUSOR_HD static bool combine(bool a, bool b) { return a || b; }
};
struct all_op {
  template <class V>
  using wide = bool;
  template <class W>
  FUSOR_HD static constexpr W identity() { return true; }
  FUSOR_HD static bool combine(bool a, bool b) { return a && b; }
};

}  // namespace fusor::detail
