#pragma once
// A convolution as matrix products (im2col), on any backend: the engine's strided copies and
// BLAS (cuBLAS on cuda), for arrays and for the differentiable convolution (conv.hpp).
//
// The columns of x are a (C, taps, N, *out) buffer: for every kernel position (tap) the input
// values each output reads there, one strided copy per tap (zeros where the tap reads the padding).
// Group g's C / groups channels are then a (C / groups * taps, N * out) matrix, and the output is
// one GEMM per group, W_g (O / groups, C / groups * taps) times it, written (O, N, *out) and
// copied once to (N, O, *out). The adjoints are GEMMs of the same matrices:
//
//   dW_g = G_g cols_g^T  (one GEMM over all N * out points)     dcols_g = W_g^T G_g
//
// with G the output's adjoint copied to (O, N, *out), and dx the columns' adjoint added back tap
// by tap (col2im, the strided copies reversed).
#include "../../core/array.hpp"
#include "../../core/ext.hpp"
#include "../../linalg/blas_fwd.hpp"
#include "../../linalg/ext.hpp"
#include "conv_geometry.hpp"

namespace fusor::ad::nn::detail {

/// The convolution's copies (im2col, col2im, the layout copies) on the calling thread alone where
/// the backend's loops have a thread count (the cpu) and the BLAS keeps threads of its own
/// (OpenBLAS's pthreads build): the copies sit between BLAS calls, and a team of fusor's (OpenMP)
/// threads left spinning after a copy competes with those threads for the same cores. Measured on
/// 2 cores (bench_learn, 2 threads): the forward pass 28.2 ms with the copies threaded, 17.0 ms
/// with them on one thread; the GEMMs alone take 11. With OpenBLAS's OpenMP build (what fusor's
/// CMake prefers) the two share one team and threaded copies are faster (13.0 against 15.3 ms):
/// see docs/linalg.md ("Choosing the BLAS"). Elsewhere the backend's context is left as it is.
template <class B>
context<B> copies_context() {
  context<B> c = current_context<B>();
  if constexpr (requires { c.threads; })
    if (blas_keeps_own_threads<B>()) c.threads = 1;
  return c;
}

/// Where tap k reads, per spatial axis: the outputs [lo, hi) whose input position
/// o stride + k dilation - before lies inside the input, and that position for o = lo.
struct tap_window {
  index_t lo[max_conv_dims] = {}, hi[max_conv_dims] = {}, first[max_conv_dims] = {};
  bool empty = false;  // every output of the tap reads padding
  bool whole = true;   // no output of the tap reads padding
};

inline tap_window window_of(const conv_geometry& g, index_t k) {
  index_t pos[max_conv_dims];
  g.tap_position(k, pos);
  tap_window w;
  for (int i = 0; i < g.dims; ++i) {
    const index_t offset = pos[i] * g.dilation[i] - g.before[i], s = g.stride[i];
    // o s + offset >= 0  <=>  o >= ceil(-offset / s);  o s + offset < in  <=>  o < ceil((in - offset) / s)
    const auto ceil_div = [](index_t a, index_t b) { return a >= 0 ? (a + b - 1) / b : -((-a) / b); };
    w.lo[i] = std::max<index_t>(0, ceil_div(-offset, s));
    w.hi[i] = std::min<index_t>(g.out[i], std::max<index_t>(0, ceil_div(g.in[i] - offset, s)));
    w.first[i] = w.lo[i] * s + offset;
    if (w.lo[i] >= w.hi[i]) w.empty = true;
    if (w.lo[i] != 0 || w.hi[i] != g.out[i]) w.whole = false;
  }
  if (w.empty) w.whole = false;
  return w;
}

/// x's layout as (N, C, *in) strides (an unbatched input's batch axis has stride 0).
template <class T, class B>
extents batched_strides(const conv_geometry& g, const array_view<T, B>& x) {
  if (g.batched) return x.strides();
  extents s{0};
  for (int k = 0; k < x.ndim(); ++k) s.push_back(x.strides()[k]);
  return s;
}

/// Tap k's part of the input, (C, N, *window), and of the columns, the same shape, with the
/// columns' whole slab for the tap, (C, N, *out).
template <class T, class B>
struct tap_views {
  leaf<T, B> input, columns, slab;
};
template <class T, class B>
tap_views<T, B> views_of(const conv_geometry& g, const tap_window& w, index_t k, T* x, const extents& xs, T* cols) {
  const index_t L = g.out_points(), NL = g.batch * L;
  extents out_shape;
  for (int i = 0; i < g.dims; ++i) out_shape.push_back(g.out[i]);
  const extents os = contiguous_strides(out_shape);
  extents shape{g.in_channels, g.batch}, in_strides{xs[1], xs[0]}, col_strides{g.taps * NL, L}, full{g.in_channels, g.batch};
  T* src = x;
  T* dst = cols + k * NL;
  T* slab = dst;
  for (int i = 0; i < g.dims; ++i) {
    shape.push_back(w.hi[i] - w.lo[i]);
    full.push_back(g.out[i]);
    in_strides.push_back(xs[2 + i] * g.stride[i]);
    col_strides.push_back(os[i]);
    src += w.first[i] * xs[2 + i];
    dst += w.lo[i] * os[i];
  }
  return {leaf<T, B>{src, shape, in_strides}, leaf<T, B>{dst, shape, col_strides}, leaf<T, B>{slab, full, col_strides}};
}

/// cols (contiguous, columns_shape()) = the columns of x (g's input, any strides).
template <class T, class B>
void im2col(const conv_geometry& g, const array_view<T, B>& x, T* cols) {
  const context_scope<B> alone(copies_context<B>());
  const extents xs = batched_strides(g, x);
  for (index_t k = 0; k < g.taps; ++k) {
    const tap_window w = window_of(g, k);
    const tap_views<T, B> v = views_of<T, B>(g, w, k, const_cast<T*>(x.data()), xs, cols);
    if (!w.whole) fusor::ext::assign_expr(v.slab, scalar_expr<T>{T{}}, false);
    if (!w.empty) fusor::ext::assign_expr(v.columns, v.input, false);
  }
}

/// dx (contiguous, x's shape, zeroed by the caller) += the columns' adjoint dcols, tap by tap.
template <class T, class B>
void col2im_add(const conv_geometry& g, const T* dcols, T* dx, const extents& x_shape) {
  const context_scope<B> alone(copies_context<B>());
  const array_view<T, B> xv(dx, x_shape, contiguous_strides(x_shape));
  const extents xs = batched_strides(g, xv);
  for (index_t k = 0; k < g.taps; ++k) {
    const tap_window w = window_of(g, k);
    if (w.empty) continue;
    const tap_views<T, B> v = views_of<T, B>(g, w, k, dx, xs, const_cast<T*>(dcols));
    fusor::ext::assign_expr(v.input, v.input + v.columns, false);
  }
}

template <class T, class B>
using strided_t = fusor::ext::linalg::strided<T, B>;

/// y (O, N * out, contiguous) = W_g cols_g for every group; w (O, C / groups, *kernel) contiguous.
template <class T, class B>
void columns_product(const conv_geometry& g, const T* w, const T* cols, T* y) {
  const index_t G = g.groups, og = g.out_channels / G, rows = g.group_rows(), NL = g.batch * g.out_points();
  fusor::ext::linalg::matmul_into(strided_t<T, B>(const_cast<T*>(w), extents{G, og, rows}),
                                  strided_t<T, B>(const_cast<T*>(cols), extents{G, rows, NL}),
                                  strided_t<T, B>(y, extents{G, og, NL}));
}

/// out (N, O, *out) = y (O, N, *out); for an unbatched output (O, *out) the two are one layout.
template <class T, class B>
void channels_first(const conv_geometry& g, const T* y, const leaf<T, B>& out) {
  const context_scope<B> alone(copies_context<B>());
  const index_t L = g.out_points();
  const extents shape{g.batch, g.out_channels, L};
  fusor::ext::assign_expr(leaf<T, B>{out.data, shape, contiguous_strides(shape)},
                          leaf<T, B>{const_cast<T*>(y), shape, extents{L, g.batch * L, 1}}, false);
}

/// gp (O, N, *out) = the output's adjoint g (N, O, *out), contiguous.
template <class T, class B>
void batch_inside(const conv_geometry& g, const leaf<T, B>& grad, T* gp) {
  const context_scope<B> alone(copies_context<B>());
  const index_t L = g.out_points();
  const extents shape{g.out_channels, g.batch, L};
  fusor::ext::assign_expr(leaf<T, B>{gp, shape, contiguous_strides(shape)},
                          leaf<T, B>{grad.data, shape, extents{L, g.out_channels * L, 1}}, false);
}

/// dw (O, C / groups, *kernel) = G_g cols_g^T for every group (gp from batch_inside).
template <class T, class B>
void weight_product(const conv_geometry& g, const T* gp, const T* cols, T* dw) {
  const index_t G = g.groups, og = g.out_channels / G, rows = g.group_rows(), NL = g.batch * g.out_points();
  fusor::ext::linalg::matmul_into(strided_t<T, B>(const_cast<T*>(gp), extents{G, og, NL}),
                                  strided_t<T, B>(const_cast<T*>(cols), extents{G, NL, rows}, extents{rows * NL, 1, NL}),
                                  strided_t<T, B>(dw, extents{G, og, rows}));
}

/// dcols (columns_shape()) = W_g^T G_g for every group.
template <class T, class B>
void columns_adjoint(const conv_geometry& g, const T* w, const T* gp, T* dcols) {
  const index_t G = g.groups, og = g.out_channels / G, rows = g.group_rows(), NL = g.batch * g.out_points();
  fusor::ext::linalg::matmul_into(strided_t<T, B>(const_cast<T*>(w), extents{G, rows, og}, extents{og * rows, 1, rows}),
                                  strided_t<T, B>(const_cast<T*>(gp), extents{G, og, NL}),
                                  strided_t<T, B>(dcols, extents{G, rows, NL}));
}

/// Whether the backend's convolution library computes g's convolution of T (else: im2col).
template <class T, class B>
bool through_conv_library(const conv_geometry& g) {
  if constexpr (conv_library_takes<T, B>()) return conv_library<B>::supports(g.problem());
  else return false;
}

/// The convolution of arrays: x (g's input, any strides), w (contiguous) -> (N, O, *out).
template <class T, class B>
array<T, B> convolve_arrays(const conv_geometry& g, const array_view<T, B>& x, const array_view<T, B>& w) {
  array<T, B> out(g.output_shape());
  if (out.size() == 0) return out;
  if constexpr (conv_library_takes<T, B>())
    if (through_conv_library<T, B>(g)) {
      const auto xc = fusor::ext::contiguous_of(x);
      conv_library<B>::forward(g.problem(), xc.data(), w.data(), out.data());
      return out;
    }
  array<T, B> cols(g.columns_shape());
  im2col(g, x, cols.data());
  array<T, B> y(extents{g.out_channels, g.batch * g.out_points()});
  columns_product<T, B>(g, w.data(), cols.data(), y.data());
  channels_first(g, y.data(), out.as_leaf());
  return out;
}

}  // namespace fusor::ad::nn::detail
