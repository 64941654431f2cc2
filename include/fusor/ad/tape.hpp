#pragma once
// Reverse mode's record: a tape of nodes, one per materialised expression (an assignment into a
// variable, an eval, a reduction), never one per operator or per element. Each node keeps its
// expression tree (plain data: leaves are pointers into the tape's buffers) and a backward
// function that runs the adjoint as fused expressions, one pass per input.
//
// Memory: a tape owns numbered slots, one per variable, each with a value buffer and an adjoint
// buffer. reset() rewinds the slot counter and the node list without freeing: the next recording
// reuses slot k's buffers when they are large enough, so a second iteration with the same shapes
// allocates nothing. Adjoints are allocated when first needed and the first write assigns (no
// zero-fill pass) when it covers the whole buffer, or a box of it (a slice: the rest is zeroed).
// Every byte a tape holds (owned values and adjoints, scratch, constants, kept arrays) is counted,
// per tape (tape::bytes) and for the process with its peak (ad::tape_memory): what
// ad::checkpoint saves is measured, not estimated.
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "../core/backend.hpp"
#include "../core/error.hpp"
#include "../core/ext.hpp"
#include "../core/extents.hpp"
#include "../core/write_watch.hpp"

namespace fusor::ad {

/// Misuse of reverse mode: a variable from a reset or another tape, the gradient of a non-scalar
/// output, a custom adjoint of the wrong shape. The message says what was expected and given.
struct tape_error : error {
  using error::error;
};

class tape;

namespace detail {
// One variable's storage, without its element type (the var<T, B> handle knows it).
struct slot {
  void* value = nullptr;
  void* adjoint = nullptr;
  std::size_t value_capacity = 0;    // bytes
  std::size_t adjoint_capacity = 0;  // bytes
  bool owns_value = true;            // false: a parameter borrowed from the caller's array
  bool owns_adjoint = true;          // false: the caller's gradient array (tape::borrow_adjoint)
  const void* backend = nullptr;     // the backend the buffers live on (a per-backend tag address)
  void (*release)(void*, std::size_t) = nullptr;
  extents shape;
  bool requires_grad = false;
  bool adjoint_written = false;
};

template <class B>
inline constexpr char backend_tag = 0;

// What a variable checks instead of its tape, so that a variable may outlive its tape: a cell
// holding the epoch of the recording its tape is on (unique in the process: a fresh one at each
// construction and reset), 0 once the tape is gone. Cells are pooled and never freed, so reading
// one is always defined; a cell taken again by a later tape gets a new epoch, which no earlier
// variable holds.
struct tape_identity {
  std::atomic<std::uint64_t> epoch{0};
  tape_identity* next_free = nullptr;
};
class tape_identity_pool {
 public:
  tape_identity* acquire() {
    const std::lock_guard<std::mutex> hold(mutex_);
    if (free_ == nullptr) return &cells_.emplace_back();  // a deque never moves its elements
    tape_identity* c = free_;
    free_ = c->next_free;
    return c;
  }
  void release(tape_identity* c) {
    const std::lock_guard<std::mutex> hold(mutex_);
    c->next_free = free_;
    free_ = c;
  }

 private:
  std::mutex mutex_;
  std::deque<tape_identity> cells_;
  tape_identity* free_ = nullptr;
};
// Never destroyed: a variable checked during static destruction still reads a live cell.
inline tape_identity_pool& identity_pool() {
  static tape_identity_pool* pool = new tape_identity_pool;
  return *pool;
}
inline std::uint64_t new_epoch() {
  static std::atomic<std::uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

template <class B>
void release_bytes(void* p, std::size_t bytes) {
  backend_memory<B>::template deallocate<std::byte>(static_cast<std::byte*>(p), index_t(bytes));
}

// A recorded node: what backward needs, as plain data in the tape's byte arena.
struct node {
  void (*backward)(tape&, const void* payload);
  const void* payload;
};
// A forward step of a capture (ad::compile): what computes one slot's value again, in the arena.
struct forward_step {
  void (*run)(tape&, const void* payload);
  const void* payload;
};

// The bytes all tapes hold now and the most they held at once since the last reset_peak: relaxed
// atomics (a count, not a synchronisation), constant-initialised, never destroyed before a tape.
struct tape_meter {
  std::atomic<std::size_t> current{0};
  std::atomic<std::size_t> peak{0};
  void add(std::size_t bytes) {
    const std::size_t now = current.fetch_add(bytes, std::memory_order_relaxed) + bytes;
    std::size_t seen = peak.load(std::memory_order_relaxed);
    while (now > seen && !peak.compare_exchange_weak(seen, now, std::memory_order_relaxed)) {
    }
  }
  void remove(std::size_t bytes) { current.fetch_sub(bytes, std::memory_order_relaxed); }
};
inline tape_meter meter;

inline thread_local int no_grad_depth = 0;
inline thread_local tape* active_top = nullptr;  // the innermost use_tape scope's tape
}  // namespace detail

/// A recording of operations on variables, for reverse mode. Not copyable (variables point
/// into it); reuse one across iterations with reset().
class tape {
 public:
  tape() : identity_(detail::identity_pool().acquire()) {
    identity_->epoch.store(detail::new_epoch(), std::memory_order_relaxed);
  }
  tape(const tape&) = delete;
  tape& operator=(const tape&) = delete;
  ~tape() {
    identity_->epoch.store(0, std::memory_order_relaxed);  // its variables now fail their check
    detail::identity_pool().release(identity_);
    unwatch_all();
    for (auto& s : slots_) free_slot(s);
    for (auto& s : scratch_) release(s);
    for (auto& c : constants_) release(c.buffer);
    release(check_flags_);
    forget_kept();
  }

  /// Forgets the recording: variables made before become invalid (using one is a tape_error);
  /// the buffers stay for the next recording.
  void reset() {
    unwatch_all();
    identity_->epoch.store(detail::new_epoch(), std::memory_order_relaxed);
    used_ = 0;
    nodes_.clear();
    forget_kept();
    arena_used_ = 0;
    arena_block_ = 0;
    forwards_.clear();
    produced_.clear();
    checks_.clear();
    capturing_ = false;
    deferring_checks_ = false;
    unreplayable_ = nullptr;
    for (auto& s : slots_)  // borrowed gradient buffers go back to their owner
      if (!s.owns_adjoint) {
        s.adjoint = nullptr;
        s.adjoint_capacity = 0;
        s.owns_adjoint = true;
      }
  }
  /// The recording's epoch, unique in the process; variables hold the one they were made in.
  std::uint64_t generation() const { return identity_->epoch.load(std::memory_order_relaxed); }
  /// The cell a variable checks (it outlives the tape).
  const detail::tape_identity* identity() const { return identity_; }
  /// Nodes recorded since the last reset (one per materialised expression).
  std::size_t size() const { return nodes_.size(); }
  /// The bytes of memory this tape holds now: its own value and adjoint buffers (kept across
  /// resets for the next recording), scratch and constant buffers, and the arrays it keeps until
  /// reset (an operation's result kept as an array). Not counted: borrowed buffers (parameters, the
  /// gradients a transform hands back: their owners'), the node arena, and other objects kept
  /// (a custom adjoint's residuals). ad::tape_memory() sums every tape.
  std::size_t bytes() const { return held_ + kept_bytes_; }

  // ---- used by var, the recording functions and backward ----------------------------------------
  /// A new slot for `shape` elements of T on backend B (its value buffer reused when possible).
  template <class T, class B>
  std::uint32_t new_slot(const extents& shape, bool requires_grad) {
    if (used_ == slots_.size()) slots_.emplace_back();
    detail::slot& s = slots_[used_];
    const std::size_t bytes = std::size_t(shape.numel()) * sizeof(T);
    if (!s.owns_value || s.backend != &detail::backend_tag<B> || s.value_capacity < bytes) {
      free_slot(s);
      s = detail::slot{};
      s.backend = &detail::backend_tag<B>;
      s.release = &detail::release_bytes<B>;
      if (bytes > 0) s.value = backend_memory<B>::template allocate<std::byte>(index_t(bytes));
      s.value_capacity = bytes;
      hold(bytes);
    }
    s.shape = shape;
    s.requires_grad = requires_grad;
    s.adjoint_written = false;
    return std::uint32_t(used_++);
  }
  /// A slot whose value is the caller's buffer (a parameter, or an array the tape keeps: nothing is
  /// copied).
  template <class T, class B>
  std::uint32_t borrowed_slot(T* data, const extents& shape, bool requires_grad = true) {
    if (used_ == slots_.size()) slots_.emplace_back();
    detail::slot& s = slots_[used_];
    if (s.owns_value && s.value) {
      s.release(s.value, s.value_capacity);
      let_go(s.value_capacity);
      s.value = nullptr;
      s.value_capacity = 0;
    }
    if (s.backend != &detail::backend_tag<B> && s.adjoint) {
      if (s.owns_adjoint) {
        s.release(s.adjoint, s.adjoint_capacity);
        let_go(s.adjoint_capacity);
      }
      s.adjoint = nullptr;
      s.adjoint_capacity = 0;
      s.owns_adjoint = true;
    }
    s.backend = &detail::backend_tag<B>;
    s.release = &detail::release_bytes<B>;
    s.value = data;
    s.owns_value = false;
    s.shape = shape;
    s.requires_grad = requires_grad;
    s.adjoint_written = false;
    return std::uint32_t(used_++);
  }
  detail::slot& slot_at(std::uint32_t id) { return slots_[id]; }
  const detail::slot& slot_at(std::uint32_t id) const { return slots_[id]; }
  /// The adjoint buffer of slot `id`, allocated (not filled) on first use.
  template <class T, class B>
  T* adjoint_buffer(std::uint32_t id) {
    detail::slot& s = slots_[id];
    const std::size_t bytes = std::size_t(s.shape.numel()) * sizeof(T);
    if (s.adjoint_capacity < bytes || (s.adjoint == nullptr && bytes > 0)) {
      if (s.adjoint && s.owns_adjoint) {
        s.release(s.adjoint, s.adjoint_capacity);
        let_go(s.adjoint_capacity);
      }
      s.adjoint = backend_memory<B>::template allocate<std::byte>(index_t(bytes));
      s.adjoint_capacity = bytes;
      s.owns_adjoint = true;
      hold(bytes);
    }
    return static_cast<T*>(s.adjoint);
  }
  /// Makes `data` (at least the slot's bytes, on backend B, owned by the caller, who keeps it
  /// alive as long as the tape) slot id's adjoint buffer: backward passes write the gradient there.
  template <class T, class B>
  void borrow_adjoint(std::uint32_t id, T* data) {
    detail::slot& s = slots_[id];
    if (s.adjoint && s.owns_adjoint) {
      s.release(s.adjoint, s.adjoint_capacity);
      let_go(s.adjoint_capacity);
    }
    s.adjoint = data;
    s.adjoint_capacity = std::size_t(s.shape.numel()) * sizeof(T);
    s.owns_adjoint = false;
  }

  /// Copies a trivially copyable payload into the arena and records a node for it.
  template <class P>
  void record(void (*backward)(tape&, const void*), const P& payload) {
    static_assert(std::is_trivially_copyable_v<P> && std::is_trivially_destructible_v<P>,
                  "fusor: a tape node's payload must be plain data");
    void* p = arena_allocate(sizeof(P), alignof(P));
    std::memcpy(p, &payload, sizeof(P));
    nodes_.push_back(detail::node{backward, p});
  }

  /// Owns x until the next reset() (a custom adjoint's residuals, a temporary array an operation
  /// reads in its backward pass) and returns where it lives. Unlike record(), this allocates.
  template <class X>
  X* keep(X x) {
    auto* p = new X(std::move(x));
    kept_.emplace_back(p, [](void* q) { delete static_cast<X*>(q); });
    if constexpr (fusor::ext::is_array_v<X>) {
      const std::size_t b = std::size_t(p->size()) * sizeof(typename X::value_type);
      kept_bytes_ += b;
      detail::meter.add(b);
    }
    return p;
  }
  /// Copies n plain values into the arena (a node's variable-length data: the parts of a
  /// concatenation); valid until the next reset().
  template <class X>
  const X* store(const X* data, std::size_t n) {
    static_assert(std::is_trivially_copyable_v<X> && std::is_trivially_destructible_v<X>,
                  "fusor: the tape's arena holds plain data");
    void* p = arena_allocate(sizeof(X) * (n ? n : 1), alignof(X));
    if (n) std::memcpy(p, data, sizeof(X) * n);
    return static_cast<const X*>(p);
  }

  /// Watches memory the backward pass will read that the tape does not own (a parameter's array, a
  /// constant array of an expression or operation): if the engine writes into it before the
  /// backward pass, run_backward throws instead of computing a wrong gradient; if its array is
  /// destroyed, the buffer is kept until reset() (see core/write_watch.hpp).
  template <class T, class B>
  void watch(const leaf<T, B>& l, bool parameter) {
    const auto [lo, hi] = fusor::ext::byte_range(l);
    if (lo == nullptr) return;
    // the same array read again by the nodes just recorded (a constant used in every step)
    for (std::size_t k = watches_.size(), seen = 0; k-- > 0 && seen < 8; ++seen)
      if (watches_[k].lo == lo && watches_[k].hi == hi) {
        watches_[k].parameter = watches_[k].parameter || parameter;
        return;
      }
    watches_.reserve(watches_.size() + 1);  // (nothing below throws once the table has the range)
    watch_handles_.reserve(watch_handles_.size() + 1);
    watch_handles_.push_back(fusor::ext::watched_memory().watch(lo, hi));
    watches_.push_back(watched{lo, hi, l.shape, parameter});
  }
  /// The shape of the first array the recording reads whose owner released it while it was watched
  /// (the table keeps its buffer until stop_watching); nullptr when every such array is alive.
  const extents* released_read() const {
    if (watch_handles_.empty()) return nullptr;
    const std::size_t k = fusor::ext::watched_memory().first_adopted(watch_handles_.data(), watch_handles_.size());
    return k < watches_.size() ? &watches_[k].shape : nullptr;
  }
  /// Stops watching (and lets the table free the buffers it kept for this recording): for a
  /// recording whose backward pass is done and will not run again (the transforms call it).
  void stop_watching() { unwatch_all(); }
  /// Throws tape_error when the engine wrote into memory the recording reads since it was watched.
  void check_reads() const {
    if (watch_handles_.empty()) return;
    std::size_t k = 0;
    const std::uint32_t writes =
        fusor::ext::watched_memory().first_written(watch_handles_.data(), watch_handles_.size(), k);
    if (writes == 0) return;
    const watched& w = watches_[k];
    throw tape_error(std::string("fusor: an array the recording reads in its backward pass (") +
                     (w.parameter ? "a parameter" : "a constant array") + " of shape " + to_string(w.shape) +
                     ") was written after it was recorded, so the gradient would be wrong; expected it unchanged until "
                     "the backward pass (update parameters after it, then record again)");
  }

  // ---- record once, replay (ad::compile) ---------------------------------------------------------
  // While a capture is on, every operation that can run again registers a forward step that
  // computes its output slot from its inputs' buffers, in recording order; replay_forward() runs
  // them again. An operation that registers none leaves its slot unproduced, and end_capture()
  // finds it: such a recording cannot be replayed (the operations that can are listed in
  // ad/compile.hpp).
  /// Starts capturing forward steps (after reset()).
  void begin_capture() {
    capturing_ = true;
    forwards_.clear();
    checks_.clear();
    produced_.clear();
    unreplayable_ = nullptr;
  }
  bool capturing() const { return capturing_; }
  /// Registers the step that computes slot `out` (a plain-data payload, copied into the arena).
  template <class P>
  void record_forward(void (*run)(tape&, const void*), const P& payload, std::uint32_t out) {
    static_assert(std::is_trivially_copyable_v<P> && std::is_trivially_destructible_v<P>,
                  "fusor: a forward step's payload must be plain data");
    if (!capturing_) return;
    void* p = arena_allocate(sizeof(P), alignof(P));
    std::memcpy(p, &payload, sizeof(P));
    forwards_.push_back(detail::forward_step{run, p});
    mark_produced(out);
  }
  /// Slot `id` needs no forward step: its value is read where it lies (a parameter, an input).
  void mark_produced(std::uint32_t id) {
    if (!capturing_) return;
    if (produced_.size() <= id) produced_.resize(std::size_t(id) + 1, false);
    produced_[id] = true;
  }
  /// What could not be replayed, named by the operation (the first such one).
  void not_replayable(const char* what) {
    if (capturing_ && unreplayable_ == nullptr) unreplayable_ = what;
  }
  /// Ends the capture. Returns nullptr when every slot made since begin_capture() has a forward
  /// step (or is read where it lies); else what cannot be replayed, for the caller's message.
  const char* end_capture(std::string& detail_out) {
    capturing_ = false;
    if (unreplayable_ != nullptr) return unreplayable_;
    for (std::size_t k = 0; k < used_; ++k)
      if (k >= produced_.size() || !produced_[k]) {
        detail_out = "its result has shape " + to_string(slots_[k].shape);
        return "an operation that registers no forward step";
      }
    return nullptr;
  }
  /// Runs the captured forward steps again, in order: every slot's value from the current inputs.
  void replay_forward() {
    for (const auto& f : forwards_) f.run(*this, f.payload);
  }
  /// The backward pass of a replay: the recorded nodes again, without checking watched writes (the
  /// forward steps have just recomputed every value the nodes read).
  void replay_backward() {
    for (std::size_t k = nodes_.size(); k-- > 0;) nodes_[k].backward(*this, nodes_[k].payload);
  }
  std::size_t forward_steps() const { return forwards_.size(); }

  // ---- checks of a replay, read after it -----------------------------------------------------
  // A forward step that checks its input (a gather's indices, cross-entropy's labels) reads a
  // verdict back to the host when it runs eagerly. A replay must not (on cuda it is one captured
  // graph, which cannot wait for the host): there such a step computes its verdict into a flag in
  // device memory, makes its bad input harmless (an index out of range gathers row 0), and the
  // replay reads every flag once, after the work: a raised flag runs the step's eager check,
  // which throws the error an eager call would have.
  /// Registers the eager check of a capture's step (a plain-data payload) and returns the number
  /// of its flag.
  template <class P>
  std::uint32_t add_check(void (*check)(tape&, const void*), const P& payload) {
    static_assert(std::is_trivially_copyable_v<P> && std::is_trivially_destructible_v<P>,
                  "fusor: a check's payload must be plain data");
    void* p = arena_allocate(sizeof(P), alignof(P));
    std::memcpy(p, &payload, sizeof(P));
    checks_.push_back(detail::forward_step{check, p});
    return std::uint32_t(checks_.size() - 1);
  }
  /// Whether the steps running now compute their checks into flags (a replay) or check eagerly.
  bool deferring_checks() const { return deferring_checks_; }
  /// Makes the flags (int64, on backend B) of the checks a recording added, when it ends: a
  /// replay's work then allocates nothing.
  template <class B>
  void reserve_check_flags() {
    if (!checks_.empty()) ensure<B>(check_flags_, checks_.size() * sizeof(std::int64_t));
    raised_.resize(checks_.size());
  }
  /// Starts a replay's deferred checks (after reserve_check_flags()).
  void begin_deferred_checks() { deferring_checks_ = true; }
  /// Flag k of the current replay (device memory of the recording's backend).
  std::int64_t* check_flag(std::uint32_t k) { return static_cast<std::int64_t*>(check_flags_.data) + k; }
  /// Ends a replay's deferred checks without reading them (its work failed).
  void abandon_deferred_checks() { deferring_checks_ = false; }
  /// Ends a replay's deferred checks: reads the flags (one copy) and runs the eager check of each
  /// raised one, which throws.
  template <class B>
  void end_deferred_checks() {
    deferring_checks_ = false;
    if (checks_.empty()) return;
    backend_memory<B>::copy_to_host(raised_.data(), static_cast<const std::int64_t*>(check_flags_.data),
                                    index_t(raised_.size()));
    for (std::size_t k = 0; k < raised_.size(); ++k)
      if (raised_[k] != 0) {
        checks_[k].run(*this, checks_[k].payload);
        throw index_error("fusor: a replayed step found bad input that its check does not reproduce");
      }
  }

  /// Scratch buffer `k` of at least `bytes` on backend B, kept across resets (a backward pass's
  /// temporaries: a second pass with the same shapes allocates nothing). Numbered by the caller,
  /// who must be done with it before another caller takes the same number.
  template <class B>
  void* scratch(std::size_t k, std::size_t bytes) {
    if (scratch_.size() <= k) scratch_.resize(k + 1);
    auto& s = scratch_[k];
    ensure<B>(s, bytes);
    return s.data;
  }

  /// A buffer of at least `bytes` on backend B kept for the tape's lifetime, one per key:
  /// constants that backward passes read (the adjoint identity). `fill(data, bytes)` fills it
  /// when it is made (or grown, for a larger request under the same key).
  template <class B, class Fill>
  void* constant(const void* key, std::size_t bytes, Fill&& fill) {
    auto it = std::find_if(constants_.begin(), constants_.end(), [&](const keyed_buffer& c) {
      return c.key == key && c.buffer.backend == &detail::backend_tag<B>;
    });
    if (it == constants_.end()) it = constants_.insert(it, keyed_buffer{key, scratch_buffer{}});
    if (ensure<B>(it->buffer, bytes)) fill(it->buffer.data, it->buffer.capacity);
    return it->buffer.data;
  }

  /// Forgets every adjoint (their buffers stay), for another backward pass over the same recording.
  void clear_adjoints() {
    for (std::size_t k = 0; k < used_; ++k) slots_[k].adjoint_written = false;
  }
  /// Runs the recorded nodes' adjoints from the last to the first.
  void run_backward() {
    check_reads();
    for (std::size_t k = nodes_.size(); k-- > 0;) nodes_[k].backward(*this, nodes_[k].payload);
  }

 private:
  void unwatch_all() {
    if (watch_handles_.empty()) return;
    fusor::ext::watched_memory().unwatch(watch_handles_.data(), watch_handles_.size());
    watch_handles_.clear();
    watches_.clear();
  }
  void hold(std::size_t bytes) {
    held_ += bytes;
    detail::meter.add(bytes);
  }
  void let_go(std::size_t bytes) {
    held_ -= bytes;
    detail::meter.remove(bytes);
  }
  void forget_kept() {
    kept_.clear();
    detail::meter.remove(kept_bytes_);
    kept_bytes_ = 0;
  }
  void free_slot(detail::slot& s) {
    if (s.value && s.owns_value) {
      s.release(s.value, s.value_capacity);
      let_go(s.value_capacity);
    }
    if (s.adjoint && s.owns_adjoint) {
      s.release(s.adjoint, s.adjoint_capacity);
      let_go(s.adjoint_capacity);
    }
    s.value = s.adjoint = nullptr;
    s.value_capacity = s.adjoint_capacity = 0;
  }
  void* arena_allocate(std::size_t bytes, std::size_t align) {
    constexpr std::size_t block_bytes = 64 * 1024;
    for (;;) {
      if (arena_block_ < arena_.size()) {
        auto& blk = arena_[arena_block_];
        std::size_t at = (arena_used_ + align - 1) / align * align;
        if (at + bytes <= blk.size) {
          arena_used_ = at + bytes;
          return blk.data.get() + at;
        }
        ++arena_block_;
        arena_used_ = 0;
        continue;
      }
      const std::size_t size = bytes + align > block_bytes ? bytes + align : block_bytes;
      arena_.push_back(block{std::make_unique<std::byte[]>(size), size});
    }
  }
  struct block {
    std::unique_ptr<std::byte[]> data;
    std::size_t size;
  };

  struct scratch_buffer {
    void* data = nullptr;
    std::size_t capacity = 0;
    const void* backend = nullptr;
    void (*release)(void*, std::size_t) = nullptr;
  };

  std::vector<detail::slot> slots_;
  std::size_t used_ = 0;
  std::vector<detail::forward_step> forwards_;
  std::vector<bool> produced_;
  bool capturing_ = false;
  const char* unreplayable_ = nullptr;
  std::vector<detail::forward_step> checks_;
  std::vector<std::int64_t> raised_;  // the flags read back after a replay
  bool deferring_checks_ = false;
  /// Makes b a buffer of at least `bytes` on backend B unless it already is one (buffers only
  /// grow); true when it was (re)allocated.
  template <class B>
  bool ensure(scratch_buffer& b, std::size_t bytes) {
    if (b.backend == &detail::backend_tag<B> && b.capacity >= bytes) return false;
    release(b);
    b.data = backend_memory<B>::template allocate<std::byte>(index_t(bytes ? bytes : 1));
    b.capacity = bytes ? bytes : 1;
    b.backend = &detail::backend_tag<B>;
    b.release = &detail::release_bytes<B>;
    hold(b.capacity);
    return true;
  }
  void release(scratch_buffer& b) {
    if (b.data) {
      b.release(b.data, b.capacity);
      let_go(b.capacity);
    }
    b = scratch_buffer{};
  }

  std::vector<scratch_buffer> scratch_;
  scratch_buffer check_flags_;  // a replay's deferred checks (int64, one per check)
  struct keyed_buffer {
    const void* key;
    scratch_buffer buffer;
  };
  std::vector<keyed_buffer> constants_;
  std::vector<detail::node> nodes_;
  std::vector<std::unique_ptr<void, void (*)(void*)>> kept_;
  std::size_t held_ = 0;        // bytes of the buffers above that the tape owns
  std::size_t kept_bytes_ = 0;  // bytes of the arrays in kept_
  std::vector<block> arena_;
  std::size_t arena_block_ = 0, arena_used_ = 0;
  detail::tape_identity* identity_;
  struct watched {
    const char* lo;
    const char* hi;
    extents shape;
    bool parameter;
  };
  std::vector<watched> watches_;
  std::vector<std::uint32_t> watch_handles_;
};

/// While one lives, operations on variables record nothing (their results are constants), as
/// PyTorch's torch.no_grad(): for evaluation, and for updates of parameters.
class no_grad {
 public:
  no_grad() { ++detail::no_grad_depth; }
  ~no_grad() { --detail::no_grad_depth; }
  no_grad(const no_grad&) = delete;
  no_grad& operator=(const no_grad&) = delete;
};
/// Whether operations on variables are being recorded on this thread.
inline bool recording() { return detail::no_grad_depth == 0; }

/// Makes t this thread's active tape while it lives (ad::param(x) and ad::active_tape() use it).
/// Scopes nest as a stack: when one ends, the tape active before it is active again. The
/// transforms (grad, value_and_grad, vjp, ...) make their tape active while they call the
/// function, so a transform called inside a function being differentiated records on its own
/// tape and leaves the outer recording as it was. Declare the tape before the scope.
class use_tape {
 public:
  explicit use_tape(tape& t) : previous_(detail::active_top) { detail::active_top = &t; }
  ~use_tape() { detail::active_top = previous_; }
  use_tape(const use_tape&) = delete;
  use_tape& operator=(const use_tape&) = delete;

 private:
  tape* previous_;
};

/// The bytes of memory every tape in the process holds (tape::bytes summed) and the most they held
/// at once since reset_tape_memory_peak(): the figure gradient checkpointing lowers.
struct tape_memory_stats {
  std::size_t current = 0;
  std::size_t peak = 0;
};
inline tape_memory_stats tape_memory() {
  return {detail::meter.current.load(std::memory_order_relaxed), detail::meter.peak.load(std::memory_order_relaxed)};
}
/// Starts a new peak from what the tapes hold now.
inline void reset_tape_memory_peak() {
  detail::meter.peak.store(detail::meter.current.load(std::memory_order_relaxed), std::memory_order_relaxed);
}

/// Whether a tape is active on this thread (inside a use_tape scope or a transform's call).
inline bool has_active_tape() { return detail::active_top != nullptr; }
/// This thread's active tape: the innermost use_tape scope's.
inline tape& active_tape() {
  if (detail::active_top == nullptr)
    throw tape_error("fusor: no tape is active on this thread (expected a call inside an ad::use_tape scope or "
                     "inside a function that ad::grad, value_and_grad or vjp is differentiating; or pass the tape: "
                     "ad::param(tape, x))");
  return *detail::active_top;
}

}  // namespace fusor::ad
