#pragma once
// Record once, replay: ad::compile(f, params, args...) is value_and_grad of f with respect to its
// first argument (a parameter tree), recorded at once; every later call with the same arrays
// replays the recording instead of calling f: the captured forward steps run again from the
// arrays' current values, then the recorded backward nodes. No tape is built and nothing is
// allocated; the gradients land in arrays this object owns (the tape's adjoint buffers of the
// parameters are those arrays), which the next call overwrites.
//
//   auto step = ad::compile([&](const auto& p, const auto& x, const auto& y) {
//     return nn::cross_entropy(model(p, x), y); }, params, xb, yb);
//   for (...) { xb.view() = next batch; auto [loss, grads] = step(params, xb, yb); opt.step(params, grads); }
//
// What "the same arrays" means: a replay reads every array argument (every leaf of every
// argument's tree) where it lay when it was recorded, so each call compares their data addresses,
// shapes and strides, and scalar arguments by value, with the recording's. Any difference records
// again (as jax.jit traces again for a new shape); recordings() counts them. So keep the arrays
// and write new values into them (`x.view() = batch`, an optimizer's in-place step) rather than
// passing new ones. Arrays f captures instead of taking as arguments are read where they lie too:
// keep them alive and write into them, never replace them.
//
// Host values are frozen too: a value f reads to the host (item()) is a tape_error, as is a lazy
// random draw (a replay would draw the same numbers), and state f captures (a model's train/eval
// mode) keeps its recorded value.
//
// What can be replayed: elementwise expressions of variables (eval, assignments), sum and mean
// (whole or along an axis), softmax and log_softmax, take with an index array (and embedding),
// matmul (and the linear layers), nn's convolutions (conv1d/2d/3d), attention (its matmuls,
// views and softmax; not its dropout while training), cross_entropy (class labels
// or probabilities), binary_cross_entropy_with_logits, and ad::param; a model made of embeddings,
// linear and convolution layers, layer_norm, activations and these losses (mse_loss and l1_loss
// are sums and means). Anything
// else (the other reductions, mask_select, joins, FFTs, FFT convolutions, custom_vjp, dropout in
// training mode) registers no forward step, and compiling a function that uses it is a
// tape_error naming it: call value_and_grad instead.
//
// A replay is device work only: every check a step makes (a gather's indices, cross_entropy's
// labels) lands in a flag that is read after it, with the loss, and a raised flag throws the
// error the eager call gives. On cuda the first replay captures the work as one CUDA graph and
// every later one launches it on the current stream (one launch, no per-kernel host work); where
// the work cannot be captured the replay launches the kernels one by one, and why_not_graph()
// says why. Graphs are one device's, made again after a workspace of the backend grew.
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "../core/context.hpp"
#include "../core/array.hpp"
#include "../core/shape_ops.hpp"
#include "params.hpp"
#include "record.hpp"
#include "tape.hpp"
#include "transforms.hpp"
#include "../core/ext.hpp"

namespace fusor::ad {

namespace detail {

/// Calls fn on every leaf of x: arrays and views (also inside tuples, pairs, std::arrays, vectors
/// and maps) and arithmetic scalars. Anything else cannot be compared between calls.
template <class X, class Fn>
void visit_leaves(const X& x, Fn& fn) {
  using Y = std::remove_cvref_t<X>;
  constexpr int k = tree_kind_v<Y>;
  if constexpr (fusor::ext::is_array_v<Y> || fusor::ext::is_view_v<Y> || std::is_arithmetic_v<Y>) {
    fn(x);
  } else if constexpr (k == 2 || k == 3 || k == 4) {
    std::apply([&](const auto&... e) { (visit_leaves(e, fn), ...); }, x);
  } else if constexpr (k == 5) {
    for (const auto& e : x) visit_leaves(e, fn);
  } else if constexpr (k == 6 || k == 7) {
    for (const auto& [key, e] : x) visit_leaves(e, fn);
  } else {
    static_assert(fusor::ext::dependent_false<Y>, "fusor: ad::compile's arguments are arrays, views, arithmetic scalars, or tuples/pairs/"
                          "std::arrays/vectors/maps of them (a replay must be able to tell whether they changed)");
  }
}

/// Where one array argument lay, or a scalar argument's value, when it was recorded.
struct binding {
  const void* data = nullptr;
  extents shape, strides;
  double scalar = 0;
  bool operator==(const binding&) const = default;
};

template <class X>
binding bind_leaf(const X& x) {
  if constexpr (std::is_arithmetic_v<X>) {
    binding b;
    b.scalar = double(x);
    return b;
  } else {
    const auto l = x.as_leaf();
    return binding{l.data, l.shape, l.strides, 0};
  }
}
}  // namespace detail

/// A function recorded once and replayed (see the file comment): made by ad::compile.
template <class F, class P, class... A>
class compiled {
  using vars_t = decltype(param_tree(std::declval<tape&>(), std::declval<const P&>()));
  using loss_t = decltype(detail::loss_var(std::declval<std::invoke_result_t<F&, const vars_t&, const A&...>>()));
  using grads_t = decltype(gradient_tree(std::declval<const vars_t&>()));

 public:
  using value_type = typename loss_t::value_type;
  using backend_type = typename loss_t::backend_type;

  /// Records f(params, args...) at once (a tape_error when it uses an operation that cannot be
  /// replayed, naming it).
  compiled(F f, const P& params, const A&... args) : f_(std::move(f)) { record(params, args...); }
  compiled(const compiled&) = delete;
  compiled& operator=(const compiled&) = delete;
  compiled(compiled&&) = default;
  compiled& operator=(compiled&&) = default;

  /// (loss, gradients with respect to params): a replay when params and args are the arrays (and
  /// scalars) of the last recording, else a new recording. The gradients are this object's arrays,
  /// in params' structure, valid until the next call, which writes them again; they may be changed
  /// in place meanwhile (clip_grad_norm, a grad_scaler's unscale).
  std::pair<value_type, grads_t&> operator()(const P& params, const A&... args) {
    if (ready_ && same(params, args...)) replay();
    else record(params, args...);
    return {value_, *grads_};
  }
  /// The same on an explicit context (a context<B>, or on(stream) on cuda): the replay (or
  /// recording) runs as if it were the thread's current context.
  template <execution_context E>
  std::pair<value_type, grads_t&> operator()(const E& exec, const P& params, const A&... args) {
    return with_context<backend_type>(exec, [&] { return (*this)(params, args...); });
  }

  /// How many times f was recorded (1, plus one per call whose arrays or scalars differed).
  std::size_t recordings() const { return recordings_; }
  /// How many calls replayed the recording.
  std::size_t replays() const { return replays_; }
  /// The forward steps a replay runs (one per materialised expression or operation).
  std::size_t forward_steps() const { return tape_ ? tape_->forward_steps() : 0; }
  /// The backward nodes a replay runs.
  std::size_t backward_nodes() const { return tape_ ? tape_->size() : 0; }
  /// Whether replays launch one recorded unit of work (on cuda a CUDA graph, once a replay has
  /// captured it) rather than each step's kernels.
  bool replays_as_graph() const { return graph_.recorded(); }
  /// Why they do not (empty when they do): the backend has no graphs, or what failed to capture.
  std::string why_not_graph() const { return graph_.why_not(); }

 private:
  void record(const P& params, const A&... args) {
    ready_ = false;
    graph_.reset();  // (it points at the old recording's buffers)
    grads_.reset();
    vars_.reset();
    tape_ = std::make_unique<tape>();  // a fresh tape: nothing of an earlier recording survives
    try {
      capture(params, args...);
    } catch (...) {
      tape_->stop_watching();  // (a watched table slows every engine write until then)
      throw;
    }
    bound_.clear();
    auto bind = [this](const auto& x) { bound_.push_back(detail::bind_leaf(x)); };
    detail::visit_leaves(params, bind);
    (detail::visit_leaves(args, bind), ...);
    ++recordings_;
    ready_ = true;
  }

  void capture(const P& params, const A&... args) {
    tape& t = *tape_;
    t.begin_capture();
    const use_tape active(t);
    vars_.emplace(param_tree(t, params));
    // the parameters' adjoint buffers are the gradient arrays handed out
    grads_.emplace(detail::borrowed_gradient_tree(t, *vars_));
    const loss_t y = detail::loss_var(std::invoke(f_, std::as_const(*vars_), args...));
    std::string where;
    if (const char* what = t.end_capture(where))
      throw tape_error(std::string("fusor: ad::compile cannot replay this function: it uses ") + what +
                       (where.empty() ? "" : " (" + where + ")") +
                        " (expected only elementwise expressions, sum, mean, softmax, log_softmax, take, embedding, "
                       "matmul, linear layers, cross_entropy and binary_cross_entropy_with_logits; use "
                       "ad::value_and_grad for the rest)");
    if (y.size() != 1)
      throw tape_error("fusor: ad::compile needs a function with one number as output, got shape " + to_string(y.shape()));
    loss_ = y.id();
    backward(y);
    detail::finish_gradient_tree(*vars_);  // (replays never write an unwritten gradient either)
    // an array f made and dropped (its buffer kept by the watch table until now) would be gone in a
    // replay, and its values were computed once, from the recorded arguments
    if (const extents* gone = t.released_read())
      throw tape_error("fusor: ad::compile cannot replay this function: it reads an array of shape " + to_string(*gone) +
                       " that it created itself (expected every array it reads to be an argument or to outlive the "
                       "compiled function; compute it with variables, or pass it as an argument)");
    t.stop_watching();  // replays are checked by address instead
    t.reserve_check_flags<backend_type>();  // (so that no replay allocates)
    value_ = y.item();
  }

  bool same(const P& params, const A&... args) const {
    std::size_t k = 0;
    bool equal = true;
    auto compare = [&](const auto& x) {
      equal = equal && k < bound_.size() && bound_[k] == detail::bind_leaf(x);
      ++k;
    };
    detail::visit_leaves(params, compare);
    (detail::visit_leaves(args, compare), ...);
    return equal && k == bound_.size();
  }

  // A replay is device work only (on cuda one CUDA graph, see work_graph): the steps' checks go to
  // flags, and the loss and the flags are read back after it.
  void replay() {
    using T = value_type;
    using B = backend_type;
    tape& t = *tape_;
    t.begin_deferred_checks();
    try {
      graph_.run([this, &t] {
        t.replay_forward();
        t.clear_adjoints();
        const leaf<T, B> seed{t.adjoint_buffer<T, B>(loss_), extents{}, extents{}};
        fusor::ext::assign_expr(seed, scalar_expr<T>{T(1)}, false);
        t.slot_at(loss_).adjoint_written = true;
        t.replay_backward();
      });
    } catch (...) {
      t.abandon_deferred_checks();
      throw;
    }
    ++replays_;
    backend_memory<B>::copy_to_host(&value_, static_cast<const T*>(t.slot_at(loss_).value), 1);
    t.end_deferred_checks<B>();  // (a bad index or label found by the replay throws here)
  }

  F f_;
  work_graph<backend_type> graph_;
  std::unique_ptr<tape> tape_;
  std::optional<vars_t> vars_;
  std::optional<grads_t> grads_;
  std::vector<detail::binding> bound_;
  std::uint32_t loss_ = 0;
  value_type value_{};
  bool ready_ = false;
  std::size_t recordings_ = 0, replays_ = 0;
};

/// Records value_and_grad of f(params, args...) with respect to params once, and replays it on
/// later calls with the same arrays (see the file comment). f takes the parameters' variables and
/// the other arguments, as given, and returns its loss.
template <class F, parameter_tree P, class... A>
compiled<F, P, A...> compile(F f, const P& params, const A&... args) {
  return compiled<F, P, A...>(std::move(f), params, args...);
}

}  // namespace fusor::ad
