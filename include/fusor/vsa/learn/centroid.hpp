#pragma once
// The centroid classifier of hyperdimensional computing (torchhd's Centroid, HoloVec's prototype
// classifier): one vector per class, the sum of its training samples (one scatter-add pass for a
// whole batch); a sample's class is the most similar centroid (one similarity GEMM and an argmax).
// refine() then corrects it as OnlineHD does (Hernandez-Cane et al., 2021): for each misclassified
// sample x of class y predicted as p, centroid y gains lr (1 - s_y) x and centroid p loses
// lr (1 - s_p) x, s the cosines, for a whole batch per pass (two scatter-adds), and fit_online()
// adds a batch with the same similarity weights to every sample (its "adaptive" update).
// Centroids are sums, so the models are those whose vectors add: real or complex elements (MAP,
// FHRR, HRR, VTB, MBAT, GHRR); bit-packed and modular models are a value_error.
#include <complex>
#include <cstdint>
#include <string>
#include <type_traits>

#include "../../core/indexing.hpp"
#include "../../core/reduce.hpp"
#include "../operations.hpp"

namespace fusor::vsa {

template <model M, backend B = default_backend>
class centroid_classifier {
 public:
  using value_type = typename M::value_type;
  /// Whether the model's vectors add (real or complex elements).
  static constexpr bool supported = std::is_floating_point_v<value_type> || fusor::is_complex_v<value_type>;

  /// `classes` empty centroids of model m.
  centroid_classifier(const M& m, index_t classes) : m_(m), c_(zeros<value_type, B>(extents{classes, m.width()})) {
    if constexpr (!supported)
      throw value_error("fusor::vsa::centroid_classifier: " + std::string(M::name) +
                        " vectors cannot be summed into centroids; expected a model with real or complex elements "
                        "(MAP-B, MAP-C, FHRR, HRR, VTB, MBAT, GHRR)");
    if (classes < 1)
      throw value_error("fusor::vsa::centroid_classifier: needs at least 1 class, got " + std::to_string(classes));
  }

  const M& model() const { return m_; }
  index_t classes() const { return c_.shape()[0]; }
  /// The (classes, width) centroids.
  const array<value_type, B>& centroids() const& { return c_; }
  const array<value_type, B>& centroids() const&& = delete;

  /// Adds samples (n, width) with labels (n) in [0, classes) to their centroids (one pass).
  template <class X, class Y>
  void fit(const X& samples, const Y& labels) {
    const auto y = checked(samples, labels, "fit");
    scatter_add(c_, y, samples, 0);
  }
  /// Adds samples weighted by how little their centroid already resembles them, 1 - cosine
  /// (OnlineHD's adaptive single pass): a sample the model already knows adds little.
  template <class X, class Y>
  void fit_online(const X& samples, const Y& labels, double lr = 1.0) {
    const auto y = checked(samples, labels, "fit_online");
    const array<float, B> s = scores(samples);
    const array<float, B> own = take_along_rows(s, y);
    add_weighted(samples, y, array<float, B>(float(lr) * (1.0f - own)));
  }
  /// OnlineHD's correction for `epochs` passes over the batch; returns the number of training
  /// samples the last pass found misclassified (0: it stopped early, all correct).
  template <class X, class Y>
  index_t refine(const X& samples, const Y& labels, double lr = 1.0, int epochs = 1) {
    const auto y = checked(samples, labels, "refine");
    index_t wrong = 0;
    for (int e = 0; e < epochs; ++e) {
      const array<float, B> s = scores(samples);
      const array<std::int64_t, B> p = argmax(s, -1);
      const array<bool, B> miss(p != y);
      wrong = index_t(sum(cast<std::int64_t>(miss)));
      if (wrong == 0) break;
      // only the misclassified samples move centroids: gather them first (a pass over them, not
      // over the batch, once the classifier is mostly right)
      const array<std::int64_t, B> rows = std::move(nonzero(miss)[0]);
      const array<std::int64_t, B> ym = take(y, rows), pm = take(p, rows);
      const array<float, B> sm = take(s, rows, 0);
      const array<float, B> own = take_along_rows(sm, ym), other = take_along_rows(sm, pm);
      const auto xc = fusor::detail::contiguous_of(samples);
      const array<value_type, B> xm = take(xc.view(), rows, 0);
      add_weighted(xm, ym, array<float, B>(float(lr) * (1.0f - own)));
      add_weighted(xm, pm, array<float, B>(-float(lr) * (1.0f - other)));
    }
    return wrong;
  }

  /// Cosine of each sample to each centroid: (n, classes) (one GEMM).
  template <class X>
  array<float, B> scores(const X& samples) const {
    return similarity(m_, samples, c_, metric::cosine);
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
  /// centroid[idx[i]] += w[i] * samples[i] for every i (one scatter-add).
  template <class X>
  void add_weighted(const X& samples, const array<std::int64_t, B>& idx, const array<float, B>& w) {
    const auto xc = fusor::detail::contiguous_of(samples);
    const index_t n = w.size();
    if constexpr (supported) {
      using R = std::conditional_t<fusor::is_complex_v<value_type>, value_type, float>;
      scatter_add(c_, idx, xc.view() * cast<R>(w.reshape(extents{n, 1})), 0);
    }
  }

  M m_;
  array<value_type, B> c_;
};

}  // namespace fusor::vsa
