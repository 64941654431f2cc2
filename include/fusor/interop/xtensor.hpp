#pragma once
// Zero-copy views between fusor and xtensor (cpu only): as_xtensor adapts an array's buffer,
// from_xtensor evaluates any xtensor expression straight into a new fusor array.
#include <vector>

#include <xtensor/xadapt.hpp>
#include <xtensor/xarray.hpp>

#include "../fusor.hpp"

namespace fusor {

/// An xtensor adaptor over a view's memory with its strides (no copy; dynamic layout).
template <class T>
auto as_xtensor(array_view<T, cpu> v) {
  for (index_t s : v.strides())
    if (s < 0)
      throw value_error("fusor: as_xtensor needs non-negative strides (xtensor adapts [data, data + size)), got strides " +
                        to_string(v.strides()));
  std::vector<std::size_t> shape(v.shape().begin(), v.shape().end());
  std::vector<std::ptrdiff_t> strides(v.strides().begin(), v.strides().end());
  return xt::adapt(v.data(), std::size_t(v.size()), xt::no_ownership(), shape, strides);
}
/// An xtensor adaptor over an array's memory (no copy, row-major, so every xtensor algorithm
/// accepts it); valid while the array lives.
template <class T>
auto as_xtensor(array<T, cpu>& a) {
  std::vector<std::size_t> shape(a.shape().begin(), a.shape().end());
  return xt::adapt(a.data(), std::size_t(a.size()), xt::no_ownership(), shape);
}

/// A fusor array holding the values of an xtensor expression (evaluated once, into our buffer).
template <class E>
auto from_xtensor(const xt::xexpression<E>& expr) {
  using T = typename E::value_type;
  const auto& e = expr.derived_cast();
  extents shape;
  for (auto d : e.shape()) shape.push_back(index_t(d));
  array<T, cpu> r(shape);
  auto target = as_xtensor(r);
  target = e;
  return r;
}

}  // namespace fusor
