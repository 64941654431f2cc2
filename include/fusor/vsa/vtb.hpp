#pragma once
// VTB, Gosmann and Eliasmith's Vector-derived Transformation Binding (2019), as torchhd defines
// it: a vector of d = m * m reals is also an m x m matrix (row-major). bind(a, b) applies the
// matrix sqrt(m) B to each of a's m chunks of m elements, so as matrices bind(a, b) = sqrt(m) A B^T:
// not commutative, and bind(x, identity) == x for the identity I / sqrt(m). The inverse is the
// transpose, an approximate inverse (B^T B is about I / m for random B): unbind(bind(a, b), b) =
// m A B^T B is a plus noise. Vectors are drawn N(0, 1/d) and scaled to unit norm; bundle sums,
// similarity is the cosine. A batch bound with one key is one GEMM of stacked matrices (a batch
// bound with a batch is one GEMM per pair).
//
// HoloVec's "VTB" is another binding (a softmax-weighted mix of cyclic shifts); fusor follows the
// published VTB.
#include <cmath>
#include <string>
#include <string_view>

#include "dense.hpp"
#include "hrr.hpp"
#include "../core/ext.hpp"

namespace fusor::vsa {

struct vtb : detail::unit_rows_model<vtb> {
  using value_type = float;
  static constexpr std::string_view name = "VTB";
  static constexpr bool self_inverse = false;
  static constexpr bool commutative = false;
  static constexpr bool exact_inverse = false;
  static constexpr metric default_metric = metric::cosine;
  static constexpr double similarity_lo = -1.0, similarity_hi = 1.0;

  index_t m = 1;  // the side of the matrices: d = m * m

  vtb() = default;
  explicit vtb(index_t dim) : unit_rows_model(dim), m(checked_side(dim)) {}
  index_t side() const { return m; }

  static index_t checked_side(index_t d) {
    index_t s = index_t(std::sqrt(double(d)));
    while (s * s > d) --s;
    while ((s + 1) * (s + 1) <= d) ++s;
    if (s * s != d)
      throw value_error("fusor::vsa: a VTB model needs a square dimension d = m * m (its vectors are m x m "
                        "matrices), got d = " + std::to_string(d) + "; the nearest are " + std::to_string(s * s) +
                        " and " + std::to_string((s + 1) * (s + 1)));
    return s;
  }

  /// HRR's N(0, 1/d) rows, scaled to unit norm.
  template <class B>
  array<float, B> draw(index_t n, std::uint64_t seed, index_t first) const {
    return detail::unit_normal_rows<B>(d, n, seed, first);
  }
  /// I / sqrt(m) as a vector: the right identity, bind(x, identity) == x.
  template <class B>
  array<float, B> identity(const extents& shape) const {
    const auto col = lazy::coordinates<std::int64_t, B>(shape, -1);
    return array<float, B>(where(col % (m + 1) == 0, float(1.0 / std::sqrt(double(m))), 0.0f));
  }
  /// sqrt(m) A B^T per pair of rows (broadcast over the leading axes), through matmul.
  template <class X, class Y>
  auto bind(const X& a, const Y& b) const {
    return product(a, b, true);
  }
  /// The transpose of each row's matrix.
  template <class X>
  auto inverse(const X& a, inverse_kind) const {
    const auto ac = fusor::ext::contiguous_of(a);
    using B = backend_of_t<decltype(ac.view())>;
    const extents shape = ac.view().shape();
    array<float, B> r(shape);
    reshape(r.view(), matrices(shape)) = swapaxes(reshape(ac.view(), matrices(shape)), -1, -2);
    return r;
  }
  /// bind(c, inverse(b)) = sqrt(m) C B: recovers a from c = bind(a, b), approximately.
  template <class X, class Y>
  auto unbind(const X& c, const Y& b, inverse_kind) const {
    return product(c, b, false);
  }
  /// sqrt(m) C^T A: recovers b from c = bind(a, b) given the left operand a, approximately (A^T A
  /// is about I / m for random rows, so A^T C = sqrt(m) A^T A B^T is about B^T / sqrt(m)).
  template <class X, class Y>
  auto unbind_left(const X& c, const Y& a) const {
    const auto cc = fusor::ext::contiguous_of(c);
    const auto ac = fusor::ext::contiguous_of(a);
    const auto cm = reshape(cc.view(), matrices(cc.view().shape()));
    const auto am = reshape(ac.view(), matrices(ac.view().shape()));
    auto r = matmul(swapaxes(cm, -1, -2), am);
    r = r * float(std::sqrt(double(m)));
    return std::move(r).reshape(rows_of(r.shape()));
  }
  /// bind folded left along axis -2: bind(bind(x_0, x_1), x_2) ...
  template <class X>
  auto multibind(const X& x) const {
    return detail::fold_left(*this, x);
  }
 private:
  /// (..., d) as (..., m, m).
  extents matrices(const extents& rows) const {
    extents s;
    for (int k = 0; k + 1 < rows.size(); ++k) s.push_back(rows[k]);
    s.push_back(m);
    s.push_back(m);
    return s;
  }
  /// sqrt(m) A B^T (transposed) or sqrt(m) A B, the rows read as matrices, broadcast.
  template <class X, class Y>
  auto product(const X& a, const Y& b, bool transposed) const {
    const auto ac = fusor::ext::contiguous_of(a);
    const auto bc = fusor::ext::contiguous_of(b);
    const auto am = reshape(ac.view(), matrices(ac.view().shape()));
    const auto bm = reshape(bc.view(), matrices(bc.view().shape()));
    auto r = transposed ? matmul(am, swapaxes(bm, -1, -2)) : matmul(am, bm);
    r = r * float(std::sqrt(double(m)));
    return std::move(r).reshape(rows_of(r.shape()));
  }
  /// (..., m, m) as (..., d).
  extents rows_of(const extents& mats) const {
    extents out;
    for (int k = 0; k + 2 < mats.size(); ++k) out.push_back(mats[k]);
    out.push_back(d);
    return out;
  }
};

}  // namespace fusor::vsa
