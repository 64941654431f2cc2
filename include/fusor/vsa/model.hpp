#pragma once
// What a VSA model is: a small trivially copyable value whose type picks the algebra (how vectors
// bind, bundle and compare) and whose members carry the run-time parameters (the dimension d,
// and for later models block sizes or moduli), as HoloVec's `VSA.create('FHRR', dim=...)` does.
// Code written against the `model` concept works for every model and every backend; there is no
// virtual dispatch anywhere.
//
// Vectors are rows: a batch of n hypervectors of a model m is an array<M::value_type, B> of
// shape (n, m.width()) (any number of leading batch axes). width() is d for every model except
// the bit-packed BSC, which stores d bits in ceil(d / 64) 64-bit words, and GHRR, whose d = D
// positions are m x m blocks (width D m^2). A model whose row is not d plain elements says how
// it is laid out in row_layout(), which the shape errors quote.
#include <concepts>
#include <cstdint>
#include <string>
#include <string_view>

#include "../core/array.hpp"
#include "../core/error.hpp"
#include "../core/extents.hpp"

namespace fusor::vsa {

/// The similarity measures. Not every model has every one (an unsupported pair is a value_error
/// naming the model and the measures it has).
///   cosine:  <a, b> / (|a| |b|) in [-1, 1] (complex models: the real part of <a, conj b>; BSC:
///            the cosine of the bipolar vectors, 1 - 2 h / d);
///   dot:     <a, b> (complex: Re <a, conj b>; BSC: the bipolar dot product d - 2 h);
///   hamming: the fraction of equal elements, 1 - h / d in [0, 1] (BSC);
///   overlap: the number of positions set in both (BSC: popcount(a & b)).
enum class metric { cosine, dot, hamming, overlap };

inline std::string_view to_string(metric s) {
  switch (s) {
    case metric::cosine: return "cosine";
    case metric::dot: return "dot";
    case metric::hamming: return "hamming";
    default: return "overlap";
  }
}

/// What bundle does with the sum before returning it.
///   model_default: the model's own rule (model_traits: MAP-B sign, MAP-C clip, FHRR unit phasors,
///                  BSC majority, MAP-I and HRR none);
///   none:          the plain sum (BSC cannot hold a sum: use bundle_counts);
///   project:       back onto the model's domain (sign, clip to [-1, 1], unit phasors, unit L2
///                  norm for HRR, majority for BSC).
enum class normalization { model_default, none, project };

/// How a tie in a sign or majority vote is decided (an even number of bundled vectors).
///   first:  the first bundled vector's element wins (deterministic, and unbiased over random
///           inputs, unlike always +1);
///   random: a Philox draw keyed by (seed, element) decides, the same on every backend.
enum class tie_break { first, random };

struct bundle_options {
  normalization norm = normalization::model_default;
  tie_break ties = tie_break::first;
  std::uint64_t seed = 0;  // for tie_break::random
};

/// HRR's two inverses: the exact one (division of spectra, unstable where a spectrum is near 0)
/// and Plate's approximate involution x[-i mod d] (a permutation: cheap and stable).
enum class inverse_kind { model_default, exact, approximate };

/// A model: the algebra as a type, its parameters as members. Each model documents its traits:
///   value_type     the stored element;
///   name           as the literature writes it ("FHRR", "MAP-B", ...);
///   self_inverse   bind(a, a) is the identity, so unbind is bind;
///   commutative    bind(a, b) == bind(b, a) exactly;
///   exact_inverse  unbind(bind(a, b), b) == a exactly (for vectors drawn by random);
///   default_metric and similarity_lo/hi: the natural similarity and its range.
template <class M>
concept model = std::is_trivially_copyable_v<M> && requires(const M& m) {
  typename M::value_type;
  { M::name } -> std::convertible_to<std::string_view>;
  { M::self_inverse } -> std::convertible_to<bool>;
  { M::commutative } -> std::convertible_to<bool>;
  { M::exact_inverse } -> std::convertible_to<bool>;
  { M::default_metric } -> std::convertible_to<metric>;
  { M::similarity_lo } -> std::convertible_to<double>;
  { M::similarity_hi } -> std::convertible_to<double>;
  { m.dim() } -> std::convertible_to<index_t>;
  { m.width() } -> std::convertible_to<index_t>;
};

namespace detail {
inline index_t checked_dim(index_t d, std::string_view model) {
  if (d < 1)
    throw value_error("fusor::vsa: a " + std::string(model) + " model needs a dimension d >= 1, got d = " +
                      std::to_string(d));
  return d;
}

/// Rows of model m: rank >= 1 with m.width() elements along the last axis.
template <class M>
void check_rows(const M& m, const extents& shape, const char* what, const char* which = "operand") {
  if (shape.size() == 0 || shape[shape.size() - 1] != m.width()) {
    std::string expect = "(..., " + std::to_string(m.width()) + ")";
    if constexpr (requires { m.row_layout(); })
      expect += " (" + m.row_layout() + ")";
    else if (m.width() != m.dim())
      expect += " (" + std::to_string(m.dim()) + " bits in 64-bit words)";
    throw shape_error("fusor::vsa::" + std::string(what) + ": the " + which + " should hold " + std::string(M::name) +
                      " vectors of dimension " + std::to_string(m.dim()) + ", shape " + expect + "; got shape " +
                      to_string(shape));
  }
}
}  // namespace detail

}  // namespace fusor::vsa
