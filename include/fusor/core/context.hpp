#pragma once
// fusor::context<B>: the settings backend B's work on one thread runs with, in one value: the
// thread count of the cpu loops, the cuda stream, the FFT planning effort and thread count, a
// memory budget, a memory hook, the deterministic switch. Each backend specialises it with the
// fields it has (backend/cpu/context.hpp, backend/cuda/context.hpp).
//
// Why one value: the settings used to be six thread_locals behind six RAII scopes, none visible
// in a signature. Now every backend reads current_context<B>(), the scopes (cuda_stream_scope,
// fft::planning_scope, fft::threads_scope, match's thread cap) are setters of one of its fields,
// and the heavy entry points (the FFTs, linalg's products and solvers, the template-matching
// scan, a compiled AD step, a VSA search) also take a context explicitly, as MatX's executor or
// a Kokkos execution space: `fft::rfftn(ctx, x)` runs as if ctx were current, and the thread's
// own context is back afterwards. A context belongs to a thread: another thread does not see it
// (work fusor spreads over a team of its own, such as the scan's, is given the caller's).
//
// A context is trivially copyable and trivially destructible, so that copying one is a memcpy
// and the thread's slot is still valid while other thread_local objects (arrays among them) are
// destroyed at thread exit.
#include <cstddef>
#include <string>
#include <type_traits>
#include <utility>

#include "backend.hpp"
#include "error.hpp"

namespace fusor {

/// One allocation or release of a backend's array memory, as a memory hook is told of it.
struct memory_event {
  enum kind_t { allocation, release };
  kind_t kind = allocation;
  std::size_t bytes = 0;         ///< the bytes of the block (rounded as the backend allocates them)
  const void* address = nullptr;
};

/// A callable told of every allocation and release the thread makes while its context names
/// the hook (after the allocation succeeded, before the block is released). A release is told to
/// the context current when the array dies, which need not be the one its allocation was told
/// to (an array returned from a call on an explicit context). It is held by reference, so that a
/// context stays trivially copyable: the callable must outlive every context that names it. It
/// must not throw, must not allocate arrays of the same backend, and must be thread-safe when
/// fusor spreads the work over a team (the scan's threads all tell the caller's hook).
class memory_hook {
 public:
  memory_hook() = default;
  template <class F>
    requires(!std::is_same_v<std::remove_cv_t<F>, memory_hook>)
  explicit memory_hook(F& f)
      : call_([](void* user, const memory_event& e) { (*static_cast<F*>(user))(e); }),
        user_(const_cast<void*>(static_cast<const void*>(&f))) {}
  explicit operator bool() const { return call_ != nullptr; }
  void operator()(const memory_event& e) const noexcept {  // (a hook that throws terminates)
    if (call_) call_(user_, e);
  }
  friend bool operator==(const memory_hook&, const memory_hook&) = default;

 private:
  void (*call_)(void*, const memory_event&) = nullptr;
  void* user_ = nullptr;
};

template <class B>
class context_scope;
template <class B>
struct context;

/// What every context<B> has, the primary template's included: its backend's name, and enter().
template <class B>
struct context_base {
  using backend_type = B;
  /// This context as the thread's current one for as long as the returned scope lives.
  context_scope<B> enter() const;
};

/// The settings every backend's context has (cpu's and cuda's derive from it).
template <class B>
struct context_settings : context_base<B> {
  /// Results that do not depend on timings or on fusor's thread split (what that takes is the
  /// backend's: see its context). Off by default.
  bool deterministic = false;
  /// The most bytes the backend's live arrays (of the whole process) may hold after an
  /// allocation made under this context; beyond it the allocation throws memory_limit_error
  /// before any memory is taken (0: no limit). Checked against the live bytes when each
  /// allocation is made: allocations racing on other threads may each pass.
  std::size_t memory_limit = 0;
  /// Told of every allocation and release of the backend's arrays this thread makes.
  memory_hook on_memory{};
};

/// The settings backend B's work runs with; each backend specialises it (from
/// context_settings<B>) with the fields it reads. This primary template is a backend's without
/// settings.
template <class B>
struct context : context_base<B> {
  static_assert(!std::is_same_v<B, cpu> && !std::is_same_v<B, cuda>,
                "fusor: this backend's context is declared in <fusor/backend/cpu/context.hpp> or "
                "<fusor/backend/cuda/context.hpp> (which its backend headers include): include it first");
};

/// This thread's context for backend B: what its work reads, and what the scopes set. A new
/// thread starts from a default-constructed one (every setting at the process-wide value).
template <class B>
context<B>& current_context() {
  static_assert(std::is_trivially_copyable_v<context<B>> && std::is_trivially_destructible_v<context<B>>,
                "fusor: a backend's context must be trivially copyable and destructible (see core/context.hpp)");
  thread_local context<B> slot{};
  return slot;
}

/// While it lives, `c` is this thread's context for backend B; the previous one comes back at
/// the end (scopes nest).
template <class B>
class context_scope {
 public:
  explicit context_scope(const context<B>& c) : previous_(std::exchange(current_context<B>(), c)) {}
  ~context_scope() { current_context<B>() = previous_; }
  context_scope(const context_scope&) = delete;
  context_scope& operator=(const context_scope&) = delete;

 private:
  context<B> previous_;
};

/// An execution context for the calls that take one explicitly: enter() makes it current for
/// the call (a context<B>, or cuda's on(stream)).
template <class E>
concept execution_context = requires(const E& e) {
  typename E::backend_type;
  e.enter();
};

/// Whether E is an execution context of backend B: the explicit-context entry points reject
/// another backend's (whose settings the call would silently ignore) with a static_assert.
template <class E, class B>
inline constexpr bool context_of_v = std::is_same_v<typename E::backend_type, B>;

/// f() with `exec` as this thread's context for backend B, the thread's own back afterwards:
/// what every explicit-context entry point (`fft::rfftn(ctx, x)`, `matmul(ctx, a, b)`...) does.
template <class B, execution_context E, class F>
decltype(auto) with_context(const E& exec, F&& f) {
  static_assert(context_of_v<E, B>,
                "fusor: this execution context is another backend's than the arrays' (its settings would not apply)");
  const auto scope = exec.enter();
  return std::forward<F>(f)();
}

namespace detail {
/// Throws memory_limit_error when an allocation of `bytes` would take `live` bytes of backend
/// `name`'s arrays above `limit` (a context's memory_limit; 0: none).
inline void check_memory_limit(std::size_t limit, std::size_t bytes, std::size_t live, const char* name) {
  if (limit == 0 || (bytes <= limit && live <= limit - bytes)) return;
  throw memory_limit_error(std::string("fusor: a ") + name + " allocation of " + std::to_string(bytes) +
                               " bytes would bring live " + name + " arrays from " + std::to_string(live) + " to " +
                               std::to_string(live + bytes) + " bytes, above this thread's context<" + name +
                               ">::memory_limit of " + std::to_string(limit) + " bytes",
                           bytes, limit);
}
}  // namespace detail

template <class B>
context_scope<B> context_base<B>::enter() const {
  return context_scope<B>(static_cast<const context<B>&>(*this));
}

}  // namespace fusor
