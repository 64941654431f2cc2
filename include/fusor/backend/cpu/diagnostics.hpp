#pragma once
// g++ 12 reports -Wuninitialized / -Wmaybe-uninitialized inside its own AVX-512 intrinsics
// (avx512fintrin.h declares `__m512i __Y = __Y;` as an "undefined" register: GCC bug 105593,
// fixed in g++ 13) wherever xsimd's avx512 kernels are inlined: about 1 400 lines for a program
// that evaluates a few expressions with -Wall -march=native on an AVX-512 host. The warnings are
// false positives, so the cpu backend's SIMD headers silence exactly these two where fusor
// instantiates its loops; users keep every warning for their own code (the pragmas are popped at
// the end of each header, and diagnostics in inlined code follow the inlining site's state).
#if defined(__GNUC__) && !defined(__clang__)
#define FUSOR_SIMD_DIAGNOSTICS_BEGIN                                \
  _Pragma("GCC diagnostic push")                                    \
  _Pragma("GCC diagnostic ignored \"-Wuninitialized\"")             \
  _Pragma("GCC diagnostic ignored \"-Wmaybe-uninitialized\"")
#define FUSOR_SIMD_DIAGNOSTICS_END _Pragma("GCC diagnostic pop")
#else
#define FUSOR_SIMD_DIAGNOSTICS_BEGIN
#define FUSOR_SIMD_DIAGNOSTICS_END
#endif
