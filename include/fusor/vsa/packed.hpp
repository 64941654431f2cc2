#pragma once
// What the bit-packed models (BSC, the sparse BSDC codes) share: d bits per vector in ceil(d / 64)
// uint64 words, bit j of a vector in bit j % 64 of word j / 64, the bits past d always 0; rotations
// and permutations of the d bits, per-bit counts, and conversions to and from one element per bit.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "dense.hpp"
#include "kernels.hpp"
#include "../core/ext.hpp"

namespace fusor::vsa::detail {

template <class M>
struct packed_bits {
  index_t d = 64;

  packed_bits() = default;
  explicit packed_bits(index_t dim) : d(checked_dim(dim, M::name)) {}
  index_t dim() const { return d; }
  /// The number of bits of a row (d, but for segmented codes, whose dim() counts segments).
  index_t bits() const { return d; }
  index_t width() const { return (d + 63) / 64; }

  /// The valid bits of each word, as a (width) row on backend B.
  template <class B>
  array<std::uint64_t, B> valid_mask() const {
    std::vector<std::uint64_t> m(static_cast<std::size_t>(width()));
    for (index_t w = 0; w < width(); ++w) m[std::size_t(w)] = valid_bits(w, width(), d);
    return array<std::uint64_t, B>(std::span<const std::uint64_t>(m), extents{width()});
  }
  /// Rows with the bits past d cleared (item memories apply it to rows from outside).
  template <class X>
  auto canonical(const X& x) const {
    return eval(x & valid_mask<backend_of_t<X>>());
  }
  /// The identity of XOR: no bit set.
  template <class B>
  array<std::uint64_t, B> identity(const extents& shape) const {
    return zeros<std::uint64_t, B>(shape);
  }
  /// Every bit flipped: the vector least similar to a.
  template <class X>
  auto negative(const X& a) const {
    using B = backend_of_t<X>;
    return eval(a ^ valid_mask<B>());
  }
  /// A rotation of the d bits (not of the words) by `shift` toward higher positions.
  template <class X>
  auto permute(const X& a, index_t shift) const {
    const auto ac = fusor::ext::contiguous_of(a);
    using B = backend_of_t<decltype(ac.view())>;
    const index_t s = ((shift % d) + d) % d;
    return generate<B>(bit_roll{ac.data(), width(), d, s}, ac.view().shape());
  }
  /// Bit j of every output row is bit order[j] of the input row (a permutation of the d bits).
  template <class X, class I>
  auto permute_by(const X& a, const I& order) const {
    const auto ac = fusor::ext::contiguous_of(a);
    using B = backend_of_t<decltype(ac.view())>;
    return generate<B>(bit_gather{ac.data(), order.data(), width(), d}, ac.view().shape());
  }
  /// The rows along axis -2 folded by XOR (or by OR): (..., n, words) -> (..., words).
  template <class X>
  auto fold_rows(const X& x, bool use_or) const {
    const auto xc = fusor::ext::contiguous_of(x);
    using B = backend_of_t<decltype(xc.view())>;
    const auto v = xc.view();
    array<std::uint64_t, B> r(row_at(v, 0));
    for (index_t k = 1; k < v.shape()[v.ndim() - 2]; ++k) r = use_or ? eval(r | row_at(v, k)) : eval(r ^ row_at(v, k));
    return r;
  }
  /// The number of set bits at each of the d positions, summed along axis -2: (..., d) of int32.
  template <class X>
  auto bundle_counts(const X& x) const {
    const auto xc = fusor::ext::contiguous_of(x);
    using B = backend_of_t<decltype(xc.view())>;
    extents out = bundle_shape(xc.view().shape(), M::name, "bundle_counts");
    const index_t n = xc.view().shape()[xc.view().ndim() - 2];
    out[out.size() - 1] = d;
    return generate<B>(bit_counts{xc.data(), n, width(), d}, out);
  }
  /// The bits as (..., d) uint8 zeros and ones.
  template <class X>
  auto unpack(const X& x) const {
    check_rows(static_cast<const M&>(*this), expr_shape(fusor::ext::to_node(x)), "unpack");
    const auto xc = fusor::ext::contiguous_of(x);
    using B = backend_of_t<decltype(xc.view())>;
    extents out = xc.view().shape();
    out[out.size() - 1] = d;
    return generate<B>(bit_unpack{xc.data(), width(), d}, out);
  }
  /// (..., d) elements (non-zero: bit set) packed into (..., width) words.
  template <class X>
  auto pack(const X& bits) const {
    const auto bc = fusor::ext::contiguous_of(bits);
    using B = backend_of_t<decltype(bc.view())>;
    using T = value_t<decltype(bc.view())>;
    extents out = bc.view().shape();
    if (out.size() == 0 || out[out.size() - 1] != d)
      throw shape_error("fusor::vsa::pack: expects (..., " + std::to_string(d) + ") elements for " + std::string(M::name) +
                        " of dimension " + std::to_string(d) + ", got shape " + to_string(out));
    out[out.size() - 1] = width();
    return generate<B>(bit_pack<T>{bc.data(), width(), d}, out);
  }
};

/// The XOR algebra of BSC and BSDC: bind and unbind XOR, every vector is its own inverse, multibind
/// XORs the rows. M derives from packed_bits<M> too (for fold_rows).
template <class M>
struct xor_binding {
  template <class X, class Y>
  auto bind(const X& a, const Y& b) const {
    return eval(a ^ b);
  }
  template <class X>
  auto inverse(const X& a, inverse_kind) const {
    return eval(+a);
  }
  template <class X, class Y>
  auto unbind(const X& c, const Y& a, inverse_kind) const {
    return eval(c ^ a);
  }
  template <class X>
  auto multibind(const X& x) const {
    return static_cast<const M&>(*this).fold_rows(x, false);
  }
};

}  // namespace fusor::vsa::detail
