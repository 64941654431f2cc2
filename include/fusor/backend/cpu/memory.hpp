#pragma once
// Host memory for array<T, cpu>: 64-byte aligned, counted in test builds.
#include <cstddef>
#include <limits>
#include <new>
#include <string>

#include "../../core/backend.hpp"
#include "../../core/config.hpp"
#include "../../core/error.hpp"

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace fusor {

namespace detail {
/// Buffers from this size up are aligned to 2 MiB and offered to the kernel as transparent huge
/// pages: touching a fresh 64 MiB array then costs 32 page faults instead of 16384, which on a
/// VM is most of the time of a statement that writes a new large array.
inline constexpr std::size_t huge_page_threshold = std::size_t(4) << 20;
inline constexpr std::size_t huge_page_alignment = std::size_t(2) << 20;
inline constexpr std::size_t host_alignment(std::size_t bytes) {
  return bytes >= huge_page_threshold ? huge_page_alignment : cpu_alignment;
}
inline constexpr std::size_t host_bytes(std::size_t n, std::size_t size) {
  // whole cache lines, so SIMD loops may read the last partial line safely
  return (n * size + cpu_alignment - 1) / cpu_alignment * cpu_alignment;
}
}  // namespace detail

template <>
struct backend_traits<cpu> {
  static constexpr const char* name = "cpu";
  static constexpr bool host_accessible = true;

  template <class T>
  static T* allocate(index_t n) {
    if (n < 0 || std::size_t(n) > (std::numeric_limits<std::size_t>::max() - cpu_alignment) / sizeof(T))
      throw backend_error("fusor: cannot allocate " + std::to_string(n) + " elements of " +
                          std::to_string(sizeof(T)) + " bytes on the cpu (size overflows)");
    const std::size_t bytes = detail::host_bytes(std::size_t(n), sizeof(T));
    const std::size_t align = detail::host_alignment(bytes);
    void* p = ::operator new(bytes, std::align_val_t(align), std::nothrow);
    if (!p)
      throw backend_error("fusor: out of host memory: requested " + std::to_string(bytes) + " bytes");
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (align == detail::huge_page_alignment) ::madvise(p, bytes, MADV_HUGEPAGE);  // advice only: failure is harmless
#endif
    FUSOR_COUNT_ALLOCATION();
    return static_cast<T*>(p);
  }
  template <class T>
  static void deallocate(T* p, index_t n) noexcept {
    ::operator delete(p, std::align_val_t(detail::host_alignment(detail::host_bytes(std::size_t(n), sizeof(T)))));
  }
};

}  // namespace fusor
