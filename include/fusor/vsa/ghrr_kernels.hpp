#pragma once
// The kernels of GHRR, whose rows are D blocks of m x m complex matrices (row-major, complex
// elements interleaved as (re, im) floats): the random unitary blocks, products of blocks (bind,
// unbind, the left unbind), adjoints (the inverse) and the unitary polar factor (bundle's
// projection). Written once as generators (kernels.hpp): an output element is computed from its
// position, so a cuda thread computes a few elements and a cpu run whole blocks. Small matrix work
// (QR, inverses) is done in double in registers or on the stack: m is at most ghrr_max_side.
#include <cmath>
#include <complex>
#include <cstdint>

#include "kernels.hpp"

namespace fusor::vsa::detail {

/// The largest block side GHRR takes: the per-block scratch (a few m x m matrices of complex
/// doubles) lives on the stack of a cpu thread or a cuda thread.
inline constexpr index_t ghrr_max_side = 8;

struct cd {  // a complex double that compiles the same on host and device (std::complex's
             // operators are host functions)
  double re, im;
};
FUSOR_HD inline cd cmul(cd a, cd b) { return {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re}; }
FUSOR_HD inline cd cconj(cd a) { return {a.re, -a.im}; }
FUSOR_HD inline double cnorm(cd a) { return a.re * a.re + a.im * a.im; }

/// Float products and sums rounded one at a time on every backend: nvcc contracts a * b + c into a
/// fused multiply-add in device code unless told not to, the host build does not (-ffp-contract=off),
/// so the block products would differ in the last bit between cpu and cuda.
FUSOR_HD inline float mul_rn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}
FUSOR_HD inline float add_rn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fadd_rn(a, b);
#else
  return a + b;
#endif
}
FUSOR_HD inline float sub_rn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fsub_rn(a, b);
#else
  return a - b;
#endif
}

/// Modified Gram-Schmidt, done twice ("twice is enough"), on the columns of the m x m matrix a
/// (row-major, overwritten by Q). The R of this QR has a positive real diagonal, so Q is the unique
/// such factor: for a Ginibre matrix it is Haar-distributed (NumPy's QR followed by the phase
/// correction of R's diagonal gives the same Q). A column that vanishes (probability zero) is left
/// as the unit vector it would be for the identity.
FUSOR_HD inline void orthonormalise_columns(cd* a, index_t m) {
  for (index_t k = 0; k < m; ++k) {
    for (int pass = 0; pass < 2; ++pass)
      for (index_t i = 0; i < k; ++i) {
        cd p{0, 0};  // <q_i, a_k> = sum conj(q_i) a_k
        for (index_t r = 0; r < m; ++r) {
          const cd t = cmul(cconj(a[r * m + i]), a[r * m + k]);
          p.re += t.re;
          p.im += t.im;
        }
        for (index_t r = 0; r < m; ++r) {
          const cd t = cmul(p, a[r * m + i]);
          a[r * m + k].re -= t.re;
          a[r * m + k].im -= t.im;
        }
      }
    double n2 = 0;
    for (index_t r = 0; r < m; ++r) n2 += cnorm(a[r * m + k]);
    if (n2 > 1e-300) {
      const double inv = 1.0 / std::sqrt(n2);
      for (index_t r = 0; r < m; ++r) {
        a[r * m + k].re *= inv;
        a[r * m + k].im *= inv;
      }
    } else {
      for (index_t r = 0; r < m; ++r) a[r * m + k] = cd{r == k ? 1.0 : 0.0, 0.0};
    }
  }
}

/// The 32-bit words of Philox stream `stream` under `seed` from block `counter` on, one at a time.
struct philox_reader {
  std::uint64_t seed, stream, counter;
  philox_words w{};
  int used = 4;
  FUSOR_HD std::uint32_t next() {
    if (used == 4) {
      w = fusor::random::block_words(seed, stream, counter++);
      used = 0;
    }
    return w[used++];
  }
};

/// Random GHRR blocks, as HoloVec draws them: H = Q Lambda, Q a Haar unitary (QR of a complex
/// Ginibre matrix with standard normal real and imaginary parts, by Box-Muller), Lambda the diagonal
/// of m uniform phasors. `alpha` (the diagonality, in [0, 1]) pulls Q toward the identity: Q is
/// replaced by the unitary factor of (1 - alpha) Q + alpha I, so alpha = 1 gives diagonal, commuting
/// blocks (m interleaved FHRR vectors) and alpha = 0 the most non-commutative ones. Block j of row
/// i takes the Philox blocks j * per_matrix ... of stream (first_row + i): a row depends on (seed,
/// its index) only.
struct ghrr_draw {
  using value_type = std::complex<float>;
  std::uint64_t seed;
  index_t first_row, blocks, m;
  double alpha;
  FUSOR_HD index_t per_matrix() const { return (2 * m * m + m + 3) / 4; }
  FUSOR_HD void block(index_t row, index_t j, std::complex<float>* out) const {
    constexpr double two_pi = 6.28318530717958647692;
    philox_reader rd{seed, std::uint64_t(first_row + row), std::uint64_t(j * per_matrix())};
    cd a[ghrr_max_side * ghrr_max_side];
    for (index_t k = 0; k < m * m; ++k) {
      const double u1 = (double(rd.next()) + 1.0) * 0x1.0p-32;  // (0, 1]
      const double u2 = double(rd.next()) * 0x1.0p-32;
      const double r = std::sqrt(-2.0 * std::log(u1)), t = two_pi * u2;
      a[k] = cd{r * std::cos(t), r * std::sin(t)};
    }
    orthonormalise_columns(a, m);
    if (alpha >= 1.0) {
      for (index_t k = 0; k < m * m; ++k) a[k] = cd{k % (m + 1) == 0 ? 1.0 : 0.0, 0.0};
    } else if (alpha > 0.0) {
      for (index_t k = 0; k < m * m; ++k) {
        a[k].re = (1.0 - alpha) * a[k].re + (k % (m + 1) == 0 ? alpha : 0.0);
        a[k].im = (1.0 - alpha) * a[k].im;
      }
      orthonormalise_columns(a, m);
    }
    for (index_t c = 0; c < m; ++c) {  // Q Lambda: column c times e^{i theta_c}
      const double t = two_pi * double(rd.next()) * 0x1.0p-32;
      const cd ph{std::cos(t), std::sin(t)};
      for (index_t r = 0; r < m; ++r) {
        const cd v = cmul(a[r * m + c], ph);
        out[r * m + c] = std::complex<float>(float(v.re), float(v.im));
      }
    }
  }
  FUSOR_HD void fill(index_t first, value_type* out, index_t count) const {
    const index_t mm = m * m, w = blocks * mm;
    std::complex<float> blk[ghrr_max_side * ghrr_max_side];
    index_t i = 0;
    while (i < count) {
      const index_t p = first + i, row = p / w, e = p % mm;
      block(row, (p % w) / mm, blk);
      index_t n = mm - e;
      if (n > count - i) n = count - i;
      for (index_t k = 0; k < n; ++k) out[i + k] = blk[e + k];
      i += n;
    }
  }
};

/// Blockwise products of two batches of rows: output block j of row r is op(A_j) op(B_j), where A
/// is row (r % na) of a and B row (r % nb) of b (na, nb: 1 or the output's row count), and op is
/// the identity or the adjoint (conjugate transpose). bind is A B, unbind A B^H, the left unbind
/// A^H B. Accumulated in float, in a fixed order, each operation rounded (the same bits on every
/// backend).
struct block_product {
  using value_type = std::complex<float>;
  const float *a, *b;  // interleaved (re, im)
  index_t m, width, na, nb;
  bool adjoint_a, adjoint_b;
  /// S: the side known at compile time (the inner loop unrolls, the index arithmetic folds), or 0.
  template <index_t S>
  FUSOR_HD void run(index_t first, value_type* out, index_t count) const {
    const index_t side = S > 0 ? S : m, mm = side * side;
    // A[r, k] at ab[r * ar + k * ak], conjugated by sa; B[k, c] at bb[k * bk + c * bc], by sb
    const index_t ar = adjoint_a ? 1 : side, ak = adjoint_a ? side : 1;
    const index_t bk = adjoint_b ? 1 : side, bc = adjoint_b ? side : 1;
    const float sa = adjoint_a ? -1.0f : 1.0f, sb = adjoint_b ? -1.0f : 1.0f;
    // positions advance by counters: a division per element would cost more than its products
    index_t row = first / width, base = first % width, r = (base % mm) / side, c = base % side;
    base -= base % mm;  // the block's first element
    const float *ab = a + 2 * ((row % na) * width + base), *bb = b + 2 * ((row % nb) * width + base);
    for (index_t i = 0; i < count; ++i) {
      float re = 0, im = 0;
      for (index_t k = 0; k < side; ++k) {
        const index_t ia = r * ar + k * ak, ib = k * bk + c * bc;
        const float xr = ab[2 * ia], xi = sa * ab[2 * ia + 1], yr = bb[2 * ib], yi = sb * bb[2 * ib + 1];
        re = add_rn(re, sub_rn(mul_rn(xr, yr), mul_rn(xi, yi)));
        im = add_rn(im, add_rn(mul_rn(xr, yi), mul_rn(xi, yr)));
      }
      out[i] = std::complex<float>(re, im);
      if (++c == side) {
        c = 0;
        if (++r == side) {  // the next block
          r = 0;
          ab += 2 * mm;
          bb += 2 * mm;
          if ((base += mm) >= width) {  // the next row
            base = 0;
            ++row;
            ab = a + 2 * (row % na) * width;
            bb = b + 2 * (row % nb) * width;
          }
        }
      }
    }
  }
  FUSOR_HD void fill(index_t first, value_type* out, index_t count) const {
    switch (m) {
      case 2: run<2>(first, out, count); break;
      case 3: run<3>(first, out, count); break;
      case 4: run<4>(first, out, count); break;
      default: run<0>(first, out, count);
    }
  }
};

/// The adjoint (conjugate transpose) of every block: GHRR's exact inverse.
struct block_adjoint {
  using value_type = std::complex<float>;
  const float* x;  // interleaved (re, im)
  index_t m;
  FUSOR_HD void fill(index_t first, value_type* out, index_t count) const {
    const index_t mm = m * m;
    for (index_t i = 0; i < count; ++i) {
      const index_t p = first + i, base = p - p % mm, r = (p % mm) / m, c = p % m;
      const index_t s = base + c * m + r;
      out[i] = std::complex<float>(x[2 * s], -x[2 * s + 1]);
    }
  }
};

/// The inverse of the m x m complex matrix a (row-major) into inv by Gauss-Jordan elimination with
/// partial pivoting; false when a pivot is negligible against the matrix's largest element.
FUSOR_HD inline bool invert(const cd* a, cd* inv, index_t m) {
  cd w[ghrr_max_side * ghrr_max_side];
  double big = 0;
  for (index_t k = 0; k < m * m; ++k) {
    w[k] = a[k];
    inv[k] = cd{k % (m + 1) == 0 ? 1.0 : 0.0, 0.0};
    big = cnorm(a[k]) > big ? cnorm(a[k]) : big;
  }
  if (!(big > 0)) return false;
  for (index_t c = 0; c < m; ++c) {
    index_t piv = c;
    for (index_t r = c + 1; r < m; ++r)
      if (cnorm(w[r * m + c]) > cnorm(w[piv * m + c])) piv = r;
    if (!(cnorm(w[piv * m + c]) > 1e-24 * big)) return false;
    if (piv != c)
      for (index_t k = 0; k < m; ++k) {
        const cd t = w[c * m + k], u = inv[c * m + k];
        w[c * m + k] = w[piv * m + k];
        inv[c * m + k] = inv[piv * m + k];
        w[piv * m + k] = t;
        inv[piv * m + k] = u;
      }
    const cd p = w[c * m + c];
    const double pn = cnorm(p);
    const cd pinv{p.re / pn, -p.im / pn};
    for (index_t k = 0; k < m; ++k) {
      w[c * m + k] = cmul(w[c * m + k], pinv);
      inv[c * m + k] = cmul(inv[c * m + k], pinv);
    }
    for (index_t r = 0; r < m; ++r) {
      if (r == c) continue;
      const cd f = w[r * m + c];
      for (index_t k = 0; k < m; ++k) {
        const cd s = cmul(f, w[c * m + k]), t = cmul(f, inv[c * m + k]);
        w[r * m + k].re -= s.re;
        w[r * m + k].im -= s.im;
        inv[r * m + k].re -= t.re;
        inv[r * m + k].im -= t.im;
      }
    }
  }
  return true;
}

/// The unitary polar factor U of every block X = U P (the unitary matrix nearest X in the Frobenius
/// norm, what HoloVec computes by SVD as U V^H), by Higham's scaled Newton iteration
/// X <- (g X + X^{-H} / g) / 2 with g = sqrt(|X^{-1}|_F / |X|_F), in double, until the step is
/// below 1e-14 of the norm (quadratic convergence: a handful of steps). A singular block (the zero
/// block of a + negative(a), for one) has no unique polar factor and becomes the identity block,
/// as FHRR's zero becomes the phasor 1.
struct block_polar {
  using value_type = std::complex<float>;
  const float* x;  // interleaved (re, im)
  index_t m;
  FUSOR_HD void block(const float* src, std::complex<float>* out) const {
    const index_t mm = m * m;
    cd u[ghrr_max_side * ghrr_max_side], inv[ghrr_max_side * ghrr_max_side];
    for (index_t k = 0; k < mm; ++k) u[k] = cd{double(src[2 * k]), double(src[2 * k + 1])};
    bool ok = true;
    for (int it = 0; it < 100; ++it) {
      if (!invert(u, inv, m)) {
        ok = false;
        break;
      }
      double nu = 0, ni = 0;
      for (index_t k = 0; k < mm; ++k) {
        nu += cnorm(u[k]);
        ni += cnorm(inv[k]);
      }
      const double g = std::sqrt(std::sqrt(ni / nu)), step_scale = 0.5;
      double step = 0, norm = 0;
      for (index_t r = 0; r < m; ++r)
        for (index_t c = 0; c < m; ++c) {
          const cd x = u[r * m + c], y = cconj(inv[c * m + r]);  // X^{-H}[r, c] = conj(X^{-1}[c, r])
          const cd v{step_scale * (g * x.re + y.re / g), step_scale * (g * x.im + y.im / g)};
          step += cnorm(cd{v.re - x.re, v.im - x.im});
          norm += cnorm(v);
          u[r * m + c] = v;
        }
      if (step <= 1e-28 * norm) break;
    }
    for (index_t k = 0; k < mm; ++k)
      out[k] = ok ? std::complex<float>(float(u[k].re), float(u[k].im))
                  : std::complex<float>(k % (m + 1) == 0 ? 1.0f : 0.0f, 0.0f);
  }
  FUSOR_HD void fill(index_t first, value_type* out, index_t count) const {
    const index_t mm = m * m;
    std::complex<float> blk[ghrr_max_side * ghrr_max_side];
    index_t i = 0;
    while (i < count) {
      const index_t p = first + i, base = p - p % mm, e = p % mm;
      block(x + 2 * base, blk);
      index_t n = mm - e;
      if (n > count - i) n = count - i;
      for (index_t k = 0; k < n; ++k) out[i + k] = blk[e + k];
      i += n;
    }
  }
};

}  // namespace fusor::vsa::detail
