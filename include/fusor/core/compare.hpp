#pragma once
// Whole-array comparisons that answer one bool: allclose, array_equal, array_equiv (NumPy's
// names and rules). Each is one fused reduction over the elementwise test; nothing is allocated.
// The elementwise isclose itself is in operators.hpp.
#include "operators.hpp"
#include "reduce.hpp"

namespace fusor {

/// np.allclose: whether isclose(a, b, t) holds everywhere (the shapes broadcast, else shape_error).
template <class A, class B>
  requires detail::operand_pair<A, B>
bool allclose(const A& a, const B& b, const isclose_options& t = {}) {
  return all(isclose(a, b, t));
}

/// np.array_equal: the same shape and equal elements (NaN equal to NaN only with equal_nan).
/// Different shapes give false, not an error.
template <expression A, expression B>
bool array_equal(const A& a, const B& b, bool equal_nan = false) {
  const auto na = detail::to_node(a);
  const auto nb = detail::to_node(b);
  if (expr_shape(na) != expr_shape(nb)) return false;
  if (equal_nan) return all(logical_or(na == nb, logical_and(isnan(na), isnan(nb))));
  return all(na == nb);
}

/// np.array_equiv: shapes that broadcast together and equal elements after broadcasting; shapes
/// that do not broadcast give false.
template <expression A, expression B>
bool array_equiv(const A& a, const B& b) {
  const auto na = detail::to_node(a);
  const auto nb = detail::to_node(b);
  const extents sa = expr_shape(na), sb = expr_shape(nb);
  const int rank = std::max(sa.size(), sb.size());
  for (int k = 1; k <= rank; ++k) {
    const index_t x = k <= sa.size() ? sa[sa.size() - k] : 1, y = k <= sb.size() ? sb[sb.size() - k] : 1;
    if (x != y && x != 1 && y != 1) return false;
  }
  return all(na == nb);
}

}  // namespace fusor
