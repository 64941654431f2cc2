#pragma once
// Optimizers over parameter trees: SGD (momentum, Nesterov, weight decay), Adam, AdamW, RMSprop
// and Adagrad, each with PyTorch's update formula (torch.optim, its defaults), outside any tape.
//
//   optim::adam<float> opt({.lr = 0.1});
//   opt.step(params, grads);   // params: any parameter tree; grads: the same structure
//
// One step is one fused pass per parameter: a generator (core/expr) reads the parameter, its
// gradient and the optimizer's state at each position, writes the new state there and yields the
// new parameter, which the assignment stores in place. So each array is read once and written
// once, on any backend (one SIMD loop on cpu, one kernel on cuda). The state (momentum buffers,
// moment estimates) is made at the first step, one array per parameter and slot, and every later
// step must pass parameters of the same count and shapes. Coefficients that depend only on the
// step (bias corrections, the scheduled learning rate) are computed once per step in double.
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "../../core/array.hpp"
#include "../../core/create.hpp"
#include "../../core/error.hpp"
#include "leaves.hpp"
#include "schedules.hpp"

namespace fusor::ad::optim {

namespace detail {

FUSOR_HD inline float root(float x) { return ::sqrtf(x); }
FUSOR_HD inline double root(double x) { return ::sqrt(x); }

/// SGD: d = g + wd p; with momentum b = d at the first step, else mu b + (1 - dampening) d, and
/// d = d + mu b (Nesterov) or b; p - lr d.
template <class T>
struct sgd_update {
  using value_type = T;
  const T* p;
  const T* g;
  T* buf;  // the momentum buffer, or none
  T lr, wd, mu, keep;  // keep = 1 - dampening
  bool nesterov, first;
  FUSOR_HD void fill(index_t at, T* out, index_t count) const {
    for (index_t e = 0; e < count; ++e) {
      const index_t i = at + e;
      T d = g[i] + wd * p[i];
      if (buf) {
        const T b = first ? d : mu * buf[i] + keep * d;
        buf[i] = b;
        d = nesterov ? d + mu * b : b;
      }
      out[e] = p[i] - lr * d;
    }
  }
};

/// Adam and AdamW: d = g + wd p (Adam's L2 term), m = b1 m + (1 - b1) d, v = b2 v + (1 - b2) d^2,
/// p decay - step m / (sqrt(v) / sqrt(1 - b2^t) + eps), step = lr / (1 - b1^t), decay = 1 - lr wd'
/// (AdamW's decoupled decay; 1 for Adam).
template <class T>
struct adam_update {
  using value_type = T;
  const T* p;
  const T* g;
  T* m;
  T* v;
  T wd, b1, b2, step, bc2_root, eps, decay;
  FUSOR_HD void fill(index_t at, T* out, index_t count) const {
    for (index_t e = 0; e < count; ++e) {
      const index_t i = at + e;
      const T d = g[i] + wd * p[i];
      const T mi = b1 * m[i] + (T(1) - b1) * d;
      const T vi = b2 * v[i] + (T(1) - b2) * d * d;
      m[i] = mi;
      v[i] = vi;
      out[e] = p[i] * decay - step * mi / (root(vi) / bc2_root + eps);
    }
  }
};

/// RMSprop: d = g + wd p, s = alpha s + (1 - alpha) d^2, a = sqrt(s) + eps; with momentum
/// b = mu b + d / a and p - lr b, else p - lr d / a.
template <class T>
struct rmsprop_update {
  using value_type = T;
  const T* p;
  const T* g;
  T* s;
  T* buf;  // the momentum buffer, or none
  T lr, wd, alpha, eps, mu;
  FUSOR_HD void fill(index_t at, T* out, index_t count) const {
    for (index_t e = 0; e < count; ++e) {
      const index_t i = at + e;
      const T d = g[i] + wd * p[i];
      const T si = alpha * s[i] + (T(1) - alpha) * d * d;
      s[i] = si;
      T u = d / (root(si) + eps);
      if (buf) {
        u = mu * buf[i] + u;
        buf[i] = u;
      }
      out[e] = p[i] - lr * u;
    }
  }
};

/// Adagrad: d = g + wd p, s = s + d^2, p - clr d / (sqrt(s) + eps), clr = lr / (1 + (t - 1) lr_decay).
template <class T>
struct adagrad_update {
  using value_type = T;
  const T* p;
  const T* g;
  T* s;
  T clr, wd, eps;
  FUSOR_HD void fill(index_t at, T* out, index_t count) const {
    for (index_t e = 0; e < count; ++e) {
      const index_t i = at + e;
      const T d = g[i] + wd * p[i];
      const T si = s[i] + d * d;
      s[i] = si;
      out[e] = p[i] - clr * d / (root(si) + eps);
    }
  }
};

}  // namespace detail

/// What every optimizer shares: the step count, the learning-rate schedule, and its state, one
/// array per parameter and slot, made at the first step.
template <class T, class B>
class optimizer_state {
  static_assert(std::is_floating_point_v<T>, "fusor::ad::optim: parameters are float or double arrays");

 public:
  /// The steps taken.
  std::int64_t steps() const { return steps_; }
  /// Read the learning rate from `s` at every step (empty: the options' lr again).
  void set_schedule(schedule s) { schedule_ = std::move(s); }
  /// The optimizer's state, slot by slot (e.g. Adam: first moments, then second moments), each
  /// one array per parameter in the parameters' order; empty before the first step.
  const std::vector<std::vector<array<T, B>>>& state() const { return state_; }
  /// Forget the state and the step count (the next step starts afresh, as a new optimizer).
  void reset() {
    state_.clear();
    steps_ = 0;
  }
  /// The optimizer's name, as PyTorch's class in lower case ("sgd", "adam", "adamw", ...).
  const char* name() const { return name_; }
  /// Continues from a saved state (a checkpoint's, see ad/nn/checkpoint.hpp): the step count and
  /// the state as state() returned it. Throws value_error when the slots do not hold the same
  /// number of arrays of the same shapes; the next step checks them against its parameters and
  /// the optimizer's slot count (which its options decide).
  void load_state(std::int64_t steps, std::vector<std::vector<array<T, B>>> state) {
    if (steps < 0)
      throw value_error(std::string("fusor::ad::optim::") + name_ + "::load_state: a step count of " +
                        std::to_string(steps) + " (expected >= 0)");
    for (std::size_t k = 1; k < state.size(); ++k) {
      bool same = state[k].size() == state[0].size();
      for (std::size_t i = 0; same && i < state[k].size(); ++i) same = state[k][i].shape() == state[0][i].shape();
      if (!same)
        throw value_error(std::string("fusor::ad::optim::") + name_ + "::load_state: slot " + std::to_string(k) +
                          " does not hold arrays of slot 0's count and shapes (expected one array per parameter in "
                          "every slot)");
    }
    if (!state.empty() && state[0].empty()) state.clear();  // no parameters: as before the first step
    state_ = std::move(state);
    steps_ = steps;
  }

 protected:
  const char* name_;
  std::int64_t steps_ = 0;
  schedule schedule_;
  std::vector<detail::leaf_pair<T, B>> pairs_;
  std::vector<std::vector<array<T, B>>> state_;

  explicit optimizer_state(const char* name) : name_(name) {}

  double rate(double lr) const {
    const double r = schedule_ ? schedule_(steps_) : lr;
    detail::check_rate(r, name_);
    return r;
  }

  /// Pairs the trees and checks them against the state, which the first step makes: `slots`
  /// arrays per parameter, filled with `initial`.
  template <class P, class G>
  void gather(P& params, const G& grads, int slots, T initial = T(0)) {
    detail::leaf_pairs<T, B>(params, grads, pairs_);
    if (state_.empty()) {
      state_.resize(std::size_t(slots));
      for (auto& slot : state_)
        for (const auto& lp : pairs_) slot.push_back(full<T, B>(lp.param->shape(), initial));
      return;
    }
    if (state_.size() != std::size_t(slots))
      throw value_error(std::string("fusor::ad::optim::") + name_ + ": its state has " + std::to_string(state_.size()) +
                        " slots, where its options need " + std::to_string(slots) +
                        " (a state loaded from another optimizer or other options? reset() starts afresh)");
    const auto& first = state_[0];
    bool same = first.size() == pairs_.size();
    for (std::size_t i = 0; same && i < pairs_.size(); ++i) same = first[i].shape() == pairs_[i].param->shape();
    if (!same) {
      std::string was, got;
      for (std::size_t i = 0; i < first.size(); ++i) was += (i ? ", " : "") + to_string(first[i].shape());
      for (std::size_t i = 0; i < pairs_.size(); ++i) got += (i ? ", " : "") + to_string(pairs_[i].param->shape());
      throw value_error(std::string("fusor::ad::optim::") + name_ + ": its state was made for " +
                        std::to_string(first.size()) + " parameters of shapes " + was + "; this step got " +
                        std::to_string(pairs_.size()) + " of shapes " + got + " (reset() starts afresh)");
    }
  }

  template <class G>
  static void write(array<T, B>& p, const G& gen) {
    const extents& s = p.shape();
    p = generator_expr<G, B>{gen, s, contiguous_strides(s)};
  }

  static T* data_or_null(std::vector<std::vector<array<T, B>>>& st, int slot, std::size_t i) {
    return st.size() > std::size_t(slot) ? st[std::size_t(slot)][i].data() : nullptr;
  }
};

struct sgd_options {
  double lr = 1e-3;  // torch.optim.SGD's default since PyTorch 2.2
  double momentum = 0.0;
  double dampening = 0.0;
  double weight_decay = 0.0;
  bool nesterov = false;
};

/// Stochastic gradient descent (torch.optim.SGD): weight decay as an L2 term in the gradient,
/// heavy-ball or Nesterov momentum.
template <class T = float, class B = default_backend>
class sgd : public optimizer_state<T, B> {
 public:
  explicit sgd(const sgd_options& o = {}) : optimizer_state<T, B>("sgd"), o_(o) {
    detail::check_rate(o.lr, "sgd");
    if (!(o.momentum >= 0.0) || !(o.weight_decay >= 0.0) || !std::isfinite(o.momentum) || !std::isfinite(o.weight_decay))
      throw value_error("fusor::ad::optim::sgd: expected a momentum and weight_decay >= 0, got " + std::to_string(o.momentum) +
                        " and " + std::to_string(o.weight_decay));
    if (o.nesterov && (o.momentum <= 0.0 || o.dampening != 0.0))
      throw value_error("fusor::ad::optim::sgd: Nesterov momentum needs a momentum > 0 and zero dampening, got momentum " +
                        std::to_string(o.momentum) + " and dampening " + std::to_string(o.dampening));
  }
  const sgd_options& options() const { return o_; }

  template <class P, class G>
  void step(P& params, const G& grads) {
    const double lr = this->rate(o_.lr);
    this->gather(params, grads, o_.momentum > 0.0 ? 1 : 0);
    const bool first = this->steps_ == 0;
    for (std::size_t i = 0; i < this->pairs_.size(); ++i) {
      auto& [p, g] = this->pairs_[i];
      this->write(*p, detail::sgd_update<T>{p->data(), g->data(), this->data_or_null(this->state_, 0, i), T(lr),
                                            T(o_.weight_decay), T(o_.momentum), T(1.0 - o_.dampening), o_.nesterov, first});
    }
    ++this->steps_;
  }

 private:
  sgd_options o_;
};

struct adam_options {
  double lr = 1e-3;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  double weight_decay = 0.0;  ///< Adam: added to the gradient (L2); AdamW: decoupled, default 0.01
};

namespace detail {
inline void check_adam(const adam_options& o, const char* who) {
  check_rate(o.lr, who);
  for (const double b : {o.beta1, o.beta2})
    if (!(b >= 0.0 && b < 1.0))
      throw value_error(std::string("fusor::ad::optim::") + who + ": expected betas in [0, 1), got " + std::to_string(o.beta1) +
                        " and " + std::to_string(o.beta2));
  if (!(o.eps >= 0.0) || !(o.weight_decay >= 0.0) || !std::isfinite(o.eps) || !std::isfinite(o.weight_decay))
    throw value_error(std::string("fusor::ad::optim::") + who + ": expected eps and weight_decay >= 0, got " +
                      std::to_string(o.eps) + " and " + std::to_string(o.weight_decay));
}
}  // namespace detail

/// Adam (torch.optim.Adam): bias-corrected first and second moments; weight decay added to the
/// gradient.
template <class T = float, class B = default_backend>
class adam : public optimizer_state<T, B> {
 public:
  explicit adam(const adam_options& o = {}) : adam(o, "adam", false) {}
  const adam_options& options() const { return o_; }

  template <class P, class G>
  void step(P& params, const G& grads) {
    const double lr = this->rate(o_.lr);
    this->gather(params, grads, 2);
    const double t = double(this->steps_ + 1);
    const double bc1 = 1.0 - std::pow(o_.beta1, t), bc2 = 1.0 - std::pow(o_.beta2, t);
    const T l2 = decoupled_ ? T(0) : T(o_.weight_decay);
    const T decay = decoupled_ ? T(1.0 - lr * o_.weight_decay) : T(1);
    for (std::size_t i = 0; i < this->pairs_.size(); ++i) {
      auto& [p, g] = this->pairs_[i];
      this->write(*p, detail::adam_update<T>{p->data(), g->data(), this->state_[0][i].data(), this->state_[1][i].data(), l2,
                                             T(o_.beta1), T(o_.beta2), T(lr / bc1), T(std::sqrt(bc2)), T(o_.eps), decay});
    }
    ++this->steps_;
  }

 protected:
  adam(const adam_options& o, const char* name, bool decoupled) : optimizer_state<T, B>(name), o_(o), decoupled_(decoupled) {
    detail::check_adam(o, name);
  }

 private:
  adam_options o_;
  bool decoupled_;
};

/// AdamW (torch.optim.AdamW): Adam with decoupled weight decay, p (1 - lr wd) before the update;
/// its default weight_decay is 0.01.
template <class T = float, class B = default_backend>
class adamw : public adam<T, B> {
 public:
  explicit adamw(const adam_options& o = defaults()) : adam<T, B>(o, "adamw", true) {}
  static adam_options defaults() {
    adam_options o;
    o.weight_decay = 0.01;
    return o;
  }
};

struct rmsprop_options {
  double lr = 0.01;
  double alpha = 0.99;
  double eps = 1e-8;
  double weight_decay = 0.0;
  double momentum = 0.0;
};

/// RMSprop (torch.optim.RMSprop, not centred): a running mean of squared gradients scales each
/// step; optional momentum on the scaled step.
template <class T = float, class B = default_backend>
class rmsprop : public optimizer_state<T, B> {
 public:
  explicit rmsprop(const rmsprop_options& o = {}) : optimizer_state<T, B>("rmsprop"), o_(o) {
    detail::check_rate(o.lr, "rmsprop");
    if (!(o.alpha >= 0.0 && o.alpha <= 1.0))
      throw value_error("fusor::ad::optim::rmsprop: expected an alpha in [0, 1], got " + std::to_string(o.alpha));
    if (!(o.eps >= 0.0) || !(o.weight_decay >= 0.0) || !(o.momentum >= 0.0) || !std::isfinite(o.eps) ||
        !std::isfinite(o.weight_decay) || !std::isfinite(o.momentum))
      throw value_error("fusor::ad::optim::rmsprop: expected eps, weight_decay and momentum >= 0, got " + std::to_string(o.eps) +
                        ", " + std::to_string(o.weight_decay) + " and " + std::to_string(o.momentum));
  }
  const rmsprop_options& options() const { return o_; }

  template <class P, class G>
  void step(P& params, const G& grads) {
    const double lr = this->rate(o_.lr);
    this->gather(params, grads, o_.momentum > 0.0 ? 2 : 1);
    for (std::size_t i = 0; i < this->pairs_.size(); ++i) {
      auto& [p, g] = this->pairs_[i];
      this->write(*p, detail::rmsprop_update<T>{p->data(), g->data(), this->state_[0][i].data(),
                                                this->data_or_null(this->state_, 1, i), T(lr), T(o_.weight_decay),
                                                T(o_.alpha), T(o_.eps), T(o_.momentum)});
    }
    ++this->steps_;
  }

 private:
  rmsprop_options o_;
};

struct adagrad_options {
  double lr = 0.01;
  double lr_decay = 0.0;
  double weight_decay = 0.0;
  double initial_accumulator_value = 0.0;
  double eps = 1e-10;
};

/// Adagrad (torch.optim.Adagrad): each coordinate's step scaled by its summed squared gradients.
template <class T = float, class B = default_backend>
class adagrad : public optimizer_state<T, B> {
 public:
  explicit adagrad(const adagrad_options& o = {}) : optimizer_state<T, B>("adagrad"), o_(o) {
    detail::check_rate(o.lr, "adagrad");
    if (!(o.lr_decay >= 0.0) || !(o.weight_decay >= 0.0) || !(o.initial_accumulator_value >= 0.0) || !(o.eps >= 0.0))
      throw value_error("fusor::ad::optim::adagrad: expected lr_decay, weight_decay, initial_accumulator_value and eps >= 0, "
                        "got " + std::to_string(o.lr_decay) + ", " + std::to_string(o.weight_decay) + ", " +
                        std::to_string(o.initial_accumulator_value) + " and " + std::to_string(o.eps));
  }
  const adagrad_options& options() const { return o_; }

  template <class P, class G>
  void step(P& params, const G& grads) {
    const double lr = this->rate(o_.lr);
    this->gather(params, grads, 1, T(o_.initial_accumulator_value));
    const double clr = lr / (1.0 + double(this->steps_) * o_.lr_decay);
    for (std::size_t i = 0; i < this->pairs_.size(); ++i) {
      auto& [p, g] = this->pairs_[i];
      this->write(*p, detail::adagrad_update<T>{p->data(), g->data(), this->state_[0][i].data(), T(clr), T(o_.weight_decay),
                                                T(o_.eps)});
    }
    ++this->steps_;
  }

 private:
  adagrad_options o_;
};

}  // namespace fusor::ad::optim
