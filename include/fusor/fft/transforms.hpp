#pragma once
// numpy.fft's transforms: fft/ifft/rfft/irfft along one axis, fft2/ifft2/rfft2/irfft2 over two,
// fftn/ifftn/rfftn/irfftn over any set, with NumPy's rules for the output shape `s`, the axes
// and the normalisation. Written once over fft_backend<B>.
//
// What the front end adds to the library call, and only when it must:
// - no copy of an input the library can read where it lies (any non-negative strides; a crop to
//   a smaller `s` is a view). A copy is made to zero-pad to a larger `s`, to convert the element
//   type (integers and real input to fftn), for negative strides, and for c2r transforms, which
//   destroy their input: irfftn copies an lvalue input and scales it in the same pass, and
//   consumes a temporary (an expression, or std::move(spectrum)) with no copy at all;
// - batches (the axes not transformed) are one library call, never a loop;
// - a scaling pass only for the normalisations that need one (norm_mode::backward on an inverse,
//   ortho, forward on a forward transform), and none when the input is copied anyway: the copy
//   applies the factor (the transform is linear).
#include <cmath>
#include <complex>
#include <string>
#include <type_traits>
#include <utility>

#include "../core/array.hpp"
#include "../core/assign.hpp"
#include "../core/join.hpp"
#include "../core/operators.hpp"
#include "../core/shape_ops.hpp"
#include "backend_fwd.hpp"

namespace fusor::fft {

/// numpy.fft's `norm`: which direction is scaled. backward (the default): the inverse by 1/N;
/// ortho: both by 1/sqrt(N); forward: the forward by 1/N. (N: the product of the transform
/// lengths.) Passing norm_mode::forward to an inverse gives an unscaled inverse.
enum class norm_mode { backward, ortho, forward };

namespace detail {

using fusor::detail::as_view;
using fusor::detail::is_array_v;
using fusor::detail::is_view_v;
using fusor::detail::slice_leaf;

/// The real type a transform of V-valued data computes in: float for float, complex<float>,
/// float16 and bfloat16 (NumPy 2 transforms float16 in float32 and returns complex64), double
/// for everything else (integers and bool too, as in NumPy; unlike to_float_t, which sends
/// uint8 and bool to float).
template <class V>
using fft_real_t = real_t<std::conditional_t<is_complex_v<V> || std::is_floating_point_v<V>, V,
                                             std::conditional_t<fusor::detail::small_float_v<V>, float, double>>>;

/// The transform axes, in the order given, with their lengths after NumPy's `s` rules.
struct axes_spec {
  int count = 0;
  int axis[max_rank]{};
  index_t n[max_rank]{};
  bool has(int j) const {
    for (int k = 0; k < count; ++k)
      if (axis[k] == j) return true;
    return false;
  }
  index_t transform_size() const {
    index_t p = 1;
    // (k < max_rank: count never exceeds it, and saying so keeps g++ -O2 from warning that n[8]
    // may be read uninitialised once the loop is inlined into transform_start)
    for (int k = 0; k < count && k < max_rank; ++k) p *= n[k];
    return p;
  }
};

/// NumPy's rules: no axes means the last len(s) axes (all axes without s); s and axes have the
/// same length; an entry -1 in s means the input's length. For c2r the default length of the
/// last axis is 2 (m - 1) for m input points. Real transforms (r2c, c2r) need an axis.
inline axes_spec resolve_axes(const char* fn, const extents& shape, const extents& s, const extents& axes, bool real,
                              bool c2r) {
  const int r = shape.size();
  axes_spec a;
  if (axes.empty()) {
    const int c = s.empty() ? r : s.size();
    if (c > r)
      throw value_error(std::string("fusor: ") + fn + " got s = " + to_string(s) + " with " + std::to_string(c) +
                        " entries for an input of rank " + std::to_string(r) + " (shape " + to_string(shape) +
                        "); expected at most one entry per axis");
    a.count = c;
    for (int k = 0; k < c; ++k) a.axis[k] = r - c + k;
  } else {
    if (!s.empty() && s.size() != axes.size())
      throw value_error(std::string("fusor: ") + fn + " expects s and axes of the same length, got s = " +
                        to_string(s) + " and axes = " + to_string(axes));
    a.count = axes.size();
    for (int k = 0; k < a.count; ++k) {
      a.axis[k] = normalize_axis(int(axes[k]), r);
      for (int j = 0; j < k; ++j)
        if (a.axis[j] == a.axis[k])
          throw value_error(std::string("fusor: ") + fn + " expects each axis once, got axes = " + to_string(axes) +
                            " for an input of shape " + to_string(shape));
    }
  }
  for (int k = 0; k < a.count; ++k) {
    const bool given = !s.empty() && s[k] != -1;
    const index_t m = shape[a.axis[k]];
    index_t len = given ? s[k] : m;
    if (c2r && k == a.count - 1 && !given) len = 2 * (m - 1);
    if (len < 1)
      throw value_error(std::string("fusor: ") + fn + " expects a positive number of points along axis " +
                        std::to_string(a.axis[k]) + ", got " + std::to_string(len) +
                        (given ? " (from s = " + to_string(s) + ")"
                               : " (from the input's shape " + to_string(shape) + ")"));
    a.n[k] = len;
  }
  if (real && a.count == 0)  // a real transform needs an axis to halve
    throw value_error(std::string("fusor: ") + fn + " needs at least one axis to transform, got none (input shape " +
                      to_string(shape) + ")");
  return a;
}

inline double norm_factor(norm_mode m, bool inverse, index_t n) {
  switch (m) {
    case norm_mode::ortho: return 1.0 / std::sqrt(double(n));
    case norm_mode::forward: return inverse ? 1.0 : 1.0 / double(n);
    default: return inverse ? 1.0 / double(n) : 1.0;
  }
}

template <class X>
extents shape_of(const X& x) {
  if constexpr (is_array_v<X> || is_view_v<X>) return x.shape();
  else return expr_shape(fusor::detail::to_node(x));
}

/// The input as the transform reads it: `in` has `len[k]` points along axis[k].
template <class U, class B>
struct prepared {
  array<U, B> keep{};  // the memory, when the input was copied or a temporary was moved in
  leaf<U, B> in{};     // what the transform reads (a leaf: assigning a view would write elements)
  bool owned = false;  // `in` lies in `keep` (the transform may overwrite it)
  bool scaled = false; // the copy already multiplied by the requested scale
  bool whole() const { return owned && in.data == keep.data() && in.shape == keep.shape(); }
};

/// Whether the library can read a view where it lies: non-negative strides, and positive ones
/// on the transform axes (a broadcast along a transform axis is copied).
template <class T, class B>
bool readable(const array_view<T, B>& v, const axes_spec& a) {
  for (int j = 0; j < v.ndim(); ++j) {
    if (v.shape()[j] <= 1) continue;
    if (v.strides()[j] < 0 || (v.strides()[j] == 0 && a.has(j))) return false;
  }
  return true;
}

/// Brings x to `len[k]` points along axis[k] (cropping: a view; padding with zeros: a copy) in
/// element type U. need_owned: the transform will overwrite its input, so x's memory may be used
/// only when x is a temporary. scale (when a copy is made) multiplies in the same pass.
template <class U, class X>
auto prepare(X&& x, const axes_spec& a, const index_t* len, bool need_owned, double scale) {
  using XU = std::remove_cvref_t<X>;
  using V = value_t<XU>;
  using B = backend_of_t<XU>;
  using R = fft_real_t<U>;
  if constexpr (!is_array_v<XU> && !is_view_v<XU>) {
    return prepare<U>(eval(x), a, len, need_owned, scale);  // an expression: evaluated once, then ours
  } else {
    const array_view<V, B> v = fusor::detail::part_view(x);
    extents target = v.shape();
    bool pad = false, crop = false;
    auto corner = v.as_leaf();
    for (int k = 0; k < a.count; ++k) {
      const int j = a.axis[k];
      target[j] = len[k];
      pad = pad || len[k] > v.shape()[j];
      crop = crop || len[k] < v.shape()[j];
      corner = slice_leaf(corner, j, 0, std::min(len[k], v.shape()[j]));
    }
    constexpr bool same_type = std::is_same_v<V, U>;
    constexpr bool temporary = is_array_v<XU> && !std::is_lvalue_reference_v<X>;
    if constexpr (same_type && temporary) {
      if (!pad && readable(v, a)) {  // a temporary: its memory is ours to transform in
        array<U, B> keep = std::move(x);
        auto l = keep.as_leaf();
        for (int k = 0; k < a.count; ++k) l = slice_leaf(l, a.axis[k], 0, len[k]);
        return prepared<U, B>{std::move(keep), l, true, false};
      }
    }
    if constexpr (same_type) {
      if (!pad && !need_owned && readable(v, a)) return prepared<U, B>{array<U, B>(), corner, false, false};
    }
    // a copy: zeros in the padding (each slab once), the cropped input cast and scaled
    array<U, B> keep(target);
    for (int k = 0; k < a.count; ++k) {
      const int j = a.axis[k];
      if (len[k] > v.shape()[j]) as_view(slice_leaf(keep.as_leaf(), j, v.shape()[j], len[k])) = U(0);
    }
    auto dst = keep.as_leaf();
    for (int k = 0; k < a.count; ++k) dst = slice_leaf(dst, a.axis[k], 0, std::min(len[k], v.shape()[a.axis[k]]));
    if (scale != 1.0) as_view(dst) = cast<U>(as_view(corner)) * R(scale);
    else if constexpr (same_type) as_view(dst) = as_view(corner);
    else as_view(dst) = cast<U>(as_view(corner));
    const leaf<U, B> all_of_it = keep.as_leaf();
    return prepared<U, B>{std::move(keep), all_of_it, true, true};
  }
}

/// The guru description of a transform from `in` (strides in its elements) into a contiguous
/// array of shape `out_shape`; `a.n` are the logical lengths. Batch axes of length 1 are left
/// out (they change nothing and would only split the plan cache).
inline fft_geometry make_geometry(const extents& in_strides, const extents& out_shape, const extents& out_strides,
                                  const axes_spec& a) {
  fft_geometry g;
  g.rank = a.count;
  for (int k = 0; k < a.count; ++k) g.dims[k] = {a.n[k], in_strides[a.axis[k]], out_strides[a.axis[k]]};
  for (int j = 0; j < out_shape.size(); ++j)
    if (!a.has(j) && out_shape[j] != 1) g.batch[g.batch_rank++] = {out_shape[j], in_strides[j], out_strides[j]};
  return g;
}

inline extents one_axis(index_t n) { return n == -1 ? extents{} : extents{n}; }

// ---- the transforms, into a caller's buffer or a new array ------------------------------------

/// The caller's output as a leaf, checked: element type U exactly, the transform's shape, strides
/// the library can write (no negative or broadcast ones), and no overlap with the input unless it
/// is the same elements in the same layout (an in-place c2c transform).
template <class U, class O, class In>
auto output_leaf(const char* fn, O& out, const extents& want, const In& in, bool in_place_ok) {
  using OU = std::remove_cvref_t<O>;
  static_assert(is_array_v<OU> || is_view_v<OU>, "fusor: the output of an fft *_into call is an array or a view");
  static_assert(std::is_same_v<value_t<OU>, U>,
                "fusor: the output buffer of this transform must hold exactly its result type (complex<R> for "
                "fftn/ifftn/rfftn, R for irfftn, with R = float for float input and double otherwise)");
  const auto o = fusor::detail::part_view(out).as_leaf();
  if (o.shape != want)
    throw shape_error(std::string("fusor: ") + fn + " into a buffer of shape " + to_string(o.shape) +
                      ": expected the transform's shape " + to_string(want));
  for (int j = 0; j < o.shape.size(); ++j)
    if (o.shape[j] > 1 && o.strides[j] <= 0)
      throw value_error(std::string("fusor: ") + fn + " needs an output with positive strides, got strides " +
                        to_string(o.strides) + " for shape " + to_string(o.shape));
  const auto [o0, o1] = fusor::detail::byte_range(o);
  const auto [i0, i1] = fusor::detail::byte_range(in);
  const bool same = static_cast<const void*>(o.data) == static_cast<const void*>(in.data) && o.strides == in.strides &&
                    o.shape == in.shape;
  if (o0 != nullptr && i0 != nullptr && o0 < i1 && i0 < o1 && !(same && in_place_ok))
    throw value_error(std::string("fusor: ") + fn + " cannot write its output over its input" +
                      (in_place_ok ? " unless both are the same elements in the same layout" : "") +
                      "; use another buffer");
  fusor::detail::note_write(o);
  return o;
}

/// The shape of a transform's output: the input's with the axes at their lengths (the last of
/// them halved for r2c).
inline extents transform_shape(const extents& shape, const axes_spec& a, bool halve_last) {
  extents out = shape;
  for (int k = 0; k < a.count; ++k) out[a.axis[k]] = a.n[k];
  if (halve_last) out[a.axis[a.count - 1]] = a.n[a.count - 1] / 2 + 1;
  return out;
}

/// Runs one planned transform from `in` into `o` (run(g, in, out) calls the backend), then the
/// normalisation the input copy did not already apply: one pass over the output.
template <class In, class Out, class B, class Run>
void run_transform(const leaf<In, B>& in, const leaf<Out, B>& o, const axes_spec& a, double factor, bool scaled,
                   Run run) {
  const fft_geometry g = make_geometry(in.strides, o.shape, o.strides, a);
  if (o.shape.numel() > 0) run(g, in.data, o.data);
  if (!scaled && factor != 1.0 && o.shape.numel() > 0) noalias(as_view(o)) = as_view(o) * fft_real_t<Out>(factor);
}

/// What each transform starts from: the input's backend and precision, its shape, the axes and
/// lengths resolved as NumPy resolves them (half_spectrum: rfftn's output or irfftn's input) and
/// the normalisation factor.
template <class X>
struct transform_start {
  using input = std::remove_cvref_t<X>;
  using B = backend_of_t<input>;
  using V = value_t<input>;
  using R = fft_real_t<V>;
  using C = std::complex<R>;
  static_assert(std::is_floating_point_v<R>, "fusor: Fourier transforms need numeric input");
  extents shape;
  axes_spec a;
  double factor;
  transform_start(const char* fn, const input& x, const extents& s, const extents& axes, norm_mode norm,
                  bool half_spectrum, bool inverse)
      : shape(shape_of(x)),
        a(resolve_axes(fn, shape, s, axes, half_spectrum, half_spectrum && inverse)),
        factor(norm_factor(norm, inverse, a.transform_size())) {}
};

/// fftn/ifftn: into `out` when given, else into a new array (then a copy of the input, when one
/// is made, is transformed where it lies instead of into a second buffer).
template <class X, class O = std::nullptr_t>
auto complex_transform(const char* fn, X&& x, const extents& s, const extents& axes, norm_mode norm, bool inverse,
                       O* out = nullptr) {
  const transform_start<X> t(fn, x, s, axes, norm, false, inverse);
  using B = typename transform_start<X>::B;
  using R = typename transform_start<X>::R;
  using C = typename transform_start<X>::C;
  const extents& shape = t.shape;
  const axes_spec& a = t.a;
  const double factor = t.factor;
  auto run = [&](const fft_geometry& g, const C* i, C* o) { fft_backend<B>::template c2c<R>(g, i, o, inverse ? +1 : -1); };
  if constexpr (std::is_same_v<O, std::nullptr_t>) {
    if (a.count == 0) return array<C, B>(cast<C>(x));  // no axes: NumPy returns the input as complex
    auto p = prepare<C>(std::forward<X>(x), a, a.n, false, factor);  // a copy applies the factor too
    const leaf<C, B> in = p.in;
    array<C, B> result = p.whole() ? std::move(p.keep) : array<C, B>(p.in.shape);
    run_transform(in, result.as_leaf(), a, factor, p.scaled, run);
    return result;
  } else {
    auto p = prepare<C>(std::forward<X>(x), a, a.n, false, factor);
    const leaf<C, B> o = output_leaf<C>(fn, *out, transform_shape(shape, a, false), p.in, true);
    if (a.count == 0) as_view(o) = as_view(p.in);  // no axes: the input as complex
    else run_transform(p.in, o, a, factor, p.scaled, run);
  }
}

/// rfftn: into `out` when given, else into a new array.
template <class X, class O = std::nullptr_t>
auto real_forward(const char* fn, X&& x, const extents& s, const extents& axes, norm_mode norm, O* out = nullptr) {
  static_assert(!is_complex_v<value_t<std::remove_cvref_t<X>>>,
                "fusor: rfft/rfft2/rfftn take real input (NumPy raises TypeError for complex input); "
                "use fft/fftn for complex data");
  const transform_start<X> t(fn, x, s, axes, norm, true, false);
  using B = typename transform_start<X>::B;
  using R = typename transform_start<X>::R;
  using C = typename transform_start<X>::C;
  const extents& shape = t.shape;
  const axes_spec& a = t.a;
  const double factor = t.factor;
  auto run = [](const fft_geometry& g, const R* i, C* o) { fft_backend<B>::template r2c<R>(g, i, o); };
  auto p = prepare<R>(std::forward<X>(x), a, a.n, false, factor);
  if constexpr (std::is_same_v<O, std::nullptr_t>) {
    array<C, B> result(transform_shape(shape, a, true));
    run_transform(p.in, result.as_leaf(), a, factor, p.scaled, run);
    return result;
  } else {
    run_transform(p.in, output_leaf<C>(fn, *out, transform_shape(shape, a, true), p.in, false), a, factor, p.scaled, run);
  }
}

/// irfftn: into `out` when given, else into a new array. keep_input: an lvalue input is copied
/// first (the c2r transform uses its input as scratch); a temporary is always consumed.
template <class X, class O = std::nullptr_t>
auto real_inverse(const char* fn, X&& x, const extents& s, const extents& axes, norm_mode norm, bool keep_input = true,
                  O* out = nullptr) {
  const transform_start<X> t(fn, x, s, axes, norm, true, true);
  using B = typename transform_start<X>::B;
  using R = typename transform_start<X>::R;
  using C = typename transform_start<X>::C;
  const extents& shape = t.shape;
  const axes_spec& a = t.a;
  index_t len[max_rank];
  for (int k = 0; k < a.count; ++k) len[k] = a.n[k];
  len[a.count - 1] = a.n[a.count - 1] / 2 + 1;  // the half spectrum the c2r transform reads
  const double factor = t.factor;
  auto run = [](const fft_geometry& g, C* i, R* o) { fft_backend<B>::template c2r<R>(g, i, o); };
  auto p = prepare<C>(std::forward<X>(x), a, len, keep_input, factor);
  if constexpr (std::is_same_v<O, std::nullptr_t>) {
    array<R, B> result(transform_shape(shape, a, false));
    run_transform(p.in, result.as_leaf(), a, factor, p.scaled, run);
    return result;
  } else {
    run_transform(p.in, output_leaf<R>(fn, *out, transform_shape(shape, a, false), p.in, false), a, factor, p.scaled,
                  run);
  }
}

}  // namespace detail

/// (execution_context, core/context.hpp, is also reachable by its old name fft::execution_context.)
using fusor::execution_context;

/// What an inverse real transform may do with its input: keep it (an lvalue input is copied
/// first, because c2r transforms use their input as scratch) or overwrite it (no copy: for
/// scratch spectra that are rebuilt before every transform).
enum class input_use { preserve, overwrite };

// ---- into a caller's buffer ----------------------------------------------------------------------
// fftn_into, ifftn_into, rfftn_into and irfftn_into write the transform into `out` (an array or
// a view of the exact result type and shape, any positive strides). Nothing is allocated when
// the input is read where it lies (no zero-padding to a larger s, no type conversion, positive
// strides) and, for irfftn_into, when it may be overwritten: the cached plan runs on the two
// buffers, and a normalisation is one pass over `out`. For loops of thousands of transforms
// into the same buffers (template matching). An overlap of out with the input is a value_error
// (except the same elements in the same layout for fftn_into/ifftn_into: in place).

template <class O, class X>
void fftn_into(O&& out, X&& x, const extents& s = {}, const extents& axes = {}, norm_mode norm = norm_mode::backward) {
  detail::complex_transform("fftn_into", std::forward<X>(x), s, axes, norm, false, &out);
}
template <class O, class X>
void ifftn_into(O&& out, X&& x, const extents& s = {}, const extents& axes = {}, norm_mode norm = norm_mode::backward) {
  detail::complex_transform("ifftn_into", std::forward<X>(x), s, axes, norm, true, &out);
}
template <class O, class X>
void rfftn_into(O&& out, X&& x, const extents& s = {}, const extents& axes = {}, norm_mode norm = norm_mode::backward) {
  detail::real_forward("rfftn_into", std::forward<X>(x), s, axes, norm, &out);
}
template <class O, class X>
void irfftn_into(O&& out, X&& x, const extents& s = {}, const extents& axes = {}, norm_mode norm = norm_mode::backward,
                 input_use use = input_use::preserve) {
  detail::real_inverse("irfftn_into", std::forward<X>(x), s, axes, norm, use == input_use::preserve, &out);
}
/// The same on an explicit execution context (fusor::on(stream) on cuda).
template <execution_context E, class O, class X>
void fftn_into(const E& exec, O&& out, X&& x, const extents& s = {}, const extents& axes = {},
               norm_mode norm = norm_mode::backward) {
  return with_context<backend_of_t<std::remove_cvref_t<X>>>(
      exec, [&] { return fftn_into(std::forward<O>(out), std::forward<X>(x), s, axes, norm); });
}
template <execution_context E, class O, class X>
void ifftn_into(const E& exec, O&& out, X&& x, const extents& s = {}, const extents& axes = {},
                norm_mode norm = norm_mode::backward) {
  return with_context<backend_of_t<std::remove_cvref_t<X>>>(
      exec, [&] { return ifftn_into(std::forward<O>(out), std::forward<X>(x), s, axes, norm); });
}
template <execution_context E, class O, class X>
void rfftn_into(const E& exec, O&& out, X&& x, const extents& s = {}, const extents& axes = {},
                norm_mode norm = norm_mode::backward) {
  return with_context<backend_of_t<std::remove_cvref_t<X>>>(
      exec, [&] { return rfftn_into(std::forward<O>(out), std::forward<X>(x), s, axes, norm); });
}
template <execution_context E, class O, class X>
void irfftn_into(const E& exec, O&& out, X&& x, const extents& s = {}, const extents& axes = {},
                 norm_mode norm = norm_mode::backward, input_use use = input_use::preserve) {
  return with_context<backend_of_t<std::remove_cvref_t<X>>>(
      exec, [&] { return irfftn_into(std::forward<O>(out), std::forward<X>(x), s, axes, norm, use); });
}

// ---- n-d -------------------------------------------------------------------------------------

/// np.fft.fftn: the n-d DFT over `axes` (default: all, or the last len(s)); `s` crops or
/// zero-pads the input along them (-1 keeps an axis's length). Real and integer input is
/// converted to complex; float stays float.
template <class X>
auto fftn(X&& x, const extents& s = {}, const extents& axes = {}, norm_mode norm = norm_mode::backward) {
  return detail::complex_transform("fftn", std::forward<X>(x), s, axes, norm, false);
}
/// np.fft.ifftn: the inverse of fftn.
template <class X>
auto ifftn(X&& x, const extents& s = {}, const extents& axes = {}, norm_mode norm = norm_mode::backward) {
  return detail::complex_transform("ifftn", std::forward<X>(x), s, axes, norm, true);
}
/// np.fft.rfftn: the n-d DFT of real input; the last of `axes` keeps n / 2 + 1 points.
template <class X>
auto rfftn(X&& x, const extents& s = {}, const extents& axes = {}, norm_mode norm = norm_mode::backward) {
  return detail::real_forward("rfftn", std::forward<X>(x), s, axes, norm);
}
/// np.fft.irfftn: the inverse of rfftn; the last axis's output length is s's last entry, or
/// 2 (m - 1) for m input points (pass s for odd lengths). The input is not modified unless it is
/// a temporary (an expression, or std::move of an array), which is transformed where it lies.
template <class X>
auto irfftn(X&& x, const extents& s = {}, const extents& axes = {}, norm_mode norm = norm_mode::backward) {
  return detail::real_inverse("irfftn", std::forward<X>(x), s, axes, norm);
}
/// The n-d transforms on an explicit context (a context<B>, or on(stream) on cuda): the call
/// runs as if it were the thread's current context (its stream, FFT planning and threads,
/// memory budget and hook), and the thread's own is back afterwards.
template <execution_context E, class X>
auto fftn(const E& exec, X&& x, const extents& s = {}, const extents& axes = {}, norm_mode norm = norm_mode::backward) {
  return with_context<backend_of_t<std::remove_cvref_t<X>>>(
      exec, [&] { return fftn(std::forward<X>(x), s, axes, norm); });
}
template <execution_context E, class X>
auto ifftn(const E& exec, X&& x, const extents& s = {}, const extents& axes = {}, norm_mode norm = norm_mode::backward) {
  return with_context<backend_of_t<std::remove_cvref_t<X>>>(
      exec, [&] { return ifftn(std::forward<X>(x), s, axes, norm); });
}
template <execution_context E, class X>
auto rfftn(const E& exec, X&& x, const extents& s = {}, const extents& axes = {}, norm_mode norm = norm_mode::backward) {
  return with_context<backend_of_t<std::remove_cvref_t<X>>>(
      exec, [&] { return rfftn(std::forward<X>(x), s, axes, norm); });
}
template <execution_context E, class X>
auto irfftn(const E& exec, X&& x, const extents& s = {}, const extents& axes = {}, norm_mode norm = norm_mode::backward) {
  return with_context<backend_of_t<std::remove_cvref_t<X>>>(
      exec, [&] { return irfftn(std::forward<X>(x), s, axes, norm); });
}

// ---- 2-d -------------------------------------------------------------------------------------

template <class X>
auto fft2(X&& x, const extents& s = {}, const extents& axes = {-2, -1}, norm_mode norm = norm_mode::backward) {
  return detail::complex_transform("fft2", std::forward<X>(x), s, axes, norm, false);
}
template <class X>
auto ifft2(X&& x, const extents& s = {}, const extents& axes = {-2, -1}, norm_mode norm = norm_mode::backward) {
  return detail::complex_transform("ifft2", std::forward<X>(x), s, axes, norm, true);
}
template <class X>
auto rfft2(X&& x, const extents& s = {}, const extents& axes = {-2, -1}, norm_mode norm = norm_mode::backward) {
  return detail::real_forward("rfft2", std::forward<X>(x), s, axes, norm);
}
template <class X>
auto irfft2(X&& x, const extents& s = {}, const extents& axes = {-2, -1}, norm_mode norm = norm_mode::backward) {
  return detail::real_inverse("irfft2", std::forward<X>(x), s, axes, norm);
}

// ---- 1-d -------------------------------------------------------------------------------------

/// np.fft.fft: the DFT along one axis, cropped or zero-padded to n points (-1: the input's).
/// Every other axis is a batch, transformed in the same library call.
template <class X>
auto fft(X&& x, index_t n = -1, int axis = -1, norm_mode norm = norm_mode::backward) {
  return detail::complex_transform("fft", std::forward<X>(x), detail::one_axis(n), extents{axis}, norm, false);
}
template <class X>
auto ifft(X&& x, index_t n = -1, int axis = -1, norm_mode norm = norm_mode::backward) {
  return detail::complex_transform("ifft", std::forward<X>(x), detail::one_axis(n), extents{axis}, norm, true);
}
template <class X>
auto rfft(X&& x, index_t n = -1, int axis = -1, norm_mode norm = norm_mode::backward) {
  return detail::real_forward("rfft", std::forward<X>(x), detail::one_axis(n), extents{axis}, norm);
}
/// np.fft.irfft: n real points (default 2 (m - 1)) from m spectrum points.
template <class X>
auto irfft(X&& x, index_t n = -1, int axis = -1, norm_mode norm = norm_mode::backward) {
  return detail::real_inverse("irfft", std::forward<X>(x), detail::one_axis(n), extents{axis}, norm);
}

}  // namespace fusor::fft
