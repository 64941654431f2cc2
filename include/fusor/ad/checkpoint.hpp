#pragma once
// Gradient checkpointing (rematerialisation; JAX's jax.checkpoint, PyTorch's
// torch.utils.checkpoint): ad::checkpoint(f) is f, except that a call on variables keeps only f's
// output on the tape. f runs on a workspace tape of its own, its output is copied out, and the
// workspace is reset (its buffers stay for the next block); the node recorded for the call runs f
// again during the backward pass on that workspace, takes the backward pass through it from the
// output's adjoint, and adds the gradients of f's arguments into the enclosing tape. Both calls
// record alike, so they compute the same values (and a transform f calls inside works in both). Memory for a
// chain of checkpointed blocks is their outputs plus one block's intermediates, at the price of a
// second forward pass of each block; the gradients are the same bits, since the same operations
// run on the same values in the same order.
//
// f sees its arguments as variables of its own tape, so every variable it reads must be an
// argument: a variable of the enclosing recording captured by f would be on another tape (a
// tape_error says so). Arguments may be parameter-tree containers of variables (a std::vector of
// a layer's weights); constant arrays are read where they lie; other values are passed as given.
// The function is copied before each call and the copy runs the backward pass's call, so a
// generator f holds by value draws the same numbers again (dropout masks survive the recompute);
// one it reads by reference does not (keep it in f).
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "../core/array.hpp"
#include "ops.hpp"
#include "arg_trees.hpp"
#include "params.hpp"
#include "record.hpp"
#include "tape.hpp"
#include "transforms.hpp"
#include "../core/ext.hpp"

namespace fusor::ad {

namespace detail {

/// The tape f records on while it runs (reset when the call is done): this thread's workspace
/// tape for the nesting depth of the
/// call (a checkpoint inside a checkpointed function takes the next one), shared by every
/// checkpointed function and reused, so a chain of checkpointed blocks holds one block's
/// intermediates at a time, and a second step of the same shapes allocates nothing.
class workspace_lease {
 public:
  workspace_lease() {
    if (depth_ == tapes_.size()) tapes_.emplace_back();  // a deque never moves its tapes
    tape_ = &tapes_[depth_++];
    tape_->reset();
  }
  ~workspace_lease() {
    tape_->reset();  // the recording and the arrays it kept go; the buffers stay
    --depth_;
  }
  workspace_lease(const workspace_lease&) = delete;
  workspace_lease& operator=(const workspace_lease&) = delete;
  tape& get() { return *tape_; }

 private:
  tape* tape_;
  static inline thread_local std::deque<tape> tapes_;
  static inline thread_local std::size_t depth_ = 0;
};

/// Operand o as a variable of tape `in`: its buffer borrowed where it is contiguous, else copied.
template <class T, class B>
var<T, B> inner_variable(tape& in, const operand<T, B>& o) {
  if (o.value.strides == contiguous_strides(o.value.shape))
    return var<T, B>(&in, in.borrowed_slot<T, B>(o.value.data, o.shape(), o.grad));
  const std::uint32_t id = in.new_slot<T, B>(o.shape(), o.grad);
  fusor::ext::assign_expr(value_leaf<T, B>(in, id), o.value, false);
  return var<T, B>(&in, id);
}

/// The arguments f is called with on tape `in`, in the structure the node keeps.
template <class Stored>
auto inner_arguments(tape& in, const Stored& stored) {
  auto make = [&in](const auto& s) {
    using S = std::remove_cvref_t<decltype(s)>;
    if constexpr (is_kept_variable_v<S>) return inner_variable(in, s.o);
    else if constexpr (is_kept_constant_v<S>) return s.o.view();
    else return s;
  };
  return std::apply(
      [&](const auto&... s) { return std::tuple<decltype(map_tree(s, make))...>{map_tree(s, make)...}; }, stored);
}

template <class F, class Stored>
auto call_inner(tape& in, F& f, const Stored& inner) {
  constexpr const char* hint =
      " [inside ad::checkpoint: the function runs on a tape of its own, so every variable it reads must be one of its "
      "arguments]";
  auto y = [&] {
    try {
      return loss_var(std::apply(f, inner));
    } catch (const tape_error& e) {
      throw tape_error(std::string(e.what()) + hint);
    }
  }();
  if (y.owner() != &in)
    throw tape_error(std::string("fusor: a checkpointed function returned a variable of another tape (one it captured)") + hint);
  return y;
}

template <class F, class Stored, class R, class B>
struct checkpoint_back {
  F f;  // the function as it was before the call (its generators' state)
  Stored stored;

  void operator()(tape& t, const leaf<R, B>& g) const {
    workspace_lease lease;
    tape& in = lease.get();
    const recording_on record;
    const use_tape active(in);
    const auto inner = inner_arguments(in, stored);
    F again = f;  // every backward pass starts from the same state
    const auto y = call_inner(in, again, inner);
    if (!(y.shape() == g.shape))
      throw tape_error("fusor: a checkpointed function returned shape " + to_string(y.shape()) +
                       " when recomputed in the backward pass, but " + to_string(g.shape) +
                       " when called (expected a function that computes the same thing every call)");
    if (!y.requires_grad()) return;
    fusor::ext::assign_expr(adjoint_leaf<R, B>(in, y.id()), g, false);
    in.slot_at(y.id()).adjoint_written = true;
    in.run_backward();
    zip_tree(stored, inner, [&](const auto& s, const auto& v) {
      using S = std::remove_cvref_t<decltype(s)>;
      if constexpr (is_kept_variable_v<S>) {
        using T = typename decltype(s.o)::value_type;
        const auto& slot = in.slot_at(v.id());
        if (s.o.grad && slot.adjoint_written)
          accumulate_into(t, s.o, leaf<T, B>{static_cast<T*>(slot.adjoint), slot.shape, contiguous_strides(slot.shape)},
                          slot.shape);
      }
    });
  }
};

template <class F>
class checkpoint_fn {
 public:
  explicit checkpoint_fn(F f) : f_(std::move(f)) {}

  /// f(args...); on variables, one node that runs f again in the backward pass.
  template <class... A>
  auto operator()(const A&... args) const {
    if constexpr (!(tree_holds_vars<A>() || ...)) {
      return std::invoke(f_, args...);  // arrays: nothing to record
    } else {
      tape* outer = tape_of_trees("calling a checkpointed function", args...);
      // nothing recorded, or no variable after all (empty containers): nothing to save
      if (outer == nullptr || !recording()) return loss_var(std::invoke(f_, args...));
      tape& t = *outer;
      t.not_replayable("ad::checkpoint (its backward pass calls the function again, which a replay cannot)");
      using stored_t = std::tuple<decltype(kept_tree(t, args))...>;
      stored_t stored{kept_tree(t, args)...};
      F before = f_;
      workspace_lease lease;
      tape& in = lease.get();
      auto [inner, y] = [&] {
        const use_tape active(in);
        auto a = inner_arguments(in, stored);
        auto out = call_inner(in, f_, a);
        return std::pair<decltype(a), decltype(out)>(std::move(a), out);
      }();
      using R = typename decltype(y)::value_type;
      using B = typename decltype(y)::backend_type;
      // the output needs a gradient exactly when f's result does on its own tape (whose inputs
      // carry their operands' flags)
      auto [v, grad] = new_output<R, B>(t, y.shape(), y.requires_grad());
      fusor::ext::assign_expr(output_leaf(v), y.as_leaf().value, false);
      if (grad)
        record_op<R, B>(t, v.id(), checkpoint_back<F, stored_t, R, B>{std::move(before), std::move(stored)});
      return v;
    }
  }

  /// The function (a layer wrapper reaches its layer's mode and generator through it).
  F& function() { return f_; }
  const F& function() const { return f_; }

 private:
  mutable F f_;  // a call advances its state (a generator), as a layer's does
};

}  // namespace detail

/// f, recomputed in the backward pass instead of keeping its intermediates on the tape (JAX's
/// jax.checkpoint, PyTorch's torch.utils.checkpoint). Call it as f: with arrays it is f; with
/// variables it returns f's output as one variable of the enclosing tape, whose backward pass
/// runs f again on a tape of its own. Every variable f reads must be an argument (a std::vector
/// or other parameter-tree container of them counts); f returns one variable or expression of
/// variables. Checkpoints nest. A recording with a checkpoint cannot be replayed by ad::compile
/// (a tape_error there). ad::tape_memory() measures the saving.
template <class F>
auto checkpoint(F f) {
  return detail::checkpoint_fn<F>(std::move(f));
}

}  // namespace fusor::ad
