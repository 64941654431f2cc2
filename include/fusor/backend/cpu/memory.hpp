#pragma once
// Host memory for array<T, cpu>: 64-byte aligned, huge pages for large buffers, and a bounded
// cache of freed large blocks. Counted in test builds.
//
// Why a cache: a fresh buffer costs a page fault per 4 KiB page the first time it is written
// (the kernel zeroes each one), and the C allocator hands large blocks back to the kernel when
// they are freed. A loop whose statements create large temporaries (an FFT's spectrum, a padded
// copy, a result) then pays that again on every iteration: 10-60% of an FFT round trip on the
// machines we measured. Freed blocks of 256 KiB and more are therefore kept (up to
// cpu_cache_limit() bytes, 1 GiB by default) and handed out again for the same rounded size.
// cpu_free_cache() returns them to the system; set_cpu_cache_limit(0) turns the cache off.
// AddressSanitizer builds never cache (a reused block would hide a use after free).
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdio>
#include <limits>
#include <mutex>
#include <new>
#include <string>
#include <unordered_map>
#include <vector>

#include "../../core/backend.hpp"
#include "../../core/config.hpp"
#include "../../core/error.hpp"
#include "context.hpp"

#if defined(__linux__)
#include <sys/mman.h>
#endif
#if defined(__unix__)
#include <unistd.h>
#endif

#if defined(__SANITIZE_ADDRESS__)
#define FUSOR_HOST_CACHE_ENABLED 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FUSOR_HOST_CACHE_ENABLED 0
#endif
#endif
#ifndef FUSOR_HOST_CACHE_ENABLED
#define FUSOR_HOST_CACHE_ENABLED 1
#endif

namespace fusor {

/// Memory held by a backend's arrays and by its block cache, in bytes.
struct memory_stats {
  std::size_t allocated = 0;  ///< bytes in live arrays
  std::size_t peak = 0;       ///< the most `allocated` has been (since the last reset_peak)
  std::size_t cached = 0;     ///< bytes of freed blocks kept for reuse
  long cache_hits = 0;        ///< allocations served from the cache
  long cache_misses = 0;      ///< cacheable allocations that went to the system
};

namespace detail {
/// Buffers from this size up are aligned to 2 MiB and offered to the kernel as transparent huge
/// pages: touching a fresh 64 MiB array then costs 32 page faults instead of 16384, which on a
/// VM is most of the time of a statement that writes a new large array.
inline constexpr std::size_t huge_page_threshold = std::size_t(4) << 20;
inline constexpr std::size_t huge_page_alignment = std::size_t(2) << 20;
/// Blocks from this size up are cached when freed; smaller ones the C allocator keeps anyway.
inline constexpr std::size_t host_cache_threshold = std::size_t(256) << 10;

inline constexpr std::size_t round_up(std::size_t v, std::size_t m) { return (v + m - 1) / m * m; }
/// The bytes behind n elements of `size` bytes: whole cache lines (SIMD loops may read the last
/// partial line), and cacheable sizes rounded (64 KiB, or 2 MiB for huge blocks) so that arrays
/// of nearly equal size share cached blocks.
inline constexpr std::size_t host_bytes(std::size_t n, std::size_t size) {
  const std::size_t b = round_up(n * size, cpu_alignment);
  if (b >= huge_page_threshold) return round_up(b, huge_page_alignment);
  if (b >= host_cache_threshold) return round_up(b, std::size_t(64) << 10);
  return b;
}
inline constexpr std::size_t host_alignment(std::size_t bytes) {
  return bytes >= huge_page_threshold ? huge_page_alignment : cpu_alignment;
}

class host_block_cache {
 public:
  static host_block_cache& instance() {
    static host_block_cache* c = new host_block_cache;  // never destroyed: static arrays may outlive it
    return *c;
  }
  void* allocate(std::size_t bytes) {
    if (bytes >= host_cache_threshold && FUSOR_HOST_CACHE_ENABLED) {
      std::lock_guard lock(m_);  // only cacheable sizes lock: small arrays never wait here
      auto it = free_.find(bytes);
      if (it != free_.end() && !it->second.empty()) {
        void* p = it->second.back();
        it->second.pop_back();
        cached_ -= bytes;
        ++hits_;
        note_allocated(bytes);
        return p;
      }
      ++misses_;
    }
    const std::size_t align = host_alignment(bytes);
    void* p = ::operator new(bytes, std::align_val_t(align), std::nothrow);
    if (!p) {
      free_all();  // the cache may hold what is missing
      p = ::operator new(bytes, std::align_val_t(align), std::nothrow);
    }
    if (!p)
      throw backend_error("fusor: out of host memory: requested " + std::to_string(bytes) + " bytes with " +
                          std::to_string(allocated_.load()) + " bytes in live arrays");
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (align == huge_page_alignment) ::madvise(p, bytes, MADV_HUGEPAGE);  // advice only: failure is harmless
#endif
    note_allocated(bytes);
    return p;
  }
  void deallocate(void* p, std::size_t bytes) noexcept {
    allocated_ -= bytes;
    if (bytes >= host_cache_threshold && FUSOR_HOST_CACHE_ENABLED) {
      std::lock_guard lock(m_);
      if (cached_ + bytes <= limit_) {
        try {
          free_[bytes].push_back(p);
          cached_ += bytes;
          return;
        } catch (...) {  // no memory for the bookkeeping: release the block instead
        }
      }
    }
    ::operator delete(p, std::align_val_t(host_alignment(bytes)));
  }
  void free_all() noexcept {
    std::unordered_map<std::size_t, std::vector<void*>> blocks;
    {
      std::lock_guard lock(m_);
      blocks.swap(free_);
      cached_ = 0;
    }
    for (auto& [bytes, list] : blocks)
      for (void* p : list) ::operator delete(p, std::align_val_t(host_alignment(bytes)));
  }
  void set_limit(std::size_t bytes) {
    {
      std::lock_guard lock(m_);
      limit_ = bytes;
      if (cached_ <= limit_) return;
    }
    free_all();
  }
  std::size_t limit() {
    std::lock_guard lock(m_);
    return limit_;
  }
  memory_stats stats() {
    std::lock_guard lock(m_);
    return {allocated_.load(), peak_.load(), cached_, hits_, misses_};
  }
  void reset_peak() { peak_ = allocated_.load(); }
  std::size_t allocated() const { return allocated_.load(); }  // without the lock stats() takes

 private:
  // live bytes and their peak are atomics, so that counting them never takes the lock
  void note_allocated(std::size_t bytes) {
    const std::size_t now = allocated_ += bytes;
    std::size_t peak = peak_.load(std::memory_order_relaxed);
    while (now > peak && !peak_.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
    }
  }
  std::mutex m_;  // the cache: free_, cached_, limit_, hits_, misses_
  std::unordered_map<std::size_t, std::vector<void*>> free_;
  std::atomic<std::size_t> allocated_{0}, peak_{0};
  std::size_t cached_ = 0;
  std::size_t limit_ = std::size_t(1) << 30;
  long hits_ = 0, misses_ = 0;
};
}  // namespace detail

/// Bytes in live cpu arrays, their peak, and the block cache's size and hit counts.
inline memory_stats cpu_memory_stats() { return detail::host_block_cache::instance().stats(); }
/// Returns every cached block to the system (live arrays are not affected).
inline void cpu_free_cache() { detail::host_block_cache::instance().free_all(); }
/// The most bytes of freed blocks kept for reuse (default 1 GiB; 0 turns caching off).
inline void set_cpu_cache_limit(std::size_t bytes) { detail::host_block_cache::instance().set_limit(bytes); }
inline std::size_t cpu_cache_limit() { return detail::host_block_cache::instance().limit(); }
/// Starts measuring the peak again from the bytes live now.
inline void reset_cpu_peak_memory() { detail::host_block_cache::instance().reset_peak(); }

template <>
struct backend_memory<cpu> {
  /// Bytes new arrays could still get: the system's available memory (Linux's MemAvailable,
  /// else the free physical pages) plus the freed blocks fusor's cache keeps for reuse.
  static std::size_t available() {
    std::size_t bytes = 0;
    if (std::FILE* f = std::fopen("/proc/meminfo", "r")) {
      char line[256];
      unsigned long long kib = 0;
      while (std::fgets(line, sizeof line, f))
        if (std::sscanf(line, "MemAvailable: %llu kB", &kib) == 1) {
          bytes = std::size_t(kib) * 1024;
          break;
        }
      std::fclose(f);
    }
#if defined(_SC_AVPHYS_PAGES) && defined(_SC_PAGESIZE)
    if (bytes == 0) {
      const long pages = ::sysconf(_SC_AVPHYS_PAGES), size = ::sysconf(_SC_PAGESIZE);
      if (pages > 0 && size > 0) bytes = std::size_t(pages) * std::size_t(size);
    }
#endif
    return bytes + cpu_memory_stats().cached;
  }
  template <class T>
  static T* allocate(index_t n) {
    if (n < 0 || std::size_t(n) > (std::numeric_limits<std::size_t>::max() / 2) / sizeof(T))
      throw backend_error("fusor: cannot allocate " + std::to_string(n) + " elements of " +
                          std::to_string(sizeof(T)) + " bytes on the cpu (size overflows)");
    const std::size_t bytes = detail::host_bytes(std::size_t(n), sizeof(T));
    const context<cpu>& ctx = current_context<cpu>();
    if (ctx.memory_limit > 0)
      detail::check_memory_limit(ctx.memory_limit, bytes, detail::host_block_cache::instance().allocated(), "cpu");
    void* p = detail::host_block_cache::instance().allocate(bytes);
    FUSOR_COUNT_ALLOCATION();
    ctx.on_memory({memory_event::allocation, bytes, p});
    return static_cast<T*>(p);
  }
  template <class T>
  static void deallocate(T* p, index_t n) noexcept {
    const std::size_t bytes = detail::host_bytes(std::size_t(n), sizeof(T));
    current_context<cpu>().on_memory({memory_event::release, bytes, p});
    detail::host_block_cache::instance().deallocate(p, bytes);
  }
  template <class T>
  static void copy_to_host(T* dst, const T* src, index_t n) {
    std::copy(src, src + n, dst);
  }
  template <class T>
  static void copy_from_host(T* dst, const T* src, index_t n) {
    std::copy(src, src + n, dst);
  }
  template <class T>
  static void copy_within(T* dst, const T* src, index_t n) {
    std::copy(src, src + n, dst);
  }
};

}  // namespace fusor
