#pragma once
// Host memory for array<T, cpu>: 64-byte aligned, counted in test builds.
#include <cstddef>
#include <limits>
#include <new>
#include <string>

#include "../../core/backend.hpp"
#include "../../core/config.hpp"
#include "../../core/error.hpp"

namespace fusor {

template <>
struct backend_traits<cpu> {
  static constexpr const char* name = "cpu";
  static constexpr bool host_accessible = true;

  template <class T>
  static T* allocate(index_t n) {
    if (n < 0 || std::size_t(n) > (std::numeric_limits<std::size_t>::max() - cpu_alignment) / sizeof(T))
      throw backend_error("fusor: cannot allocate " + std::to_string(n) + " elements of " +
                          std::to_string(sizeof(T)) + " bytes on the cpu (size overflows)");
    // round up to whole cache lines so SIMD loops may read the last partial line safely
    const std::size_t bytes = (std::size_t(n) * sizeof(T) + cpu_alignment - 1) / cpu_alignment * cpu_alignment;
    void* p = ::operator new(bytes, std::align_val_t(cpu_alignment), std::nothrow);
    if (!p)
      throw backend_error("fusor: out of host memory: requested " + std::to_string(bytes) + " bytes");
    FUSOR_COUNT_ALLOCATION();
    return static_cast<T*>(p);
  }
  template <class T>
  static void deallocate(T* p, index_t) noexcept {
    ::operator delete(p, std::align_val_t(cpu_alignment));
  }
};

}  // namespace fusor
