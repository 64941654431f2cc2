#pragma once
// Zero-copy shape operations: each computes a new (pointer, shape, strides) over the same
// memory, so the result is an array_view that reads and writes the original elements.
//
// Every function takes an lvalue array or a view and returns a view. Given a temporary array or
// an expression instead, it returns a new array holding the result (a view of a temporary would
// dangle), so transpose(a + b) and transpose(matmul(x, y)) are safe.
#include <complex>
#include <string>
#include <type_traits>
#include <utility>

#include "array.hpp"
#include "assign.hpp"
#include "view.hpp"

namespace fusor {

namespace detail {
template <class X>
inline constexpr bool is_array_v = false;
template <class T, class B>
inline constexpr bool is_array_v<array<T, B>> = true;
template <class X>
inline constexpr bool is_view_v = false;
template <class T, class B>
inline constexpr bool is_view_v<array_view<T, B>> = true;

/// The view of an array or a view (arrays and views only).
template <class X>
auto part_view(const X& x) {
  if constexpr (is_view_v<X>) return x;
  else return x.view();
}
/// Calls f with a view of x: of x itself for arrays and views, else of x evaluated into a
/// temporary that lives for the call. For operations whose result owns its memory.
template <class X, class F>
auto with_input(const X& x, F&& f) {
  if constexpr (is_view_v<X> || is_array_v<X>) {
    return f(part_view(x));
  } else {
    static_assert(expression<X>, "fusor: expected an array, a view or an expression");
    const auto tmp = eval(x);
    return f(tmp.view());
  }
}
/// A new array holding x's elements: a copy of an array or view, or x evaluated.
template <class X>
auto owned_copy(const X& x) {
  if constexpr (is_view_v<X> || is_array_v<X>) return part_view(x).copy();
  else return eval(x);
}

/// Applies f (a view -> view function) to x: a view for lvalue arrays and views, a new array for
/// temporaries and expressions.
template <class X, class F>
auto with_view(X&& x, F&& f) {
  using U = std::remove_cvref_t<X>;
  if constexpr (is_view_v<U>) {
    return f(x);
  } else if constexpr (is_array_v<U>) {
    if constexpr (std::is_lvalue_reference_v<X>) return f(x.view());
    else return f(std::as_const(x).view()).copy();
  } else {
    static_assert(expression<U>, "fusor: shape operations take an array, a view or an expression");
    const auto tmp = eval(x);
    return f(tmp.view()).copy();
  }
}

template <class T, class B>
array_view<T, B> make_view(const array_view<T, B>& v, index_t offset, const extents& shape, const extents& strides) {
  return {v.data() ? v.data() + offset : nullptr, shape, strides};  // empty arrays have no buffer
}

inline void check_permutation(const extents& axes, int rank, const char* what) {
  if (axes.size() != rank)
    throw value_error(std::string("fusor: ") + what + " expects " + std::to_string(rank) +
                      " axes for an array of rank " + std::to_string(rank) + ", got " + to_string(axes));
  bool seen[max_rank] = {};
  for (index_t a : axes) {
    const int k = normalize_axis(int(a), rank);
    if (seen[k])
      throw value_error(std::string("fusor: ") + what + " expects each axis once, got " + to_string(axes) +
                        " (axis " + std::to_string(k) + " repeated)");
    seen[k] = true;
  }
}

/// NumPy's no-copy reshape: the new strides when the elements of v can be addressed in the new
/// shape without moving them; false otherwise (e.g. flattening a transposed matrix).
inline bool reshape_strides(const extents& shape, const extents& strides, const extents& new_shape,
                            extents& new_strides) {
  new_strides.resize(new_shape.size());
  if (shape.numel() == 0) {
    new_strides = contiguous_strides(new_shape);
    return true;
  }
  extents od, os;  // old axes without the size-1 ones (their strides do not matter)
  for (int k = 0; k < shape.size(); ++k)
    if (shape[k] != 1) {
      od.push_back(shape[k]);
      os.push_back(strides[k]);
    }
  int ni = 0, oi = 0;
  const int nn = new_shape.size(), on = od.size();
  while (ni < nn && oi < on) {
    int nj = ni + 1, oj = oi + 1;
    index_t np = new_shape[ni], op = od[oi];
    while (np != op) {  // grow the smaller side until both groups hold the same elements
      if (np < op) np *= new_shape[nj++];
      else op *= od[oj++];
    }
    for (int k = oi; k < oj - 1; ++k)  // the old group must be one contiguous run
      if (os[k] != od[k + 1] * os[k + 1]) return false;
    new_strides[nj - 1] = os[oj - 1];
    for (int k = nj - 1; k > ni; --k) new_strides[k - 1] = new_strides[k] * new_shape[k];
    ni = nj;
    oi = oj;
  }
  for (; ni < nn; ++ni) new_strides[ni] = 1;  // trailing size-1 axes
  return true;
}

}  // namespace detail

/// Reorders the axes (np.permute_dims / np.transpose(x, axes)): result axis k is x's axis axes[k].
template <class X>
auto permute_dims(X&& x, const extents& axes) {
  return detail::with_view(std::forward<X>(x), [&](const auto& v) {
    detail::check_permutation(axes, v.ndim(), "permute_dims");
    extents shape, strides;
    for (index_t a : axes) {
      const int k = normalize_axis(int(a), v.ndim());
      shape.push_back(v.shape()[k]);
      strides.push_back(v.strides()[k]);
    }
    return detail::make_view(v, 0, shape, strides);
  });
}
/// Reverses the axes (np.transpose(x), x.T): a 2-d matrix's transpose, without a copy.
template <class X>
auto transpose(X&& x) {
  return detail::with_view(std::forward<X>(x), [](const auto& v) {
    extents shape, strides;
    for (int k = v.ndim() - 1; k >= 0; --k) {
      shape.push_back(v.shape()[k]);
      strides.push_back(v.strides()[k]);
    }
    return detail::make_view(v, 0, shape, strides);
  });
}
template <class X>
auto transpose(X&& x, const extents& axes) {
  return permute_dims(std::forward<X>(x), axes);
}
/// Exchanges two axes (np.swapaxes).
template <class X>
auto swapaxes(X&& x, int axis1, int axis2) {
  return detail::with_view(std::forward<X>(x), [&](const auto& v) {
    const int a = normalize_axis(axis1, v.ndim()), b = normalize_axis(axis2, v.ndim());
    extents shape = v.shape(), strides = v.strides();
    std::swap(shape[a], shape[b]);
    std::swap(strides[a], strides[b]);
    return detail::make_view(v, 0, shape, strides);
  });
}
/// Moves axes to new positions, the others keeping their order (np.moveaxis).
template <class X>
auto moveaxis(X&& x, const extents& source, const extents& destination) {
  return detail::with_view(std::forward<X>(x), [&](const auto& v) {
    const int r = v.ndim();
    if (source.size() != destination.size())
      throw value_error("fusor: moveaxis needs as many destinations as sources, got " + to_string(source) + " and " +
                        to_string(destination));
    int order[max_rank];
    bool placed[max_rank] = {}, moved[max_rank] = {};
    for (int i = 0; i < source.size(); ++i) {
      const int s = normalize_axis(int(source[i]), r), d = normalize_axis(int(destination[i]), r);
      if (moved[s] || placed[d])
        throw value_error("fusor: moveaxis expects distinct axes, got source " + to_string(source) + " and destination " +
                          to_string(destination));
      moved[s] = placed[d] = true;
      order[d] = s;
    }
    for (int d = 0, s = 0; d < r; ++d) {
      if (placed[d]) continue;
      while (moved[s]) ++s;
      order[d] = s++;
    }
    extents shape, strides;
    for (int d = 0; d < r; ++d) {
      shape.push_back(v.shape()[order[d]]);
      strides.push_back(v.strides()[order[d]]);
    }
    return detail::make_view(v, 0, shape, strides);
  });
}
template <class X>
auto moveaxis(X&& x, int source, int destination) {
  return moveaxis(std::forward<X>(x), extents{source}, extents{destination});
}

/// Removes every axis of size 1 (np.squeeze).
template <class X>
auto squeeze(X&& x) {
  return detail::with_view(std::forward<X>(x), [](const auto& v) {
    extents shape, strides;
    for (int k = 0; k < v.ndim(); ++k)
      if (v.shape()[k] != 1) {
        shape.push_back(v.shape()[k]);
        strides.push_back(v.strides()[k]);
      }
    return detail::make_view(v, 0, shape, strides);
  });
}
/// Removes one axis, which must have size 1.
template <class X>
auto squeeze(X&& x, int axis) {
  return detail::with_view(std::forward<X>(x), [&](const auto& v) {
    const int a = normalize_axis(axis, v.ndim());
    if (v.shape()[a] != 1)
      throw value_error("fusor: squeeze expects axis " + std::to_string(axis) + " to have size 1, but shape " +
                        to_string(v.shape()) + " has " + std::to_string(v.shape()[a]) + " there");
    extents shape, strides;
    for (int k = 0; k < v.ndim(); ++k)
      if (k != a) {
        shape.push_back(v.shape()[k]);
        strides.push_back(v.strides()[k]);
      }
    return detail::make_view(v, 0, shape, strides);
  });
}
/// Inserts an axis of size 1 at position `axis` of the result (np.expand_dims).
template <class X>
auto expand_dims(X&& x, int axis) {
  return detail::with_view(std::forward<X>(x), [&](const auto& v) {
    const int a = normalize_axis(axis, v.ndim() + 1);
    extents shape, strides;
    for (int k = 0, src = 0; k <= v.ndim(); ++k) {
      if (k == a) {
        shape.push_back(1);
        strides.push_back(0);
      } else {
        shape.push_back(v.shape()[src]);
        strides.push_back(v.strides()[src++]);
      }
    }
    return detail::make_view(v, 0, shape, strides);
  });
}

/// A view with a new shape (one dimension may be -1). A view whenever the elements can be
/// addressed in the new shape without moving them (always for contiguous data, and for many
/// sliced or transposed layouts); otherwise shape_error tells you to copy first. Unlike NumPy,
/// fusor never copies silently here: a copy is spelled reshape(x.copy(), s) or flatten(x).
template <class X>
auto reshape(X&& x, const extents& new_shape) {
  return detail::with_view(std::forward<X>(x), [&](const auto& v) {
    const extents s = detail::resolve_reshape(v.shape(), new_shape);
    extents strides;
    if (!detail::reshape_strides(v.shape(), v.strides(), s, strides))
      throw shape_error("fusor: a view of shape " + to_string(v.shape()) + " and strides " + to_string(v.strides()) +
                        " cannot be reshaped to " + to_string(s) +
                        " without copying; use reshape(x.copy(), shape) or flatten(x)");
    return detail::make_view(v, 0, s, strides);
  });
}
/// The elements as one axis: a view when the layout allows (see reshape).
template <class X>
auto ravel(X&& x) {
  return reshape(std::forward<X>(x), extents{-1});
}
/// A new 1-d array of the elements in C order (always a copy, like np.ndarray.flatten).
template <class X>
auto flatten(X&& x) {
  using U = std::remove_cvref_t<X>;
  if constexpr (detail::is_array_v<U> && !std::is_lvalue_reference_v<X>) {
    return std::move(x).reshape(extents{-1});  // a temporary's buffer is already a fresh copy
  } else {
    auto out = detail::owned_copy(x);
    return std::move(out).reshape(extents{-1});
  }
}

/// A read-only-in-spirit view repeating x along new or size-1 axes with stride 0
/// (np.broadcast_to). Writing through it writes the shared elements.
template <class X>
auto broadcast_to(X&& x, const extents& shape) {
  return detail::with_view(std::forward<X>(x), [&](const auto& v) {
    check_shape(shape);
    const int n = shape.size(), r = v.ndim();
    if (r > n)
      throw shape_error("fusor: cannot broadcast shape " + to_string(v.shape()) + " to the lower-rank shape " +
                        to_string(shape));
    extents strides;
    strides.resize(n);
    for (int k = 0; k < n; ++k) {
      const int src = k - (n - r);
      if (src < 0) {
        strides[k] = 0;
      } else if (v.shape()[src] == shape[k]) {
        strides[k] = v.strides()[src];
      } else if (v.shape()[src] == 1) {
        strides[k] = 0;
      } else {
        throw shape_error("fusor: cannot broadcast shape " + to_string(v.shape()) + " to " + to_string(shape) +
                          ": axis " + std::to_string(k) + " has size " + std::to_string(v.shape()[src]) +
                          " (expected 1 or " + std::to_string(shape[k]) + ")");
      }
    }
    return detail::make_view(v, 0, shape, strides);
  });
}

/// Reverses the order along every axis (np.flip(x)): negative strides, no copy.
template <class X>
auto flip(X&& x) {
  return detail::with_view(std::forward<X>(x), [](const auto& v) {
    index_t offset = 0;
    extents strides = v.strides();
    if (v.size() > 0)
      for (int k = 0; k < v.ndim(); ++k) {
        offset += (v.shape()[k] - 1) * strides[k];
        strides[k] = -strides[k];
      }
    return detail::make_view(v, offset, v.shape(), strides);
  });
}
/// Reverses the order along one axis.
template <class X>
auto flip(X&& x, int axis) {
  return detail::with_view(std::forward<X>(x), [&](const auto& v) {
    const int a = normalize_axis(axis, v.ndim());
    extents strides = v.strides();
    const index_t offset = v.size() > 0 ? (v.shape()[a] - 1) * strides[a] : 0;
    strides[a] = -strides[a];
    return detail::make_view(v, offset, v.shape(), strides);
  });
}

/// The diagonal of the (axis1, axis2) planes, appended as the last axis (np.diagonal); a
/// writable view (NumPy's is read-only).
template <class X>
auto diagonal(X&& x, index_t offset = 0, int axis1 = 0, int axis2 = 1) {
  return detail::with_view(std::forward<X>(x), [&](const auto& v) {
    if (v.ndim() < 2)
      throw shape_error("fusor: diagonal needs an array of rank >= 2, got shape " + to_string(v.shape()));
    const int a = normalize_axis(axis1, v.ndim()), b = normalize_axis(axis2, v.ndim());
    if (a == b)
      throw value_error("fusor: diagonal needs two different axes, got " + std::to_string(axis1) + " and " +
                        std::to_string(axis2));
    const index_t na = v.shape()[a], nb = v.shape()[b];
    index_t len, start = 0;
    if (offset >= 0) {
      len = std::max<index_t>(0, std::min(na, nb - offset));
      if (len > 0) start = offset * v.strides()[b];
    } else {
      len = std::max<index_t>(0, std::min(na + offset, nb));
      if (len > 0) start = -offset * v.strides()[a];
    }
    extents shape, strides;
    for (int k = 0; k < v.ndim(); ++k)
      if (k != a && k != b) {
        shape.push_back(v.shape()[k]);
        strides.push_back(v.strides()[k]);
      }
    shape.push_back(len);
    strides.push_back(v.strides()[a] + v.strides()[b]);
    return detail::make_view(v, start, shape, strides);
  });
}

namespace detail {
template <class T, class B>
array_view<T, B> complex_part(const array_view<std::complex<T>, B>& v, int part) {
  // std::complex<T> is layout-compatible with T[2] ([complex.numbers.general]/4)
  extents strides = v.strides();
  for (auto& s : strides) s *= 2;
  T* base = reinterpret_cast<T*>(v.data());
  return {base ? base + part : nullptr, v.shape(), strides};
}
}  // namespace detail

/// The real parts of a complex array as a writable view (x.real in NumPy). For real arrays and
/// expressions, real(x) is the elementwise function.
template <class T, class B>
array_view<T, B> real(const array<std::complex<T>, B>& a) {
  return detail::complex_part(a.view(), 0);
}
template <class T, class B>
array_view<T, B> real(const array_view<std::complex<T>, B>& v) {
  return detail::complex_part(v, 0);
}
template <class T, class B>
array<T, B> real(array<std::complex<T>, B>&& a) {  // a temporary: the values, not a dangling view
  return detail::complex_part(std::as_const(a).view(), 0).copy();
}
/// The imaginary parts of a complex array as a writable view (x.imag in NumPy).
template <class T, class B>
array_view<T, B> imag(const array<std::complex<T>, B>& a) {
  return detail::complex_part(a.view(), 1);
}
template <class T, class B>
array_view<T, B> imag(const array_view<std::complex<T>, B>& v) {
  return detail::complex_part(v, 1);
}
template <class T, class B>
array<T, B> imag(array<std::complex<T>, B>&& a) {
  return detail::complex_part(std::as_const(a).view(), 1).copy();
}

}  // namespace fusor
