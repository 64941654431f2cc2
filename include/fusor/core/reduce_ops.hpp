#pragma once
// Reduction operators, shared by every backend: the accumulator type each uses (NumPy's result
// types: integer sums in int64; float sums collected in double between SIMD blocks), its
// identity and how two partial results combine. A backend only decides how to loop.
#include <complex>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "functors.hpp"

namespace fusor::detail {

template <class V>
using sum_wide_t = std::conditional_t<
    is_complex_v<V>, std::complex<double>,
    std::conditional_t<std::is_floating_point_v<V>, double, std::int64_t>>;
/// NumPy: sums of bool and integers are int64, floating sums keep their type.
template <class V>
using sum_result_t = std::conditional_t<std::is_floating_point_v<V> || is_complex_v<V>, V, std::int64_t>;

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
    if constexpr (std::is_floating_point_v<W>) return -std::numeric_limits<W>::infinity();
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
    if constexpr (std::is_floating_point_v<W>) return std::numeric_limits<W>::infinity();
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
