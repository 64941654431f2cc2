// VSA operations at d = 10 000 (HoloVec's table) for FHRR, MAP (MAP-B), BSC, BSDC, HRR, VTB, MBAT, GHRR, MCR, CGR
// and block codes, each beside its floor in the same run (scripts/bench vsa prints the ratios, then HoloVec's and torchhd's
// times for the same work from bench/peers/vsa_peers.py). One thread throughout.
//   fusor_vsa_random/<m>:     one random vector (vsa::random, Philox keyed by (seed, row))
//   floor_vsa_random/<m>:     writing the vector's bytes (std::fill): the memory floor
//   fusor_vsa_bind/<m>:       bind of two vectors (a new array)
//   floor_vsa_bind/<m>:       a hand loop (product / XOR) into a preallocated row; HRR: the three
//                             FFTW transforms (two r2c, one c2r) with cached plans and the product
//   fusor_vsa_bundle100/<m>:  bundle of a (100, d) batch with the model's normalisation
//   floor_vsa_bundle100/<m>:  a hand loop summing the 100 rows (BSC: counting the bits of the
//                             words, then the majority)
//   fusor_vsa_sim1000/<m>:    similarity of a (1000, d) batch against one vector: (1000)
//   fusor_vsa_search1/<m>:    one query against a 1000-item codebook: (1000)
//   floor_vsa_search1/<m>:    cblas_sgemv over the same rows (FHRR: the interleaved reals); BSC: a
//                             hand XOR+popcount loop
//   fusor_vsa_search1000/<m>: 1000 queries against a 1000-item codebook: (1000, 1000)
//   floor_vsa_search1000/<m>: cblas_sgemm of the same shapes (FHRR: k = 2d); BSC: popcount
//                             throughput, Q·N·words popcounts of L1-resident words
//   hand_vsa_search1000/bsc:  the plain XOR+popcount triple loop a user would write
//   fusor_vsa_fpe1000/<m>:    fractional power encoding (sinc kernel) of 1000 scalars, FHRR and HRR
//   fusor_vsa_fpe1e6/<m>:     the same for 10^6 scalars at d = 128
//   hand_vsa_fpe*/fhrr:       a plain loop of std::polar over the frequencies into a preallocated batch
//   floor_vsa_fpe*/<m>:       FHRR: writing the output (std::fill); HRR: the batched FFTW c2r alone
//   fusor_vsa_level1000/map, fusor_vsa_thermometer1000/bsc: 1000 values through a 100-level codebook
//   floor_vsa_level1000/map, floor_vsa_thermometer1000/bsc: a hand loop of level index and memcpy of the row
//   fusor_vsa_ngrams/map:     trigrams of a 100-vector sequence bundled (torchhd's ngrams); hand_: a plain loop
//   fusor_vsa_digits_encode/map: the 1797 digits as records of 64 level-encoded pixels bound to keys;
//                             hand_: a plain loop of key * level row sums and signs
//   fusor_vsa_digits_train/map: a centroid classifier's one-pass fit and one OnlineHD pass over them
//   fusor_vsa_digits_predict/map: the class of each; floor_: cblas_sgemm against the centroids and an argmax
//   fusor_vsa_{bind,bundle100,sim1000,search1000}/{hrr,map_c}_float16: HRR and MAP-C over float16
//                             rows (vsa::hrr_of, vsa::map_c_of) beside their float32 rows
//   fusor_vsa_sdm_write/map, fusor_vsa_sdm_read/map: a sparse distributed memory of 20 000 MAP-B
//                             locations at d = 1000, 1% active: 1000 pairs written, 1000 addresses
//                             read; floor_vsa_sdm/map: the (1000, 20 000) address similarities alone
//                             (cblas_sgemm), which every SDM computes
// The models VTB (d = 100 x 100), MCR and CGR (q = 16) and block codes (BSBC: 10 000 blocks of 64)
// have the same rows. Their floors: VTB's bind is cblas_sgemm of the two 100 x 100 matrices; the
// modular models' bind, bundle and similarity floors are hand loops of the same arithmetic (a
// modular distance is not bilinear: there is no BLAS call to compare with), bundle for MCR summing
// table phasors and rounding atan2, for CGR and BSBC counting values for the mode. BSDC (XOR-bound,
// density 1/sqrt(d) = 1%) has BSC's floors: an XOR loop, counting the bits of 100 rows, popcount
// loops (its bundle also ranks the counts to keep 100 bits; its cosine counts AND, not XOR). GHRR is 1111
// blocks of 3 x 3 (9999 complex numbers); its bind floor is a hand loop of the 3 x 3 complex
// products, its bundle floor the plain sum (without the polar factor of each block, which fusor's
// bundle adds), its similarity floors the BLAS calls on interleaved reals as FHRR's. MBAT (K = 4
// shifts, HoloVec's defaults) has HRR's rows; its bind floor is a hand loop given the code vectors
// made once (as HoloVec keeps them): cblas_sgemv for the 4 projections, the softmax, the 4 shifted
// copies added in two contiguous stretches each, cblas_sdot for the norm and the scaling.
#include <benchmark/benchmark.h>
#include <cblas.h>
#include <fftw3.h>

#include <algorithm>
#include <cmath>
#include <bit>
#include <complex>
#include <cstring>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include <fusor/fusor.hpp>

namespace {

using fusor::array;
using fusor::index_t;
namespace vsa = fusor::vsa;

constexpr index_t dim = 10'000;

void one_thread() {
  fusor::set_num_threads(1);
  fusor::set_blas_num_threads(1);
}

/// The model at d = 10 000: GHRR as 1111 blocks of 3 x 3 (9999 complex numbers).
template <class M>
M model_at() {
  if constexpr (std::is_same_v<M, vsa::ghrr>) return M(dim / 9, 3);
  else return M(dim);
}

/// The bit-packed models: BSC and the sparse BSDC (XOR-bound), whose floors are the same bit loops.
template <class M>
constexpr bool packed = std::is_same_v<M, vsa::bsc> || std::is_same_v<M, vsa::bsdc>;

template <class M>
constexpr bool modular = std::is_same_v<M, vsa::mcr> || std::is_same_v<M, vsa::cgr> || std::is_same_v<M, vsa::bsbc>;

/// The modular distance (or equality) sums of one row against `n` rows: the hand loop floors.
template <class T>
void modular_sweep(const T* q, const T* x, index_t n, index_t w, int mod, bool equal, float* out) {
  for (index_t j = 0; j < n; ++j) {
    std::int32_t s = 0;
    const T* r = x + j * w;
    for (index_t i = 0; i < w; ++i) {
      if (equal) {
        s += q[i] == r[i];
      } else {
        std::int32_t t = std::int32_t(q[i]) - std::int32_t(r[i]);
        t += t < 0 ? mod : 0;
        s += std::min(t, mod - t);
      }
    }
    out[std::size_t(j)] = float(s);
  }
}

template <class M>
void fusor_random(benchmark::State& st) {
  one_thread();
  const M m = model_at<M>();
  std::uint64_t seed = 0;
  for (auto _ : st) benchmark::DoNotOptimize(vsa::random(m, 1, ++seed));
}
template <class M>
void floor_random(benchmark::State& st) {
  const M m = model_at<M>();
  std::vector<typename M::value_type> out(static_cast<std::size_t>(m.width()));
  for (auto _ : st) {
    std::fill(out.begin(), out.end(), typename M::value_type(1));
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
}

template <class M>
void fusor_bind(benchmark::State& st) {
  one_thread();
  const M m = model_at<M>();
  const auto a = vsa::random(m, 1, 1), b = vsa::random(m, 1, 2);
  for (auto _ : st) benchmark::DoNotOptimize(vsa::bind(m, a, b));
}

/// FFTW's r2c of both operands, the product of spectra, one c2r (plans made once): HRR's floor.
struct hrr_fftw {
  float *a, *b, *out;
  fftwf_complex *fa, *fb;
  fftwf_plan pa, pb, pi;
  explicit hrr_fftw(index_t d) {
    a = fftwf_alloc_real(std::size_t(d));
    b = fftwf_alloc_real(std::size_t(d));
    out = fftwf_alloc_real(std::size_t(d));
    fa = fftwf_alloc_complex(std::size_t(d / 2 + 1));
    fb = fftwf_alloc_complex(std::size_t(d / 2 + 1));
    pa = fftwf_plan_dft_r2c_1d(int(d), a, fa, FFTW_ESTIMATE);
    pb = fftwf_plan_dft_r2c_1d(int(d), b, fb, FFTW_ESTIMATE);
    pi = fftwf_plan_dft_c2r_1d(int(d), fa, out, FFTW_ESTIMATE);
    for (index_t i = 0; i < d; ++i) a[i] = b[i] = float(i % 7) - 3.0f;
  }
  ~hrr_fftw() {
    fftwf_destroy_plan(pa);
    fftwf_destroy_plan(pb);
    fftwf_destroy_plan(pi);
    fftwf_free(a);
    fftwf_free(b);
    fftwf_free(out);
    fftwf_free(fa);
    fftwf_free(fb);
  }
};

template <class M>
void floor_bind(benchmark::State& st) {
  const M m = model_at<M>();
  using T = typename M::value_type;
  if constexpr (std::is_same_v<M, vsa::hrr>) {
    hrr_fftw f(dim);
    const index_t h = dim / 2 + 1;
    for (auto _ : st) {
      fftwf_execute(f.pa);
      fftwf_execute(f.pb);
      for (index_t k = 0; k < h; ++k) {
        const float re = f.fa[k][0] * f.fb[k][0] - f.fa[k][1] * f.fb[k][1];
        const float im = f.fa[k][0] * f.fb[k][1] + f.fa[k][1] * f.fb[k][0];
        f.fa[k][0] = re / float(dim);
        f.fa[k][1] = im / float(dim);
      }
      fftwf_execute(f.pi);
      benchmark::DoNotOptimize(f.out);
      benchmark::ClobberMemory();
    }
  } else if constexpr (std::is_same_v<M, vsa::vtb>) {  // sqrt(m) A B^T: one 100 x 100 x 100 GEMM
    one_thread();
    const auto a = vsa::random(m, 1, 1), b = vsa::random(m, 1, 2);
    std::vector<float> out(static_cast<std::size_t>(dim));
    const int s = int(m.side());
    for (auto _ : st) {
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, s, s, s, 10.0f, a.data(), s, b.data(), s, 0.0f, out.data(), s);
      benchmark::DoNotOptimize(out.data());
      benchmark::ClobberMemory();
    }
  } else if constexpr (std::is_same_v<M, vsa::mbat>) {  // the weights from stored code vectors, then the mix
    one_thread();
    const auto a = vsa::random(m, 1, 1), b = vsa::random(m, 1, 2);
    const auto u = m.code_vectors();
    std::vector<float> out(static_cast<std::size_t>(dim));
    const float *pa = a.data(), *pb = b.data();
    for (auto _ : st) {
      float s[4];
      cblas_sgemv(CblasRowMajor, CblasNoTrans, 4, int(dim), 1.0f, u.data(), int(dim), pa, 1, 0.0f, s, 1);
      double w[4], top = m.temperature() * s[0], total = 0;
      for (int k = 1; k < 4; ++k) top = std::max(top, m.temperature() * s[k]);
      for (int k = 0; k < 4; ++k) total += w[k] = std::exp(m.temperature() * s[k] - top);
      float* o = out.data();
      std::fill(o, o + dim, 0.0f);
      for (int k = 0; k < 4; ++k) {
        const float wk = float(w[k] / total);
        const index_t sh = m.shifts()[std::size_t(k)];
        for (index_t t = 0; t < sh; ++t) o[t] += wk * pb[t - sh + dim];
        for (index_t t = sh; t < dim; ++t) o[t] += wk * pb[t - sh];
      }
      const float scale = 1.0f / std::sqrt(cblas_sdot(int(dim), o, 1, o, 1));
      for (index_t t = 0; t < dim; ++t) o[t] *= scale;
      benchmark::DoNotOptimize(o);
      benchmark::ClobberMemory();
    }
  } else if constexpr (std::is_same_v<M, vsa::ghrr>) {  // a 3 x 3 complex product per block
    const auto a = vsa::random(m, 1, 1), b = vsa::random(m, 1, 2);
    std::vector<T> out(static_cast<std::size_t>(m.width()));
    const T *pa = a.data(), *pb = b.data();
    for (auto _ : st) {
      for (index_t j = 0; j < m.dim(); ++j) {
        const T *x = pa + 9 * j, *y = pb + 9 * j;
        T* o = out.data() + 9 * j;
        for (int r = 0; r < 3; ++r)
          for (int c = 0; c < 3; ++c) o[3 * r + c] = x[3 * r] * y[c] + x[3 * r + 1] * y[3 + c] + x[3 * r + 2] * y[6 + c];
      }
      benchmark::DoNotOptimize(out.data());
      benchmark::ClobberMemory();
    }
  } else {
    const auto a = vsa::random(m, 1, 1), b = vsa::random(m, 1, 2);
    std::vector<T> out(static_cast<std::size_t>(m.width()));
    const T *pa = a.data(), *pb = b.data();
    for (auto _ : st) {
      T* o = out.data();
      for (index_t i = 0; i < m.width(); ++i) {
        if constexpr (packed<M>) {
          o[i] = pa[i] ^ pb[i];
        } else if constexpr (modular<M>) {
          const int q = int(m.modulus()), t = int(pa[i]) + int(pb[i]);
          o[i] = T(t >= q ? t - q : t);
        } else {
          o[i] = pa[i] * pb[i];
        }
      }
      benchmark::DoNotOptimize(o);
      benchmark::ClobberMemory();
    }
  }
}

template <class M>
void fusor_bundle100(benchmark::State& st) {
  one_thread();
  const M m = model_at<M>();
  const auto x = vsa::random(m, 100, 3);
  for (auto _ : st) benchmark::DoNotOptimize(vsa::bundle(m, x));
}
template <class M>
void floor_bundle100(benchmark::State& st) {
  const M m = model_at<M>();
  using T = typename M::value_type;
  const auto x = vsa::random(m, 100, 3);
  const T* p = x.data();
  const index_t w = m.width();
  if constexpr (packed<M>) {
    std::vector<std::int32_t> counts(static_cast<std::size_t>(64 * w));
    std::vector<std::uint64_t> out(static_cast<std::size_t>(w));
    for (auto _ : st) {
      std::fill(counts.begin(), counts.end(), 0);
      for (index_t r = 0; r < 100; ++r)
        for (index_t i = 0; i < w; ++i) {
          const std::uint64_t v = p[r * w + i];
          for (int k = 0; k < 64; ++k) counts[std::size_t(64 * i + k)] += std::int32_t((v >> k) & 1u);
        }
      for (index_t i = 0; i < w; ++i) {
        std::uint64_t o = 0;
        for (int k = 0; k < 64; ++k) o |= std::uint64_t(counts[std::size_t(64 * i + k)] > 50) << k;
        out[std::size_t(i)] = o;
      }
      benchmark::DoNotOptimize(out.data());
      benchmark::ClobberMemory();
    }
  } else if constexpr (std::is_same_v<M, vsa::mcr>) {  // table phasors summed, atan2 rounded
    const int q = int(m.modulus());
    std::vector<double> c(static_cast<std::size_t>(q)), sn(static_cast<std::size_t>(q));
    for (int k = 0; k < q; ++k) {
      c[std::size_t(k)] = std::cos(2 * 3.141592653589793 * k / q);
      sn[std::size_t(k)] = std::sin(2 * 3.141592653589793 * k / q);
    }
    std::vector<double> sc(static_cast<std::size_t>(w)), ss(static_cast<std::size_t>(w));
    std::vector<T> out(static_cast<std::size_t>(w));
    for (auto _ : st) {
      std::fill(sc.begin(), sc.end(), 0.0);
      std::fill(ss.begin(), ss.end(), 0.0);
      for (index_t r = 0; r < 100; ++r)
        for (index_t i = 0; i < w; ++i) {
          sc[std::size_t(i)] += c[p[r * w + i]];
          ss[std::size_t(i)] += sn[p[r * w + i]];
        }
      for (index_t i = 0; i < w; ++i) {
        const long k = std::lround(std::atan2(ss[std::size_t(i)], sc[std::size_t(i)]) * q / (2 * 3.141592653589793));
        out[std::size_t(i)] = T(((k % q) + q) % q);
      }
      benchmark::DoNotOptimize(out.data());
      benchmark::ClobberMemory();
    }
  } else if constexpr (modular<M>) {  // the mode: counts of each value per position
    const int q = int(m.modulus());
    std::vector<std::int32_t> counts(static_cast<std::size_t>(q));
    std::vector<T> out(static_cast<std::size_t>(w));
    for (auto _ : st) {
      for (index_t i = 0; i < w; ++i) {
        std::fill(counts.begin(), counts.end(), 0);
        T best = p[i];
        for (index_t r = 0; r < 100; ++r) ++counts[p[r * w + i]];
        for (index_t r = 0; r < 100; ++r)
          if (counts[p[r * w + i]] > counts[best]) best = p[r * w + i];
        out[std::size_t(i)] = best;
      }
      benchmark::DoNotOptimize(out.data());
      benchmark::ClobberMemory();
    }
  } else {
    std::vector<T> out(static_cast<std::size_t>(w));
    for (auto _ : st) {
      std::copy(p, p + w, out.begin());
      for (index_t r = 1; r < 100; ++r)
        for (index_t i = 0; i < w; ++i) out[std::size_t(i)] += p[r * w + i];
      benchmark::DoNotOptimize(out.data());
      benchmark::ClobberMemory();
    }
  }
}

/// 1000 vectors against one: as the queries (sim1000, (1000, d) vs (1, d)) or as the items
/// (search1, (1, d) vs (1000, d)); the same work and the same floor.
template <class M, bool BatchFirst>
void fusor_one_vs_1000(benchmark::State& st) {
  one_thread();
  const M m = model_at<M>();
  const auto x = vsa::random(m, 1000, 4), q = vsa::random(m, 1, 5);
  for (auto _ : st) {
    if constexpr (BatchFirst) benchmark::DoNotOptimize(vsa::similarity(m, x, q));
    else benchmark::DoNotOptimize(vsa::similarity(m, q, x));
  }
}
/// The floats per row a BLAS call sees (FHRR, GHRR: interleaved re, im).
template <class M>
index_t float_width(const M& m) {
  return fusor::is_complex_v<typename M::value_type> ? 2 * m.width() : m.width();
}
template <class M>
void floor_search1(benchmark::State& st) {
  one_thread();
  const M m = model_at<M>();
  const auto x = vsa::random(m, 1000, 4), q = vsa::random(m, 1, 5);
  std::vector<float> out(1000);
  if constexpr (packed<M>) {
    const index_t w = m.width();
    for (auto _ : st) {
      for (index_t j = 0; j < 1000; ++j) {
        int c = 0;
        for (index_t i = 0; i < w; ++i) c += std::popcount(q.data()[i] ^ x.data()[j * w + i]);
        out[std::size_t(j)] = float(c);
      }
      benchmark::DoNotOptimize(out.data());
      benchmark::ClobberMemory();
    }
  } else if constexpr (modular<M>) {
    for (auto _ : st) {
      modular_sweep(q.data(), x.data(), 1000, dim, int(m.modulus()), M::block_code, out.data());
      benchmark::DoNotOptimize(out.data());
      benchmark::ClobberMemory();
    }
  } else {
    const index_t k = float_width(m);
    const float* px = reinterpret_cast<const float*>(x.data());
    const float* pq = reinterpret_cast<const float*>(q.data());
    for (auto _ : st) {
      cblas_sgemv(CblasRowMajor, CblasNoTrans, 1000, int(k), 1.0f, px, int(k), pq, 1, 0.0f, out.data(), 1);
      benchmark::DoNotOptimize(out.data());
      benchmark::ClobberMemory();
    }
  }
}

template <class M>
void fusor_search1000(benchmark::State& st) {
  one_thread();
  const M m = model_at<M>();
  const auto x = vsa::random(m, 1000, 4), q = vsa::random(m, 1000, 6);
  for (auto _ : st) benchmark::DoNotOptimize(vsa::similarity(m, q, x));
}
template <class M>
void floor_search1000(benchmark::State& st) {
  one_thread();
  const M m = model_at<M>();
  if constexpr (packed<M>) {
    // popcount throughput: as many XOR+popcounts as the search, on words that stay in L1
    const auto x = vsa::random(m, 2, 4);
    const index_t w = m.width();
    const std::uint64_t *a = x.data(), *b = x.data() + w;
    for (auto _ : st) {
      std::int64_t total = 0;
      for (index_t pair = 0; pair < 1000 * 1000; ++pair) {
        int c = 0;
        for (index_t i = 0; i < w; ++i) c += std::popcount(a[i] ^ b[i]);
        total += c;
        benchmark::DoNotOptimize(total);
      }
    }
  } else if constexpr (modular<M>) {  // the hand loop over every pair
    const auto x = vsa::random(m, 1000, 4), q = vsa::random(m, 1000, 6);
    std::vector<float> out(1000 * 1000);
    for (auto _ : st) {
      for (index_t i = 0; i < 1000; ++i)
        modular_sweep(q.data() + i * dim, x.data(), 1000, dim, int(m.modulus()), M::block_code, out.data() + i * 1000);
      benchmark::DoNotOptimize(out.data());
      benchmark::ClobberMemory();
    }
  } else {
    const auto x = vsa::random(m, 1000, 4), q = vsa::random(m, 1000, 6);
    std::vector<float> out(1000 * 1000);
    const index_t k = float_width(m);
    const float* px = reinterpret_cast<const float*>(x.data());
    const float* pq = reinterpret_cast<const float*>(q.data());
    for (auto _ : st) {
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, 1000, 1000, int(k), 1.0f, pq, int(k), px, int(k), 0.0f,
                  out.data(), 1000);
      benchmark::DoNotOptimize(out.data());
      benchmark::ClobberMemory();
    }
  }
}
void hand_search1000_bsc(benchmark::State& st) {
  const vsa::bsc m(dim);
  const auto x = vsa::random(m, 1000, 4), q = vsa::random(m, 1000, 6);
  const index_t w = m.width();
  std::vector<std::int32_t> out(1000 * 1000);
  for (auto _ : st) {
    for (index_t i = 0; i < 1000; ++i)
      for (index_t j = 0; j < 1000; ++j) {
        int c = 0;
        for (index_t t = 0; t < w; ++t) c += std::popcount(q.data()[i * w + t] ^ x.data()[j * w + t]);
        out[std::size_t(i * 1000 + j)] = c;
      }
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
}

// ---- encoders -----------------------------------------------------------------------------------

/// n evenly spread values in [0, 1] (the encoders' range here), in a scrambled order.
array<double> unit_values(index_t n) {
  std::vector<double> v(static_cast<std::size_t>(n));
  for (index_t i = 0; i < n; ++i) v[std::size_t(i)] = double((i * 7919) % n) / double(n > 1 ? n - 1 : 1);
  return array<double>(std::span<const double>(v), fusor::extents{n});
}

/// Fractional power encoding of n scalars at dimension d (st.range(0), st.range(1)).
template <class M>
void fusor_fpe(benchmark::State& st) {
  one_thread();
  const index_t n = st.range(0), d = st.range(1);
  const vsa::fractional_power_encoder<M> fp(M(d), 0.0, 1.0, 5, vsa::fpe_kernel::sinc, 4.0);
  const auto x = unit_values(n);
  for (auto _ : st) benchmark::DoNotOptimize(fp.encode(x));
}
/// What a user writes: a loop of std::polar over the frequencies, into a preallocated (n, d).
void hand_fpe(benchmark::State& st) {
  const index_t n = st.range(0), d = st.range(1);
  const vsa::fractional_power_encoder<vsa::fhrr> fp(vsa::fhrr(d), 0.0, 1.0, 5, vsa::fpe_kernel::sinc, 4.0);
  const auto x = unit_values(n);
  const float* w = fp.frequencies().data();
  std::vector<std::complex<float>> out(static_cast<std::size_t>(n * d));
  for (auto _ : st) {
    for (index_t i = 0; i < n; ++i) {
      const float t = float(x.data()[i]);
      for (index_t j = 0; j < d; ++j) out[std::size_t(i * d + j)] = std::polar(1.0f, w[j] * t);
    }
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
}
/// The floor of FHRR's encoding: writing the (n, d) complex output (std::fill); HRR's: the batched
/// FFTW c2r of the (n, d / 2 + 1) phasor spectra (planned once, FFTW_ESTIMATE as fusor's plans).
template <class M>
void floor_fpe(benchmark::State& st) {
  const index_t n = st.range(0), d = st.range(1);
  if constexpr (std::is_same_v<M, vsa::fhrr>) {
    std::vector<std::complex<float>> out(static_cast<std::size_t>(n * d));
    for (auto _ : st) {
      std::fill(out.begin(), out.end(), std::complex<float>(1, 0));
      benchmark::DoNotOptimize(out.data());
      benchmark::ClobberMemory();
    }
  } else {
    const index_t k = d / 2 + 1;
    auto* spec = fftwf_alloc_complex(std::size_t(n * k));
    float* out = fftwf_alloc_real(std::size_t(n * d));
    const int len = int(d);
    fftwf_plan p = fftwf_plan_many_dft_c2r(1, &len, int(n), spec, nullptr, 1, int(k), out, nullptr, 1, int(d), FFTW_ESTIMATE);
    for (index_t i = 0; i < n * k; ++i) {
      spec[i][0] = std::cos(0.001f * float(i));
      spec[i][1] = std::sin(0.001f * float(i));
    }
    for (auto _ : st) {
      fftwf_execute(p);  // (c2r overwrites its input: the spectra are fixed inputs only in shape)
      benchmark::DoNotOptimize(out);
      benchmark::ClobberMemory();
    }
    fftwf_destroy_plan(p);
    fftwf_free(spec);
    fftwf_free(out);
  }
}

/// Level (MAP-B, 100 levels) or thermometer (BSC, 100 levels) encoding of 1000 values at d = 10 000.
template <class M>
void fusor_levels1000(benchmark::State& st) {
  one_thread();
  const M m(dim);
  const auto enc = std::is_same_v<M, vsa::bsc> ? vsa::scalar_encoder<M>::thermometer(m, 100, 0.0, 1.0)
                                               : vsa::scalar_encoder<M>::level(m, 100, 0.0, 1.0, 3);
  const auto x = unit_values(1000);
  for (auto _ : st) benchmark::DoNotOptimize(enc.encode(x));
}
/// Its floor: a hand loop computing each value's level and copying that codebook row (memcpy).
template <class M>
void floor_levels1000(benchmark::State& st) {
  const M m(dim);
  const auto book = vsa::random(m, 100, 3);
  const auto x = unit_values(1000);
  const index_t w = m.width();
  std::vector<typename M::value_type> out(static_cast<std::size_t>(1000 * w));
  for (auto _ : st) {
    for (index_t i = 0; i < 1000; ++i) {
      const auto level = index_t(std::floor(x.data()[i] * 99.0 + 0.5));
      std::memcpy(out.data() + i * w, book.data() + level * w, std::size_t(w) * sizeof(typename M::value_type));
    }
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
}

/// n-grams (n = 3) of a sequence of 100 MAP-B vectors, bundled into one (torchhd's ngrams).
void fusor_ngrams(benchmark::State& st) {
  one_thread();
  const vsa::map_b m(dim);
  const auto x = vsa::random(m, 100, 9);
  for (auto _ : st) benchmark::DoNotOptimize(vsa::ngrams(m, x, 3));
}
/// A hand loop: each window's product of the rolled rows accumulated, then the sign.
void hand_ngrams(benchmark::State& st) {
  const vsa::map_b m(dim);
  const auto x = vsa::random(m, 100, 9);
  std::vector<float> acc(static_cast<std::size_t>(dim)), out(static_cast<std::size_t>(dim));
  const float* p = x.data();
  for (auto _ : st) {
    std::fill(acc.begin(), acc.end(), 0.0f);
    for (index_t w = 0; w + 3 <= 100; ++w) {
      const float *a = p + w * dim, *b = a + dim, *c = b + dim;  // permuted by 2, 1, 0
      for (index_t j = 0; j < dim; ++j) acc[std::size_t(j)] += a[(j + dim - 2) % dim] * b[(j + dim - 1) % dim] * c[j];
    }
    for (index_t j = 0; j < dim; ++j) out[std::size_t(j)] = acc[std::size_t(j)] > 0 ? 1.0f : -1.0f;
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
}

/// The digits (1797 images of 64 pixels) as records of level-encoded pixels, d = 10 000, MAP-B.
struct digits_data {
  vsa::map_b m{dim};
  array<std::uint8_t> images = fusor::load_npy<std::uint8_t, fusor::cpu>(std::string(FUSOR_DIGITS_DIR) + "/images.npy");
  array<std::int64_t> labels{fusor::cast<std::int64_t>(fusor::load_npy<std::uint8_t, fusor::cpu>(std::string(FUSOR_DIGITS_DIR) + "/labels.npy"))};
  vsa::scalar_encoder<vsa::map_b> pixel = vsa::scalar_encoder<vsa::map_b>::level(m, 17, 0.0, 16.0, 1);
  array<float> keys = vsa::random(m, 64, 2);
  index_t n = images.shape()[0];
  array<float> encode() const { return pixel.encode_record(keys, images); }
};
const digits_data& digits() {
  static const digits_data d;
  return d;
}
/// Encoding all 1797 images: scalar_encoder::encode_record, one pass.
void fusor_digits_encode(benchmark::State& st) {
  one_thread();
  const auto& d = digits();
  for (auto _ : st) benchmark::DoNotOptimize(d.encode());
}
/// A hand loop: for each image, the sum over pixels of key * level row, then the sign.
void hand_digits_encode(benchmark::State& st) {
  const auto& d = digits();
  const auto& book = d.pixel.levels().items();
  std::vector<float> acc(static_cast<std::size_t>(dim)), out(static_cast<std::size_t>(d.n * dim));
  for (auto _ : st) {
    for (index_t i = 0; i < d.n; ++i) {
      std::fill(acc.begin(), acc.end(), 0.0f);
      for (index_t p = 0; p < 64; ++p) {
        const float* k = d.keys.data() + p * dim;
        const float* v = book.data() + index_t(d.images.data()[i * 64 + p]) * dim;
        for (index_t j = 0; j < dim; ++j) acc[std::size_t(j)] += v[j] * k[j];
      }
      for (index_t j = 0; j < dim; ++j) out[std::size_t(i * dim + j)] = acc[std::size_t(j)] > 0 ? 1.0f : -1.0f;
    }
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
}
/// Training: one pass of centroid sums over the 1797 records, then one OnlineHD refinement pass.
void fusor_digits_train(benchmark::State& st) {
  one_thread();
  const auto& d = digits();
  const auto x = d.encode();
  for (auto _ : st) {
    vsa::centroid_classifier<vsa::map_b> c(d.m, 10);
    c.fit(x, d.labels);
    benchmark::DoNotOptimize(c.refine(x, d.labels));
  }
}
/// Inference: the class of each of the 1797 records.
void fusor_digits_predict(benchmark::State& st) {
  one_thread();
  const auto& d = digits();
  const auto x = d.encode();
  vsa::centroid_classifier<vsa::map_b> c(d.m, 10);
  c.fit(x, d.labels);
  for (auto _ : st) benchmark::DoNotOptimize(c.predict(x));
}
/// Inference's floor: cblas_sgemm of the (1797, d) records by the (10, d) centroids, then the argmax.
void floor_digits_predict(benchmark::State& st) {
  const auto& d = digits();
  const auto x = d.encode();
  vsa::centroid_classifier<vsa::map_b> c(d.m, 10);
  c.fit(x, d.labels);
  std::vector<float> s(static_cast<std::size_t>(d.n * 10));
  std::vector<std::int64_t> out(static_cast<std::size_t>(d.n));
  for (auto _ : st) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, int(d.n), 10, int(dim), 1.0f, x.data(), int(dim),
                c.centroids().data(), int(dim), 0.0f, s.data(), 10);
    for (index_t i = 0; i < d.n; ++i)
      out[std::size_t(i)] = std::max_element(s.begin() + i * 10, s.begin() + i * 10 + 10) - (s.begin() + i * 10);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
}

/// The SDM rows' memory: 20 000 MAP-B locations at d = 1000, 1% of them active per address.
constexpr index_t sdm_dim = 1000, sdm_locations = 20'000, sdm_pairs = 1000;
struct sdm_data {
  vsa::map_b m{sdm_dim};
  array<float> keys = vsa::random(m, sdm_pairs, 4), values = vsa::random(m, sdm_pairs, 5);
};
const sdm_data& sdm_inputs() {
  static const sdm_data d;
  return d;
}
/// Writing 1000 pairs into an empty memory (the memory made outside the timed region).
void fusor_sdm_write(benchmark::State& st) {
  one_thread();
  const auto& d = sdm_inputs();
  for (auto _ : st) {
    st.PauseTiming();
    vsa::sparse_distributed_memory<vsa::map_b> sdm(d.m, sdm_locations, 3, 0.01);
    st.ResumeTiming();
    sdm.write(d.keys, d.values);
    benchmark::DoNotOptimize(sdm.counters().data());
  }
}
/// Reading 1000 addresses of a memory holding the 1000 pairs.
void fusor_sdm_read(benchmark::State& st) {
  one_thread();
  const auto& d = sdm_inputs();
  vsa::sparse_distributed_memory<vsa::map_b> sdm(d.m, sdm_locations, 3, 0.01);
  sdm.write(d.keys, d.values);
  for (auto _ : st) benchmark::DoNotOptimize(sdm.read(d.keys));
}
/// The similarities of the 1000 addresses to the 20 000 locations: one cblas_sgemm.
void floor_sdm(benchmark::State& st) {
  const auto& d = sdm_inputs();
  const array<float> locations = vsa::random(d.m, sdm_locations, 3);
  std::vector<float> s(static_cast<std::size_t>(sdm_pairs * sdm_locations));
  for (auto _ : st) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, int(sdm_pairs), int(sdm_locations), int(sdm_dim), 1.0f,
                d.keys.data(), int(sdm_dim), locations.data(), int(sdm_dim), 0.0f, s.data(), int(sdm_locations));
    benchmark::DoNotOptimize(s.data());
    benchmark::ClobberMemory();
  }
}

template <class M>
void register_model(const std::string& name) {
  using benchmark::RegisterBenchmark;
  const auto us = benchmark::kMicrosecond, ms = benchmark::kMillisecond;
  RegisterBenchmark(("fusor_vsa_random/" + name).c_str(), fusor_random<M>)->Unit(us);
  RegisterBenchmark(("floor_vsa_random/" + name).c_str(), floor_random<M>)->Unit(us);
  RegisterBenchmark(("fusor_vsa_bind/" + name).c_str(), fusor_bind<M>)->Unit(us);
  RegisterBenchmark(("floor_vsa_bind/" + name).c_str(), floor_bind<M>)->Unit(us);
  RegisterBenchmark(("fusor_vsa_bundle100/" + name).c_str(), fusor_bundle100<M>)->Unit(us);
  RegisterBenchmark(("floor_vsa_bundle100/" + name).c_str(), floor_bundle100<M>)->Unit(us);
  RegisterBenchmark(("fusor_vsa_sim1000/" + name).c_str(), fusor_one_vs_1000<M, true>)->Unit(ms);
  RegisterBenchmark(("floor_vsa_sim1000/" + name).c_str(), floor_search1<M>)->Unit(ms);
  RegisterBenchmark(("fusor_vsa_search1/" + name).c_str(), fusor_one_vs_1000<M, false>)->Unit(ms);
  RegisterBenchmark(("floor_vsa_search1/" + name).c_str(), floor_search1<M>)->Unit(ms);
  RegisterBenchmark(("fusor_vsa_search1000/" + name).c_str(), fusor_search1000<M>)->Unit(ms);
  RegisterBenchmark(("floor_vsa_search1000/" + name).c_str(), floor_search1000<M>)->Unit(ms);
}

/// A model over 16-bit rows beside its float32 self (registered with register_model): the same
/// operations, half the bytes, each computed in float32 and rounded once.
template <class M>
void register_half_model(const std::string& name) {
  using benchmark::RegisterBenchmark;
  const auto us = benchmark::kMicrosecond, ms = benchmark::kMillisecond;
  RegisterBenchmark(("fusor_vsa_bind/" + name).c_str(), fusor_bind<M>)->Unit(us);
  RegisterBenchmark(("fusor_vsa_bundle100/" + name).c_str(), fusor_bundle100<M>)->Unit(us);
  RegisterBenchmark(("fusor_vsa_sim1000/" + name).c_str(), fusor_one_vs_1000<M, true>)->Unit(ms);
  RegisterBenchmark(("fusor_vsa_search1000/" + name).c_str(), fusor_search1000<M>)->Unit(ms);
}

}  // namespace

int main(int argc, char** argv) {
  register_model<vsa::fhrr>("fhrr");
  register_model<vsa::map_b>("map");
  register_half_model<vsa::map_b_of<fusor::float16>>("map_float16");
  register_model<vsa::bsc>("bsc");
  register_model<vsa::bsdc>("bsdc");
  register_model<vsa::hrr>("hrr");
  register_half_model<vsa::hrr_of<fusor::float16>>("hrr_float16");
  register_model<vsa::map_c>("map_c");
  register_half_model<vsa::map_c_of<fusor::float16>>("map_c_float16");
  register_model<vsa::vtb>("vtb");
  register_model<vsa::mbat>("mbat");
  register_half_model<vsa::mbat_of<fusor::float16>>("mbat_float16");
  register_model<vsa::ghrr>("ghrr");
  register_model<vsa::mcr>("mcr");
  register_model<vsa::cgr>("cgr");
  register_model<vsa::bsbc>("bsbc");
  benchmark::RegisterBenchmark("hand_vsa_search1000/bsc", hand_search1000_bsc)->Unit(benchmark::kMillisecond);
  {  // the encoders: FPE of 1000 scalars at d = 10 000 and of 10^6 at d = 128; levels of 1000 values
    using benchmark::RegisterBenchmark;
    const auto ms = benchmark::kMillisecond;
    for (auto [row, n, d] : {std::tuple{"fpe1000", 1000, 10000}, std::tuple{"fpe1e6", 1000000, 128}}) {
      const std::string r(row);
      RegisterBenchmark(("fusor_vsa_" + r + "/fhrr").c_str(), fusor_fpe<vsa::fhrr>)->Args({n, d})->Unit(ms);
      RegisterBenchmark(("hand_vsa_" + r + "/fhrr").c_str(), hand_fpe)->Args({n, d})->Unit(ms);
      RegisterBenchmark(("floor_vsa_" + r + "/fhrr").c_str(), floor_fpe<vsa::fhrr>)->Args({n, d})->Unit(ms);
      RegisterBenchmark(("fusor_vsa_" + r + "/hrr").c_str(), fusor_fpe<vsa::hrr>)->Args({n, d})->Unit(ms);
      RegisterBenchmark(("floor_vsa_" + r + "/hrr").c_str(), floor_fpe<vsa::hrr>)->Args({n, d})->Unit(ms);
    }
    RegisterBenchmark("fusor_vsa_level1000/map", fusor_levels1000<vsa::map_b>)->Unit(ms);
    RegisterBenchmark("floor_vsa_level1000/map", floor_levels1000<vsa::map_b>)->Unit(ms);
    RegisterBenchmark("fusor_vsa_thermometer1000/bsc", fusor_levels1000<vsa::bsc>)->Unit(ms);
    RegisterBenchmark("floor_vsa_thermometer1000/bsc", floor_levels1000<vsa::bsc>)->Unit(ms);
    RegisterBenchmark("fusor_vsa_ngrams/map", fusor_ngrams)->Unit(ms);
    RegisterBenchmark("hand_vsa_ngrams/map", hand_ngrams)->Unit(ms);
    RegisterBenchmark("fusor_vsa_digits_encode/map", fusor_digits_encode)->Unit(ms);
    RegisterBenchmark("hand_vsa_digits_encode/map", hand_digits_encode)->Unit(ms);
    RegisterBenchmark("fusor_vsa_digits_train/map", fusor_digits_train)->Unit(ms);
    RegisterBenchmark("fusor_vsa_digits_predict/map", fusor_digits_predict)->Unit(ms);
    RegisterBenchmark("floor_vsa_digits_predict/map", floor_digits_predict)->Unit(ms);
    RegisterBenchmark("fusor_vsa_sdm_write/map", fusor_sdm_write)->Unit(ms);
    RegisterBenchmark("fusor_vsa_sdm_read/map", fusor_sdm_read)->Unit(ms);
    RegisterBenchmark("floor_vsa_sdm/map", floor_sdm)->Unit(ms);
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
