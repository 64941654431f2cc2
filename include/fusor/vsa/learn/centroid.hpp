#pragma once
// The centroid classifier of hyperdimensional computing (torchhd's Centroid, HoloVec's prototype
// classifier): one vector per class, the sum of its training samples (one scatter-add pass for a
// whole batch); a sample's class is the most similar centroid (one similarity GEMM and an argmax).
// refine() then corrects it as OnlineHD does (Hernandez-Cane et al., 2021): for each misclassified
// sample x of class y predicted as p, centroid y gains lr (1 - s_y) x and centroid p loses
// lr (1 - s_p) x, s the cosines, for a whole batch per pass (two scatter-adds), and fit_online()
// adds a batch with the same similarity weights to every sample (its "adaptive" update).
// Centroids are sums, so they live where the model's vectors add: real or complex elements (MAP,
// FHRR, HRR, VTB, MBAT, GHRR) as they are; the bit models in their real embedding, whose cosine is
// the model's own similarity: BSC's bits as 1 - 2 bit (cosine 1 - 2 h / d), BSDC's and BSDC-CDT's
// as 0 and 1 (cosine |a & b| / sqrt(|a| |b|), BSDC's); MCR, CGR and block codes as the phasors
// e^{2 pi i v / q}, the embedding MCR's bundle votes in. Classes are then the most cosine-similar
// centroid in that space, so the counts keep what a binarised centroid would throw away.
// BSDC-SEG is a value_error.
#include <complex>
#include <cstdint>
#include <string>
#include <type_traits>

#include "../../core/indexing.hpp"
#include "../../core/reduce.hpp"
#include "../bsc.hpp"
#include "../bsdc.hpp"
#include "../fhrr.hpp"
#include "../map.hpp"
#include "../modular.hpp"
#include "../operations.hpp"
#include "../encode/projection.hpp"
#include "../../core/ext.hpp"

namespace fusor::vsa {

namespace detail {
template <class M>
inline constexpr bool is_modular_model = false;
template <class T, modular_kind K>
inline constexpr bool is_modular_model<modular_model<T, K>> = true;

/// Where a model's centroids add (see the file comment): `type` their element, `space` a model of
/// that element whose cosine similarity is the classifier's, `embedded` whether samples are
/// converted first.
template <class M>
struct centroid_space {
  static constexpr bool bits = std::is_same_v<M, bsc> || std::is_same_v<M, bsdc> || std::is_same_v<M, bsdc_cdt>;
  static constexpr bool phasors = is_modular_model<M>;
  static constexpr bool embedded = bits || phasors;
  using type = std::conditional_t<bits, float, std::conditional_t<phasors, std::complex<float>, typename M::value_type>>;
  static constexpr bool adds = std::is_floating_point_v<type> || fusor::is_complex_v<type>;
  static auto space(const M& m) {
    if constexpr (bits) return map_c(m.dim());
    else if constexpr (phasors) return fhrr(m.dim());
    else return m;
  }
};
}  // namespace detail

template <model M, backend B = default_backend>
class centroid_classifier {
  using space_traits = detail::centroid_space<M>;

 public:
  using value_type = typename M::value_type;
  /// The centroids' element: the model's own, or its embedding's (float for BSC and BSDC,
  /// complex<float> for MCR, CGR and block codes).
  using centroid_type = typename space_traits::type;
  /// Whether the model's vectors (or their embedding) add.
  static constexpr bool supported = space_traits::adds;

  /// `classes` empty centroids of model m.
  centroid_classifier(const M& m, index_t classes)
      : m_(m), space_(space_traits::space(m)), c_(zeros<centroid_type, B>(extents{classes, space_.width()})) {
    if constexpr (!supported)
      throw value_error("fusor::vsa::centroid_classifier: " + std::string(M::name) +
                        " vectors cannot be summed into centroids; expected a model with real or complex elements "
                        "(MAP-B, MAP-C, FHRR, HRR, VTB, MBAT, GHRR), bits (BSC, BSDC, BSDC-CDT) or modular values "
                        "(MCR, CGR, block codes)");
    if (classes < 1)
      throw value_error("fusor::vsa::centroid_classifier: needs at least 1 class, got " + std::to_string(classes));
  }

  const M& model() const { return m_; }
  index_t classes() const { return c_.shape()[0]; }
  /// The (classes, width) centroids: sums of the samples, or of their embeddings (then
  /// (classes, d): BSC's 1 - 2 bit, BSDC's bits, the modular models' phasors).
  const array<centroid_type, B>& centroids() const& { return c_; }
  const array<centroid_type, B>& centroids() const&& = delete;

  /// Samples (n, width) in the space their centroids add in: the samples themselves (no copy), or
  /// their embedding (n, d).
  template <class X>
  auto embed(const X& samples) const {
    if constexpr (std::is_same_v<M, bsc>) {
      return array<float, B>(1.0f - 2.0f * cast<float>(m_.unpack(samples)));
    } else if constexpr (space_traits::bits) {
      return array<float, B>(cast<float>(m_.unpack(samples)));
    } else if constexpr (space_traits::phasors) {
      const array<float, B> phase(cast<float>(samples) * float(2.0 * 3.141592653589793 / double(m_.modulus())));
      return array<std::complex<float>, B>(
          detail::generate<B>(detail::phasors_of_phases{phase.data()}, phase.shape()));
    } else {
      return fusor::ext::contiguous_of(samples);
    }
  }

  /// Adds samples (n, width) with labels (n) in [0, classes) to their centroids (one pass).
  template <class X, class Y>
  void fit(const X& samples, const Y& labels) {
    const auto y = checked(samples, labels, "fit");
    if constexpr (supported) {
      const auto x = embed(samples);
      scatter_add(c_, y, x.view(), 0);
    }
  }
  /// Adds samples weighted by how little their centroid already resembles them, 1 - cosine
  /// (OnlineHD's adaptive single pass): a sample the model already knows adds little.
  template <class X, class Y>
  void fit_online(const X& samples, const Y& labels, double lr = 1.0) {
    const auto y = checked(samples, labels, "fit_online");
    const auto x = embed(samples);
    const array<float, B> s = scores_of(x.view());
    const array<float, B> own = take_along_rows(s, y);
    add_weighted(x.view(), y, array<float, B>(float(lr) * (1.0f - own)));
  }
  /// OnlineHD's correction for `epochs` passes over the batch; returns the number of training
  /// samples the last pass found misclassified (0: it stopped early, all correct).
  template <class X, class Y>
  index_t refine(const X& samples, const Y& labels, double lr = 1.0, int epochs = 1) {
    const auto y = checked(samples, labels, "refine");
    const auto x = embed(samples);  // once for every pass
    index_t wrong = 0;
    for (int e = 0; e < epochs; ++e) {
      // a sample's class is its largest dot / |centroid|, the cosine's argmax without the samples'
      // norms (a pass over the whole batch saved); the cosines are then needed for the
      // misclassified samples alone
      const array<float, B> dots = similarity(space_, x.view(), c_, metric::dot);  // (n, classes)
      const array<float, B> cn(sqrt(sum(square(abs(c_)), 1)));
      const array<std::int64_t, B> p = argmax(dots / maximum(cn, 1e-30f), -1);
      const array<bool, B> miss(p != y);
      wrong = index_t(sum(cast<std::int64_t>(miss)));
      if (wrong == 0) break;
      // only the misclassified samples move centroids: gather them first (a pass over them, not
      // over the batch, once the classifier is mostly right)
      const array<std::int64_t, B> rows = std::move(nonzero(miss)[0]);
      const array<std::int64_t, B> ym = take(y, rows), pm = take(p, rows);
      const array<centroid_type, B> xm = take(x.view(), rows, 0);
      const array<float, B> dm = take(dots, rows, 0), xn(sqrt(sum(square(abs(xm)), 1)));
      const array<float, B> own(take_along_rows(dm, ym) / maximum(xn * take(cn, ym), 1e-30f));
      const array<float, B> other(take_along_rows(dm, pm) / maximum(xn * take(cn, pm), 1e-30f));
      add_weighted(xm, ym, array<float, B>(float(lr) * (1.0f - own)));
      add_weighted(xm, pm, array<float, B>(-float(lr) * (1.0f - other)));
    }
    return wrong;
  }

  /// Cosine of each sample to each centroid: (n, classes) (one GEMM).
  template <class X>
  array<float, B> scores(const X& samples) const {
    detail::checked_rows(m_, samples, "centroid_classifier::scores", "samples");
    const auto x = embed(samples);
    return scores_of(x.view());
  }
  /// The most similar centroid of each sample: (n) (ties to the lower class).
  template <class X>
  array<std::int64_t, B> predict(const X& samples) const {
    const array<float, B> s = scores(samples);
    return argmax(s, -1);
  }
  /// The fraction of samples whose prediction is their label.
  template <class X, class Y>
  double accuracy(const X& samples, const Y& labels) const {
    const auto y = checked(samples, labels, "accuracy");
    if (y.size() == 0) return 0.0;
    return double(sum(cast<std::int64_t>(predict(samples) == y))) / double(y.size());
  }

 private:
  /// The labels as int64 after checking their shape against the samples' and their range.
  template <class X, class Y>
  array<std::int64_t, B> checked(const X& samples, const Y& labels, const char* what) const {
    const extents s = detail::checked_rows(m_, samples, what, "samples");
    array<std::int64_t, B> y(cast<std::int64_t>(labels));
    if (s.size() != 2 || y.ndim() != 1 || y.shape()[0] != s[0])
      throw shape_error("fusor::vsa::centroid_classifier::" + std::string(what) + ": expects samples (n, " +
                        std::to_string(m_.width()) + ") and labels (n), got shapes " + to_string(s) + " and " +
                        to_string(y.shape()));
    if (y.size() > 0) {
      const std::int64_t lo = min(y), hi = max(y);
      if (lo < 0 || hi >= classes())
        throw index_error("fusor::vsa::centroid_classifier::" + std::string(what) + ": expects labels in [0, " +
                          std::to_string(classes()) + "), got " + std::to_string(lo < 0 ? lo : hi));
    }
    return y;
  }
  /// s[i, idx[i]] for every row i.
  static array<float, B> take_along_rows(const array<float, B>& s, const array<std::int64_t, B>& idx) {
    const index_t n = s.shape()[0], k = s.shape()[1];
    const array<std::int64_t, B> flat(lazy::arange<std::int64_t, B>(0, n) * k + idx);
    return take(s, flat);
  }
  /// Cosines of embedded samples to the centroids (one GEMM).
  template <class V>
  array<float, B> scores_of(const V& embedded) const {
    return similarity(space_, embedded, c_, metric::cosine);
  }
  /// centroid[idx[i]] += w[i] * rows[i] for every i, rows already embedded (one scatter-add).
  template <class X>
  void add_weighted(const X& rows, const array<std::int64_t, B>& idx, const array<float, B>& w) {
    const auto xc = fusor::ext::contiguous_of(rows);
    const index_t n = w.size();
    if constexpr (supported) {
      using R = std::conditional_t<fusor::is_complex_v<centroid_type>, centroid_type, float>;
      scatter_add(c_, idx, xc.view() * cast<R>(w.reshape(extents{n, 1})), 0);
    }
  }

  M m_;
  decltype(space_traits::space(std::declval<const M&>())) space_;
  array<centroid_type, B> c_;
};

}  // namespace fusor::vsa
