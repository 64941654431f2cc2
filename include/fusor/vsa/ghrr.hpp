#pragma once
// GHRR, Yeung, Zou and Imani's Generalized Holographic Reduced Representations (2024), as HoloVec
// defines it: a vector is D blocks, each an m x m unitary complex matrix (stored row-major, so a
// row of the batch holds D * m * m complex numbers). bind multiplies the blocks pairwise (A_j B_j:
// not commutative for m > 1), the inverse is each block's adjoint (exact), bundle sums and projects
// every block back onto the unitary matrices (its polar factor), similarity is
// Re tr(sum_j A_j B_j^H) / (m D), the cosine of the rows (for unitary blocks |a|^2 = m D). m = 1 is
// FHRR. The diagonality in [0, 1] tunes commutativity: random blocks are Q Lambda with Q pulled
// toward the identity (1: diagonal blocks, which commute; 0: Haar-random Q).
//
// dim() is D, the number of blocks (HoloVec's `dimension`): permutations move whole blocks, which
// keeps them unitary. width() is D * m * m.
#include <cmath>
#include <complex>
#include <string>
#include <string_view>

#include "dense.hpp"
#include "ghrr_kernels.hpp"
#include "../core/ext.hpp"

namespace fusor::vsa {

struct ghrr : detail::projected_complex_sum<ghrr> {
  using value_type = std::complex<float>;
  static constexpr std::string_view name = "GHRR";
  static constexpr bool self_inverse = false;
  static constexpr bool commutative = false;  // for m > 1 (or diagonality 1: then the blocks commute)
  static constexpr bool exact_inverse = true;
  static constexpr metric default_metric = metric::cosine;
  static constexpr double similarity_lo = -1.0, similarity_hi = 1.0;

  index_t blocks = 1, m = 1;
  double diagonality = 0.0;

  ghrr() = default;
  /// D blocks of m x m matrices (1 <= m <= 8), diagonality in [0, 1].
  explicit ghrr(index_t dim, index_t side = 3, double diag = 0.0)
      : blocks(detail::checked_dim(dim, name)), m(checked_side(side)), diagonality(checked_diagonality(diag)) {}

  index_t dim() const { return blocks; }
  index_t side() const { return m; }
  index_t width() const { return blocks * m * m; }
  std::string row_layout() const {
    return std::to_string(blocks) + " blocks of " + std::to_string(m) + " x " + std::to_string(m) + " complex";
  }

  static index_t checked_side(index_t s) {
    if (s < 1 || s > detail::ghrr_max_side)
      throw value_error("fusor::vsa: a GHRR model needs a block side m in [1, " + std::to_string(detail::ghrr_max_side) +
                        "] (its blocks are m x m matrices, worked on in registers), got m = " + std::to_string(s));
    return s;
  }
  static double checked_diagonality(double a) {
    if (!(a >= 0.0 && a <= 1.0))
      throw value_error("fusor::vsa: a GHRR model needs a diagonality in [0, 1] (0: Haar-random blocks, 1: diagonal "
                        "blocks that commute), got " + std::to_string(a));
    return a;
  }

  template <class B>
  array<value_type, B> draw(index_t n, std::uint64_t seed, index_t first) const {
    return detail::generate<B>(detail::ghrr_draw{seed, first, blocks, m, diagonality}, extents{n, width()});
  }
  /// Identity blocks.
  template <class B>
  array<value_type, B> identity(const extents& shape) const {
    const auto col = lazy::coordinates<std::int64_t, B>(shape, -1);
    return array<value_type, B>(cast<value_type>(where((col % (m * m)) % (m + 1) == 0, 1.0f, 0.0f)));
  }
  /// A_j B_j for every block j (broadcast over the leading axes).
  template <class X, class Y>
  auto bind(const X& a, const Y& b) const {
    return product(a, b, false, false);
  }
  /// Each block's adjoint.
  template <class X>
  auto inverse(const X& a, inverse_kind) const {
    const auto ac = fusor::ext::contiguous_of(a);
    using B = backend_of_t<decltype(ac.view())>;
    return detail::generate<B>(detail::block_adjoint{reinterpret_cast<const float*>(ac.data()), m}, ac.view().shape());
  }
  /// C_j B_j^H: recovers a from c = bind(a, b) exactly (up to rounding).
  template <class X, class Y>
  auto unbind(const X& c, const Y& b, inverse_kind) const {
    return product(c, b, false, true);
  }
  /// A_j^H C_j: recovers b from c = bind(a, b) given the left operand a.
  template <class X, class Y>
  auto unbind_left(const X& c, const Y& a) const {
    return product(a, c, true, false);
  }
  template <class X>
  auto negative(const X& a) const {
    return eval(-a);
  }
  /// Whole blocks rolled by `shift` positions (the matrices move, each stays unitary).
  template <class X>
  auto permute(const X& a, index_t shift) const {
    const auto ac = fusor::ext::contiguous_of(a);
    const extents shape = ac.view().shape();
    using B = backend_of_t<decltype(ac.view())>;
    array<value_type, B> r(roll(reshape(ac.view(), as_blocks(shape)), shift, -2));
    return std::move(r).reshape(shape);
  }
  /// Blocks rearranged: output block j is input block order[j].
  template <class X, class I>
  auto permute_by(const X& a, const I& order) const {
    const auto ac = fusor::ext::contiguous_of(a);
    const extents shape = ac.view().shape();
    auto r = take(reshape(ac.view(), as_blocks(shape)), order, -2);
    return std::move(r).reshape(shape);
  }
  /// bind folded left along axis -2: bind(bind(x_0, x_1), x_2) ...
  template <class X>
  auto multibind(const X& x) const {
    return detail::fold_left(*this, x);
  }
  // bundle_counts, bundle (the sum, projected unless normalization::none: HoloVec always projects)
  // and superpose (one complex GEMM, projected) come from projected_complex_sum.

  /// Every block replaced by its unitary polar factor (a singular block by the identity block).
  template <class X>
  auto normalize(const X& x) const {
    const auto xc = fusor::ext::contiguous_of(x);
    using B = backend_of_t<decltype(xc.view())>;
    return detail::generate<B>(detail::block_polar{reinterpret_cast<const float*>(xc.data()), m}, xc.view().shape());
  }
  template <class X, class Y>
  auto similarity(const X& q, const Y& x, metric s) const {
    return detail::dense_similarity(q, x, s, name);
  }

 private:
  /// (..., D * m * m) as (..., D, m * m).
  extents as_blocks(const extents& rows) const {
    extents s;
    for (int k = 0; k + 1 < rows.size(); ++k) s.push_back(rows[k]);
    s.push_back(blocks);
    s.push_back(m * m);
    return s;
  }
  /// op(A_j) op(B_j) blockwise, broadcasting the leading axes: an operand whose rows are one row or
  /// all the output's rows is read in place, any other broadcast is materialised first.
  template <class X, class Y>
  auto product(const X& a, const Y& b, bool adjoint_a, bool adjoint_b) const {
    const auto ac = fusor::ext::contiguous_of(a);
    const auto bc = fusor::ext::contiguous_of(b);
    using B = backend_of_t<decltype(ac.view())>;
    static_assert(std::is_same_v<B, backend_of_t<decltype(bc.view())>>, "fusor::vsa::bind: both operands on one backend");
    const extents sa = ac.view().shape(), sb = bc.view().shape(), out = broadcast_shapes(sa, sb);
    const index_t w = width(), n = out.numel() / (w > 0 ? w : 1), na = sa.numel() / w, nb = sb.numel() / w;
    const auto flat = [&](index_t k) { return k == n || k == 1; };
    if (flat(na) && flat(nb))
      return detail::generate<B>(detail::block_product{reinterpret_cast<const float*>(ac.data()),
                                                       reinterpret_cast<const float*>(bc.data()), m, w,
                                                       na > 0 ? na : 1, nb > 0 ? nb : 1, adjoint_a, adjoint_b},
                                 out);
    const array<value_type, B> ab(broadcast_to(ac.view(), out)), bb(broadcast_to(bc.view(), out));
    return detail::generate<B>(detail::block_product{reinterpret_cast<const float*>(ab.data()),
                                                     reinterpret_cast<const float*>(bb.data()), m, w, n, n, adjoint_a,
                                                     adjoint_b},
                               out);
  }
};

}  // namespace fusor::vsa
