// Helpers shared by the layer bodies that compare in double (conv_body.hpp, attention_body.hpp):
// uniform test values on the backend under test, and the largest error relative to the
// reference's largest magnitude.
#pragma once
#include "../common.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace double_compare {

/// n values uniform in [lo, hi) from `seed`, as an array of `shape` on backend B.
template <class B>
fusor::array<double, B> values(fusor::index_t n, double lo, double hi, std::uint64_t seed, const fusor::extents& shape) {
  return test::on<B>(test::values<double>(n, lo, hi, seed), shape);
}

/// max |got - want| / max |want| (1e300 when the sizes differ).
inline double max_rel(const std::vector<double>& got, const std::vector<double>& want) {
  double top = 0, err = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    top = std::max(top, std::abs(want[i]));
    err = std::max(err, std::abs(got[i] - want[i]));
  }
  return got.size() == want.size() ? err / std::max(top, 1e-300) : 1e300;
}

}  // namespace double_compare
