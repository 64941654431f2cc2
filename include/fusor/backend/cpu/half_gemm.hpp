#pragma once
// Matrix products of float16 and bfloat16 on the cpu, accumulated in float32 (as cuBLAS's
// GemmEx with a 32F compute type, PyTorch's and NumPy's half products). Panels of A and B along K
// are widened to float32, exactly, by the engine's SIMD cast loop, multiplied by sgemm into a
// float32 C, and C is rounded once into the 16-bit result. So an element of the result is within
// the float32 accumulation bound of the exact product, plus one rounding to the 16-bit type.
//
// Why not OpenBLAS's sbgemm for bfloat16: Debian's OpenBLAS 0.3.21 declares cblas_sbgemm in
// cblas.h but is built without BUILD_BFLOAT16, so the library does not export it; and it has no
// float16 product at all. One path serves both types and any CBLAS.
#include <algorithm>

#include "../../core/array.hpp"
#include "../../core/half.hpp"
#include "executor.hpp"
#include "memory.hpp"

namespace fusor::detail::cpu_blas {

/// dst (rows x cols, contiguous) = src (rows x cols with row stride ld), widened to float32.
template <class H>
void widen_block(const H* src, index_t ld, index_t rows, index_t cols, float* dst) {
  const leaf<H, cpu> from{const_cast<H*>(src), extents{rows, cols}, extents{ld, index_t(1)}};
  executor<cpu>::assign(leaf<float, cpu>{dst, extents{rows, cols}, extents{cols, index_t(1)}},
                        cast_expr<float, leaf<H, cpu>>{from});
}

/// The K per sgemm call: large enough that sgemm runs at full speed and the conversions are a
/// small fraction of the work (2 (m + n) k conversions against 2 m n k flops), small enough that
/// the widened panels stay a small fraction of the operands.
inline constexpr index_t half_panel_k = 512;

/// C = op(A) op(B) for 16-bit floats H, in float32 (see the top of this file); the arguments are
/// blas<cpu>::gemm's. Strides are any: gemv and dot pass a vector as a one-column matrix whose
/// row stride is the vector's increment. sgemm(ta, tb, m, n, k, a, lda, b, ldb, beta, c, ldc) is
/// the float32 product C = op(A) op(B) + beta C (blas.hpp passes CBLAS's, the one header naming it).
template <class H, class Sgemm>
void half_gemm(bool ta, bool tb, index_t m, index_t n, index_t k, const H* a, index_t lda, const H* b, index_t ldb,
               H* c, index_t ldc, const Sgemm& sgemm) {
  // The conversions run on this thread alone: a team of fusor's (OpenMP) threads between sgemm
  // calls would spin against OpenBLAS's own waiting threads, which made a 1024^3 product 2.7x
  // slower than sgemm on 2 cores; alone they cost a few percent of it (bench_linalg).
  context<cpu> alone = current_context<cpu>();
  alone.threads = 1;
  const context_scope<cpu> scope(alone);
  // float32 scratch from the cpu's memory pool (counted by cpu_memory_stats, bound by its limit)
  array<float, cpu> cf(extents{m * n});
  if (k == 0) {
    std::fill(cf.data(), cf.data() + m * n, 0.0f);
  } else {
    const index_t kp = std::min(k, half_panel_k);
    array<float, cpu> af(extents{m * kp}), bf(extents{kp * n});
    for (index_t p0 = 0; p0 < k; p0 += kp) {
      const index_t kb = std::min(kp, k - p0);
      // op(A)'s columns p0 .. p0 + kb: stored A's columns (m x k) or rows (k x m, transposed)
      if (ta) widen_block(a + p0 * lda, lda, kb, m, af.data());
      else widen_block(a + p0, lda, m, kb, af.data());
      // op(B)'s rows p0 .. p0 + kb: stored B's rows (k x n) or columns (n x k, transposed)
      if (tb) widen_block(b + p0, ldb, n, kb, bf.data());
      else widen_block(b + p0 * ldb, ldb, kb, n, bf.data());
      sgemm(ta, tb, m, n, kb, af.data(), ta ? m : kb, bf.data(), tb ? kb : n, p0 == 0 ? 0.0f : 1.0f, cf.data(), n);
    }
  }
  const leaf<float, cpu> from{cf.data(), extents{m, n}, extents{n, index_t(1)}};
  executor<cpu>::assign(leaf<H, cpu>{c, extents{m, n}, extents{ldc, index_t(1)}}, cast_expr<H, leaf<float, cpu>>{from});
}

}  // namespace fusor::detail::cpu_blas
