#pragma once
// Build-wide constants and the few macros every fusor header needs.
#include <cstddef>
#include <cstdint>

#if defined(__CUDACC__)
#define FUSOR_HD __host__ __device__
#else
#define FUSOR_HD
#endif

namespace fusor {

/// Signed index type: strides may be negative (flipped views) and differences must not wrap.
using index_t = std::ptrdiff_t;

/// Arrays have at most this many dimensions; shape and strides live inline in the array.
inline constexpr int max_rank = 8;

/// Alignment of every cpu buffer (a cache line, and the widest SIMD register on x86).
inline constexpr std::size_t cpu_alignment = 64;

}  // namespace fusor

// Test-only instrumentation: counts allocations and evaluation passes so tests can prove that a
// statement fused into one pass. Define FUSOR_INSTRUMENT before including fusor (the test build
// does); otherwise the hooks compile to nothing.
#if defined(FUSOR_INSTRUMENT)
#include <atomic>
namespace fusor::instrument {
inline std::atomic<long> allocations{0};   ///< buffers obtained from a backend allocator
inline std::atomic<long> passes{0};        ///< elementwise or reduction sweeps over memory
inline std::atomic<long> simd_passes{0};   ///< cpu assignments that ran the SIMD loop
inline void reset() { allocations = 0; passes = 0; simd_passes = 0; }
}  // namespace fusor::instrument
#define FUSOR_COUNT_ALLOCATION() (++::fusor::instrument::allocations)
#define FUSOR_COUNT_PASS() (++::fusor::instrument::passes)
#define FUSOR_COUNT_SIMD_PASS() (++::fusor::instrument::simd_passes)
#else
#define FUSOR_COUNT_ALLOCATION() ((void)0)
#define FUSOR_COUNT_PASS() ((void)0)
#define FUSOR_COUNT_SIMD_PASS() ((void)0)
#endif
