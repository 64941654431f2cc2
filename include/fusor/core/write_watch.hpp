#pragma once
// Watching memory for writes, so that a reader that comes back later can tell whether what it
// will read changed. The autodiff tape reads its parameters and the constant arrays of its
// expressions again in the backward pass; a write into them in between would give a wrong
// gradient with no sign of it (PyTorch's version counters catch the same mistake). Views carry no
// owner, so the versions are kept here, by address range, not in the arrays.
//
// The engine reports every write it makes into caller memory (assignments, fills, compound
// assignments, writes through views, scatters, matmul and FFT outputs, copies). An array that
// releases a buffer a watch lies in hands the buffer to the table instead, which releases it when
// the last watch ends: a recording may read a constant that went out of scope (as PyTorch keeps
// saved tensors alive), and no address is reused while it is watched. When nothing is watched,
// the usual state, a report is one relaxed atomic load; otherwise it takes a lock and compares
// ranges with the few watched ones. Writes the engine does not make (through element references,
// data() or begin()) are not seen.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <mutex>
#include <utility>
#include <vector>

#include "expr/leaf.hpp"

namespace fusor::detail {

// The lowest and one-past-highest addresses a strided leaf touches.
template <class T, class B>
std::pair<const char*, const char*> byte_range(const leaf<T, B>& l) {
  index_t lo = 0, hi = 0;
  for (int k = 0; k < l.shape.size(); ++k) {
    if (l.shape[k] == 0) return {nullptr, nullptr};
    const index_t span = (l.shape[k] - 1) * l.strides[k];
    (span < 0 ? lo : hi) += span;
  }
  auto base = reinterpret_cast<const char*>(l.data);
  return {base + lo * index_t(sizeof(T)), base + (hi + 1) * index_t(sizeof(T))};
}
/// Whether two leaves' address ranges meet (an empty leaf meets nothing).
template <class T, class B, class U, class C>
bool ranges_overlap(const leaf<T, B>& a, const leaf<U, C>& b) {
  auto [a0, a1] = byte_range(a);
  auto [b0, b1] = byte_range(b);
  return a0 != nullptr && b0 != nullptr && b0 < a1 && a0 < b1;
}

/// A buffer an array released while a watched range lay in it: kept until the last watch over it
/// ends, so a recording can still read a constant array that went out of scope (a temporary in
/// the differentiated function) without a copy.
struct adopted_buffer {
  void* data = nullptr;
  std::size_t bytes = 0;
  index_t count = 0;                         // elements, as the deallocator wants them
  void (*release)(void*, index_t) = nullptr;  // the array's backend deallocator
  int watchers = 0;                          // live watched ranges inside it
};

class write_watches {
 public:
  /// Starts watching [lo, hi); returns a handle for writes_since() and unwatch().
  std::uint32_t watch(const char* lo, const char* hi) {
    std::lock_guard<std::mutex> hold(lock_);
    std::uint32_t h = 0;
    while (h < ranges_.size() && ranges_[h].live) ++h;
    if (h == ranges_.size()) ranges_.emplace_back();
    ranges_[h] = range{lo, hi, 0, -1, true};
    // inside a buffer the table already keeps (its array is gone, another watch still reads it):
    // this watch keeps it too
    for (std::size_t b = 0; b < buffers_.size(); ++b) {
      const char* blo = static_cast<const char*>(buffers_[b].data);
      if (buffers_[b].watchers > 0 && blo <= lo && hi <= blo + buffers_[b].bytes) {
        ranges_[h].buffer = int(b);
        ++buffers_[b].watchers;
        break;  // kept buffers never overlap
      }
    }
    live_.fetch_add(1, std::memory_order_relaxed);
    return h;
  }
  /// Stops watching n ranges (one lock for all of them); buffers kept for them alone are released.
  void unwatch(const std::uint32_t* h, std::size_t n) {
    std::vector<adopted_buffer> done;
    {
      std::lock_guard<std::mutex> hold(lock_);
      for (std::size_t k = 0; k < n; ++k) {
        if (h[k] >= ranges_.size() || !ranges_[h[k]].live) continue;
        range& r = ranges_[h[k]];
        r.live = false;
        live_.fetch_sub(1, std::memory_order_relaxed);
        if (r.buffer >= 0 && --buffers_[std::size_t(r.buffer)].watchers == 0) {
          done.push_back(buffers_[std::size_t(r.buffer)]);
          buffers_[std::size_t(r.buffer)] = adopted_buffer{};
        }
      }
    }
    for (const auto& b : done) b.release(b.data, b.count);
  }
  /// The position (in h) of the first of n ranges the engine wrote since it was watched, and how
  /// many writes touched it; writes == 0 when none was written.
  std::uint32_t first_written(const std::uint32_t* h, std::size_t n, std::size_t& at) {
    std::lock_guard<std::mutex> hold(lock_);
    for (std::size_t k = 0; k < n; ++k)
      if (const std::uint32_t w = ranges_[h[k]].writes; w != 0) {
        at = k;
        return w;
      }
    return 0;
  }
  /// The position (in h) of the first of n ranges whose array released its buffer (the table keeps
  /// it); n when none.
  std::size_t first_adopted(const std::uint32_t* h, std::size_t n) {
    std::lock_guard<std::mutex> hold(lock_);
    for (std::size_t k = 0; k < n; ++k)
      if (ranges_[h[k]].buffer >= 0) return k;
    return n;
  }
  /// Whether nothing is watched (the fast path of every report).
  bool idle() const { return live_.load(std::memory_order_relaxed) == 0; }
  /// The engine wrote [lo, hi).
  void wrote(const char* lo, const char* hi) {
    if (live_.load(std::memory_order_relaxed) == 0 || lo == nullptr) return;
    std::lock_guard<std::mutex> hold(lock_);
    for (auto& r : ranges_)
      if (r.live && lo < r.hi && r.lo < hi && r.writes != std::numeric_limits<std::uint32_t>::max()) ++r.writes;
  }
  /// An array is releasing its buffer of `count` elements at `data`, `bytes` long: when a watched
  /// range lies in it, the table keeps the buffer (and releases it when the last such watch ends)
  /// and returns true; the array must then not release it.
  bool adopt(void* data, index_t count, std::size_t bytes, void (*release)(void*, index_t)) {
    if (live_.load(std::memory_order_relaxed) == 0 || data == nullptr) return false;
    const char* lo = static_cast<const char*>(data);
    const char* hi = lo + bytes;
    std::lock_guard<std::mutex> hold(lock_);
    auto inside = [&](const range& r) { return r.live && r.buffer < 0 && lo < r.hi && r.lo < hi; };
    int watchers = 0;
    for (const auto& r : ranges_) watchers += inside(r);
    if (watchers == 0) return false;
    std::size_t b = 0;
    while (b < buffers_.size() && buffers_[b].watchers != 0) ++b;
    if (b == buffers_.size()) buffers_.emplace_back();
    buffers_[b] = adopted_buffer{data, bytes, count, release, watchers};
    for (auto& r : ranges_)
      if (inside(r)) r.buffer = int(b);
    return true;
  }
  /// How many released buffers the table keeps for live watches.
  std::size_t adopted_buffers() {
    std::lock_guard<std::mutex> hold(lock_);
    std::size_t n = 0;
    for (const auto& b : buffers_) n += b.watchers > 0;
    return n;
  }

 private:
  struct range {
    const char* lo = nullptr;
    const char* hi = nullptr;
    std::uint32_t writes = 0;  // engine writes that touched it since it was watched
    int buffer = -1;           // the adopted buffer it lies in, once its array released it
    bool live = false;
  };
  std::mutex lock_;
  std::vector<range> ranges_;
  std::vector<adopted_buffer> buffers_;
  std::atomic<int> live_{0};
};

/// The process's table (one for every thread: a tape may be recorded on one thread and its
/// arrays written on another). Never destroyed: a static tape or array may still use it while
/// static objects are destroyed at exit.
inline write_watches& watched_memory() {
  static write_watches& table = *new write_watches;
  return table;
}

/// Reports an engine write into the elements of `dst`.
template <class T, class B>
void note_write(const leaf<T, B>& dst) {
  write_watches& table = watched_memory();
  if (table.idle()) return;
  const auto [lo, hi] = byte_range(dst);
  table.wrote(lo, hi);
}
/// Called by an array releasing its n elements at p: true when a recording still reads them and the
/// table took the buffer (released later through `release`).
template <class T>
bool adopted_on_release(T* p, index_t n, void (*release)(void*, index_t)) noexcept {
  if (p == nullptr || n <= 0) return false;
  try {
    return watched_memory().adopt(p, n, std::size_t(n) * sizeof(T), release);
  } catch (...) {  // (no memory for the table's entry: released now, as without a watch)
    return false;
  }
}

}  // namespace fusor::detail
