#pragma once
// The LRU-bounded plan cache every FFT backend keeps (FFTW plans on the cpu, cuFFT plans on
// cuda): plans are shared_ptr-held, so a plan evicted while another thread still executes it is
// destroyed when that execution ends; evicted plans are destroyed after the lock is released
// (their destructors may take it again).
#include <cstddef>
#include <iterator>
#include <list>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <utility>

#include "backend_fwd.hpp"

namespace fusor::detail {

template <class Key, class Hash, class Holder, class Mutex>
class lru_plan_cache {
 public:
  using plan_ptr = std::shared_ptr<const Holder>;

  explicit lru_plan_cache(Mutex& m) : m_(m) {}

  /// The cached plan for `key`, or the one `make()` returns (which is then cached). make()
  /// runs under the lock (FFTW's planner is not thread-safe).
  template <class Make>
  plan_ptr get(const Key& key, Make&& make) {
    std::unique_lock lock(m_);
    if (auto it = index_.find(key); it != index_.end()) {
      ++hits_;
      lru_.splice(lru_.begin(), lru_, it->second);
      return it->second->second;
    }
    ++misses_;
    plan_ptr p = make();
    if (capacity_ == 0) return p;
    lru_.emplace_front(key, p);
    index_[key] = lru_.begin();
    std::list<entry> evicted;
    trim(evicted);
    lock.unlock();
    return p;  // `evicted` destroys its plans here, after the unlock
  }
  fft::plan_cache_stats stats() {
    std::lock_guard lock(m_);
    return {lru_.size(), capacity_, hits_, misses_};
  }
  void set_capacity(std::size_t n) {
    std::list<entry> evicted;
    std::lock_guard lock(m_);
    capacity_ = n;
    trim(evicted);
  }
  void clear() {
    std::list<entry> evicted;
    std::lock_guard lock(m_);
    index_.clear();
    evicted.splice(evicted.begin(), lru_);
    hits_ = misses_ = 0;
  }

 private:
  using entry = std::pair<Key, plan_ptr>;
  void trim(std::list<entry>& evicted) {
    while (lru_.size() > capacity_) {
      index_.erase(lru_.back().first);
      evicted.splice(evicted.begin(), lru_, std::prev(lru_.end()));
    }
  }
  Mutex& m_;
  std::list<entry> lru_;
  std::unordered_map<Key, typename std::list<entry>::iterator, Hash> index_;
  std::size_t capacity_ = 64;
  long hits_ = 0, misses_ = 0;
};

}  // namespace fusor::detail
