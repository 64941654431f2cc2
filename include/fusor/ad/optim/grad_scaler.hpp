#pragma once
// Dynamic loss scaling for mixed-precision training (torch.amp.GradScaler's rules and defaults).
// float16 gradients below 6e-8 round to zero; multiplying the loss by a large scale S before the
// backward pass lifts them into range, and the float32 master gradients are divided by S before
// the optimizer step. When a step's gradients hold an inf or a NaN (S was too large: a float16
// product overflowed), the step is skipped and S is multiplied by backoff_factor; after
// growth_interval steps in a row without one, S is multiplied by growth_factor.
//
//   optim::grad_scaler<float> scaler;
//   auto step = ad::value_and_grad([&](const auto& p) { return scaler.scale(loss_of(p)); });
//   auto [scaled_loss, grads] = step(params);
//   bool stepped = scaler.step(opt, params, grads);   // unscale, check, step or skip, update S
//
// The scale lives in a 0-d array that scale() reads lazily, so a step replayed by ad::compile
// multiplies by the current scale, not the one it was recorded with.
#include <cmath>
#include <string>
#include <vector>

#include "../../core/array.hpp"
#include "../../core/create.hpp"
#include "../../core/error.hpp"
#include "../../core/reduce.hpp"
#include "leaves.hpp"

namespace fusor::ad::optim {

struct grad_scaler_options {
  double init_scale = 65536.0;  // 2^16
  double growth_factor = 2.0;
  double backoff_factor = 0.5;
  int growth_interval = 2000;  // steps without an inf or NaN before the scale grows
  bool enabled = true;         // false: scale() multiplies by 1 and step() always steps
};

/// Loss scaling for gradients of element type T on backend B (the master parameters' type).
template <class T = float, class B = default_backend>
class grad_scaler {
 public:
  explicit grad_scaler(const grad_scaler_options& o = {}) : o_(o), scale_(o.init_scale), factor_(extents{}) {
    auto bad = [](const std::string& what, const std::string& want, double got) {
      throw value_error("fusor::ad::optim::grad_scaler: expected " + what + " " + want + ", got " + std::to_string(got));
    };
    if (!(o.init_scale > 0.0) || !std::isfinite(o.init_scale)) bad("init_scale", "finite and > 0", o.init_scale);
    if (!(o.growth_factor > 1.0) || !std::isfinite(o.growth_factor)) bad("growth_factor", "finite and > 1", o.growth_factor);
    if (!(o.backoff_factor > 0.0 && o.backoff_factor < 1.0)) bad("backoff_factor", "in (0, 1)", o.backoff_factor);
    if (o.growth_interval < 1) bad("growth_interval", ">= 1", double(o.growth_interval));
    store_scale();
  }

  /// loss times the current scale (an expression: the scale is read when it is evaluated). The
  /// scaler must outlive the step that evaluates it.
  template <expression L>
  auto scale(const L& loss) const {
    return loss * factor_;
  }

  /// PyTorch's unscale_: checks the gradients (a parameter tree of arrays) for an inf or a NaN
  /// and, when there is none, divides them by the scale in place; true when all are finite. Call
  /// it before clipping gradients; step() calls it when it was not called since the last step.
  template <class G>
  bool unscale(G& grads) {
    if (unscaled_)
      throw value_error("fusor::ad::optim::grad_scaler: unscale() was already called for this step "
                        "(expected one call between two step() calls)");
    unscaled_ = true;
    found_inf_ = false;
    if (!o_.enabled) return true;
    std::vector<detail::leaf_pair<T, B>> leaves;  // the tree paired with itself: its arrays, in order
    detail::leaf_pairs<T, B>(grads, grads, leaves);
    // g * 0 is 0 for a finite g and NaN for an inf or a NaN, so the sum is NaN exactly when a
    // gradient is not finite: one SIMD reduction per array (all(isfinite(g)) ran a scalar loop,
    // a tenth of a small model's step)
    for (const auto& l : leaves)
      if (!std::isfinite(double(fusor::sum(*l.grad * T(0))))) {
        found_inf_ = true;
        return false;  // the step is skipped: its gradients need no unscaling
      }
    // the scale is a power of two unless the options say otherwise: the division is then exact
    const T inverse = T(1.0 / scale_);
    for (const auto& l : leaves) *l.param = *l.param * inverse;
    return true;
  }

  /// Unscales (unless unscale() was called), runs opt.step(params, grads) when every gradient is
  /// finite, and updates the scale (PyTorch's scaler.step(opt) and scaler.update()). Returns
  /// whether the optimizer stepped.
  template <class Opt, class P, class G>
  bool step(Opt& opt, P& params, G& grads) {
    if (!unscaled_) unscale(grads);
    const bool finite = !found_inf_;
    if (finite) opt.step(params, grads);
    update();
    return finite;
  }

  /// The current scale (1 when disabled): divide a scaled loss by it for reporting.
  double get_scale() const { return o_.enabled ? scale_ : 1.0; }
  /// Steps since the scale last changed or an inf was found.
  int growth_tracker() const { return tracker_; }
  const grad_scaler_options& options() const { return o_; }

 private:
  void update() {
    unscaled_ = false;
    if (!o_.enabled) return;
    if (found_inf_) {
      scale_ *= o_.backoff_factor;
      tracker_ = 0;
    } else if (++tracker_ == o_.growth_interval) {
      const double grown = scale_ * o_.growth_factor;
      if (std::isfinite(double(T(grown)))) scale_ = grown;  // PyTorch keeps a scale that would overflow
      tracker_ = 0;
    }
    store_scale();
  }
  void store_scale() { factor_.fill(T(get_scale())); }  // in place: a recorded step holds its address

  grad_scaler_options o_;
  double scale_;
  array<T, B> factor_;  // the scale that scale() multiplies by, where a replay reads it
  int tracker_ = 0;
  bool unscaled_ = false, found_inf_ = false;
};

}  // namespace fusor::ad::optim
