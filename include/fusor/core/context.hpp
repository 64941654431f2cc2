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
// A context is trivially copyable and trivially destructible, so that the thread's slot costs
// nothing to read and is still valid while other thread_local objects (arrays among them) are
// destroyed at thread exit.
#include <cstddef>
#include <type_traits>
#include <utility>

namespace fusor {

/// One allocation or release of a backend's array memory, as a memory hook is told of it.
struct memory_event {
  enum kind_t { allocation, release };
  kind_t kind = allocation;
  std::size_t bytes = 0;         ///< the bytes of the block (rounded as the backend allocates them)
  const void* address = nullptr;
};

/// A callable told of every allocation and release the thread makes while its context names
/// the hook (after the allocation succeeded, before the block is released). It is held by
/// reference, so that a context stays trivially copyable: the callable must outlive every
/// context that names it. It must not throw, and must not allocate arrays of the same backend.
class memory_hook {
 public:
  memory_hook() = default;
  template <class F>
    requires(!std::is_same_v<std::remove_cv_t<F>, memory_hook>)
  explicit memory_hook(F& f)
      : call_([](void* user, const memory_event& e) { (*static_cast<F*>(user))(e); }),
        user_(const_cast<void*>(static_cast<const void*>(&f))) {}
  explicit operator bool() const { return call_ != nullptr; }
  void operator()(const memory_event& e) const {
    if (call_) call_(user_, e);
  }
  friend bool operator==(const memory_hook&, const memory_hook&) = default;

 private:
  void (*call_)(void*, const memory_event&) = nullptr;
  void* user_ = nullptr;
};

template <class B>
class context_scope;

/// The settings backend B's work runs with; each backend specialises it with the fields it
/// reads. This primary template is a backend's without settings.
template <class B>
struct context {
  using backend_type = B;
  /// This context as the thread's current one for as long as the returned scope lives.
  context_scope<B> enter() const;
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

template <class B>
context_scope<B> context<B>::enter() const {
  return context_scope<B>(*this);
}

}  // namespace fusor
