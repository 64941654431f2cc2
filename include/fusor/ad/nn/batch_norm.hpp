#pragma once
// Batch normalisation (PyTorch's torch.nn.functional.batch_norm and nn.BatchNorm1d/2d/3d): in
// training each channel is standardised by the batch's mean and biased variance over the batch
// and spatial axes, and the running statistics move towards the batch's (momentum, the unbiased
// variance, as PyTorch); in evaluation the running statistics are used instead.
//
// The running statistics are arrays the layer owns (made at its first call, in the input's
// element type; float32 for 16-bit inputs, which are normalised in float32). On variables their
// update is a forward step of the recording, so ad::compile's replays move them too; they are not
// variables (no gradient) and not in the parameter map (optimizers never touch them).
#include <any>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>

#include "../../core/array.hpp"
#include "../reductions.hpp"
#include "../views.hpp"
#include "functional.hpp"
#include "layers.hpp"
#include "normalization.hpp"
#include "../../core/ext.hpp"

namespace fusor::ad::nn {

struct batch_norm_options {
  /// Batch statistics (and the running statistics updated) or the running statistics.
  bool training = false;
  /// running = (1 - momentum) running + momentum batch.
  double momentum = 0.1;
  double eps = 1e-5;
};

namespace detail {

/// running_mean, running_var (C,) moved towards the batch's mean and variance (slots of shape
/// (1, C, 1)), the variance made unbiased by n / (n - 1): a forward step, so that replays move
/// them too.
/// running_mean, running_var (C,) moved towards the batch's mean m and biased variance v (C
/// contiguous values each): PyTorch's momentum rule, the variance made unbiased by `unbias`.
template <class T, class B>
void move_running(T* running_mean, T* running_var, const T* m, const T* v, index_t channels, double momentum, double unbias) {
  const extents c{channels}, one{1};
  const leaf<T, B> rm{running_mean, c, one}, rv{running_var, c, one};
  const leaf<T, B> ml{const_cast<T*>(m), c, one}, vl{const_cast<T*>(v), c, one};
  const T keep = T(1 - momentum), take = T(momentum), take_var = T(momentum * unbias);
  fusor::ext::assign_expr(rm, rm * keep + ml * take, false);
  fusor::ext::assign_expr(rv, rv * keep + vl * take_var, false);
}

template <class T, class B>
struct running_update {
  T* running_mean;
  T* running_var;
  std::uint32_t mean_id, var_id;
  index_t channels;
  double momentum, unbias;
};
template <class T, class B>
void update_running(ad::tape& t, const void* p) {
  const auto& n = *static_cast<const running_update<T, B>*>(p);
  move_running<T, B>(n.running_mean, n.running_var, ad::detail::value_leaf<T, B>(t, n.mean_id).data,
                     ad::detail::value_leaf<T, B>(t, n.var_id).data, n.channels, n.momentum, n.unbias);
}

template <class X>
void check_batch_norm_input(const X& x, index_t& channels, index_t& count) {
  const extents s = expr_shape(fusor::ext::to_node(x));
  if (s.size() < 2)
    throw shape_error("fusor: batch_norm expects an input of shape (batch, channels, *spatial), got " + to_string(s));
  channels = s[1];
  count = s[0];
  for (int k = 2; k < s.size(); ++k) count *= s[k];
}

}  // namespace detail

namespace functional {

/// torch.nn.functional.batch_norm: x (N, C, *spatial); running_mean and running_var (C,) arrays
/// of x's element type (float32 for 16-bit x), read in evaluation and updated in training;
/// weight and bias (C,). Training needs more than one value per channel (as PyTorch).
template <expression X, class R, class B, expression W, expression Bi>
auto batch_norm(const X& x, array<R, B>& running_mean, array<R, B>& running_var, const W& weight, const Bi& bias,
                const batch_norm_options& o = {}) {
  using T = value_t<node_t<X>>;
  static_assert(std::is_floating_point_v<T> || fusor::ext::small_float_v<T>,
                "fusor: batch_norm takes float, double, float16 or bfloat16 values");
  static_assert(std::is_same_v<R, std::conditional_t<fusor::ext::small_float_v<T>, float, T>>,
                "fusor: batch_norm's running statistics have the input's element type (float32 for 16-bit inputs)");
  index_t channels = 0, count = 0;
  nn::detail::check_batch_norm_input(x, channels, count);
  const extents s = expr_shape(fusor::ext::to_node(x)), c{channels};
  if (!(running_mean.shape() == c) || !(running_var.shape() == c))
    throw shape_error("fusor: batch_norm's running statistics must have shape (channels,) = (" + std::to_string(channels) +
                      ",), got " + to_string(running_mean.shape()) + " and " + to_string(running_var.shape()));
  nn::detail::check_channel_params("batch_norm", weight, bias, channels);
  if (!(o.eps > 0) || !(o.momentum >= 0 && o.momentum <= 1))
    throw value_error("fusor: batch_norm needs eps > 0 and 0 <= momentum <= 1, got eps " + std::to_string(o.eps) + " and momentum " +
                      std::to_string(o.momentum));
  if (o.training && count <= 1)
    throw value_error("fusor: batch_norm in training needs more than one value per channel, got input shape " + to_string(s));
  if constexpr (fusor::ext::small_float_v<T>) {
    // in float32, rounded once (the affine part too)
    const auto widened = [](const auto& p) {  // a parameter in float32: variables through a cast, arrays copied
      using P = std::remove_cvref_t<decltype(p)>;
      if constexpr (nn::detail::has_vars<P>()) return fusor::cast<float>(p);
      else return array<float, B>(fusor::cast<float>(p));
    };
    return detail::settle(fusor::cast<T>(batch_norm(fusor::cast<float>(x), running_mean, running_var, widened(weight), widened(bias), o)));
  } else {
    const extents flat{s[0], channels, count / std::max<index_t>(s[0], 1)}, pc = nn::detail::per_channel(channels, s.size());
    const extents pc3{1, channels, 1};
    if (!o.training) {
      // the running statistics as constants, read where they lie (a replay reads them again)
      const auto rm = fusor::reshape(running_mean, pc), rv = fusor::reshape(running_var, pc);
      if constexpr (nn::detail::has_vars<X>()) {
        return nn::detail::channel_affine(ad::eval((x - rm) / sqrt(rv + T(o.eps))), weight, bias, channels, s.size());
      } else {
        return nn::detail::channel_affine(array<T, B>((x - rm) / sqrt(rv + T(o.eps))), weight, bias, channels, s.size());
      }
    } else if constexpr (nn::detail::has_vars<X>()) {
      const auto xr = ad::reshape(x, flat);
      const auto m = mean(mean(xr, 2, true), 0, true);  // (1, C, 1)
      const auto centred = xr - m;
      const auto v = mean(mean(square(centred), 2, true), 0, true);
      ad::tape& t = *ad::detail::common_tape("batch_norm", x);
      const nn::detail::running_update<T, B> step{running_mean.data(), running_var.data(), m.id(), v.id(), channels,
                                                  o.momentum, double(count) / double(count - 1)};
      nn::detail::update_running<T, B>(t, &step);
      t.record_forward(&nn::detail::update_running<T, B>, step, v.id());
      auto y = nn::detail::reshaped(centred * (T(1) / sqrt(v + T(o.eps))), s);
      return nn::detail::channel_affine(std::move(y), weight, bias, channels, s.size());
    } else {
      const auto xc = fusor::ext::contiguous_of(x);
      const auto xr = fusor::reshape(xc.view(), flat);
      const array<T, B> m = fusor::mean(fusor::mean(xr, 2, true), 0, true);
      array<T, B> centred(xr - m);
      const array<T, B> v = fusor::mean(fusor::mean(square(centred), 2, true), 0, true);
      nn::detail::move_running<T, B>(running_mean.data(), running_var.data(), m.data(), v.data(), channels, o.momentum,
                                     double(count) / double(count - 1));
      centred *= T(1) / sqrt(v + T(o.eps));
      return nn::detail::channel_affine(std::move(centred).reshape(s), weight, bias, channels, s.size());
    }
  }
}

}  // namespace functional

/// PyTorch's nn.BatchNorm1d/2d/3d (one class: the input's rank decides): a weight (ones) and a
/// bias (zeros) per channel, running statistics (zeros and ones) made at the first call in the
/// input's element type (float32 for 16-bit inputs) and shared by copies of the layer. Training
/// mode by default; a model's eval() switches it to the running statistics.
struct batch_norm {
  index_t channels;  // (not `features`: a model reads that as its input's last axis)
  double eps = 1e-5, momentum = 0.1;
  bool training = true;

  explicit batch_norm(index_t num_features, double epsilon = 1e-5, double m = 0.1)
      : channels(num_features), eps(epsilon), momentum(m), state_(std::make_shared<std::any>()) {
    detail::check_positive("batch_norm", "num_features", channels);
    if (!(eps > 0) || !(momentum >= 0 && momentum <= 1))
      throw value_error("fusor: batch_norm needs eps > 0 and 0 <= momentum <= 1, got eps " + std::to_string(eps) + " and momentum " +
                        std::to_string(momentum));
  }
  std::vector<param_spec> parameters() const {
    return {{"weight", extents{channels}, init::ones(), channels, channels}, {"bias", extents{channels}, init::zeros(), channels, channels}};
  }
  index_t output_features(index_t) const { return any_features; }
  void train(bool on) { training = on; }

  template <class X, class Get>
  auto operator()(const X& x, const Get& get) const {
    using T = value_t<node_t<X>>;
    using R = std::conditional_t<fusor::ext::small_float_v<T>, float, T>;
    auto& st = stats<R, backend_of_t<node_t<X>>>();
    return functional::batch_norm(x, st.mean, st.var, get(0), get(1), batch_norm_options{training, momentum, eps});
  }

  /// The running statistics (C,) for inputs of element type R (float32 for 16-bit inputs) on B; a
  /// value_error before the layer has seen such an input.
  template <class R, class B = default_backend>
  const array<R, B>& running_mean() const {
    return seen<R, B>().mean;
  }
  template <class R, class B = default_backend>
  const array<R, B>& running_var() const {
    return seen<R, B>().var;
  }

 private:
  template <class R, class B>
  struct running {
    array<R, B> mean, var;
  };
  std::shared_ptr<std::any> state_;

  template <class R, class B>
  running<R, B>& stats() const {
    if (auto* r = std::any_cast<std::shared_ptr<running<R, B>>>(state_.get())) return **r;
    if (state_->has_value())
      throw value_error("fusor: a batch_norm layer keeps running statistics of one element type and backend; it was called with another");
    auto r = std::make_shared<running<R, B>>(running<R, B>{fusor::zeros<R, B>(extents{channels}), fusor::ones<R, B>(extents{channels})});
    *state_ = r;
    return *r;
  }
  template <class R, class B>
  running<R, B>& seen() const {
    if (auto* r = std::any_cast<std::shared_ptr<running<R, B>>>(state_.get())) return **r;
    throw value_error("fusor: this batch_norm layer has no running statistics of that element type and backend yet (call it first)");
  }
};

}  // namespace fusor::ad::nn
