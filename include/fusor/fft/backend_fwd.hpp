#pragma once
// fft_backend<B>: the transforms the FFT front end calls, one specialisation per backend (FFTW in
// backend/cpu/fft.hpp; cuFFT with the CUDA backend). Declared only here, so the front end never
// names an FFT library and a backend adds its transforms without touching it.
//
// A transform is described as FFTW's guru interface does: `rank` transform dimensions and
// `batch_rank` loop dimensions, each a size and an input and output stride in elements of the
// respective array (real elements for a real array, complex elements for a complex one). The
// last transform dimension of r2c / c2r is the halved one: its size is the real length n, and
// the complex side holds n / 2 + 1 elements along it.
//
// Every specialisation provides, for R = float and double:
//
//   static void c2c(const fft_geometry& g, const std::complex<R>* in, std::complex<R>* out, int sign);
//       unnormalised DFT, sign -1 forward, +1 backward; in == out (with equal strides) is allowed.
//   static void r2c(const fft_geometry& g, const R* in, std::complex<R>* out);     // in is preserved
//   static void c2r(const fft_geometry& g, std::complex<R>* in, R* out);           // in is destroyed
//   static fft::plan_cache_stats cache_stats();  static void set_cache_capacity(std::size_t);
//   static void clear_cache();
//
// Input strides are positive or zero (zero only on batch dimensions); the caller copies any
// other layout. Sizes are positive on transform dimensions and may be zero on batch ones.
#include <cstddef>
#include <optional>
#include <utility>

#include "../core/backend.hpp"
#include "../core/config.hpp"
#include "../core/context.hpp"

namespace fusor {

namespace fft {
/// One dimension of a transform or of its batch loop.
struct fft_dim {
  index_t n = 0;
  index_t in_stride = 0;
  index_t out_stride = 0;
  friend bool operator==(const fft_dim&, const fft_dim&) = default;
};
/// Transform dimensions (outermost first) and batch dimensions.
struct fft_geometry {
  int rank = 0;
  int batch_rank = 0;
  fft_dim dims[max_rank]{};
  fft_dim batch[max_rank]{};

  /// Product of the transform sizes (the N of the normalisation).
  index_t transform_size() const {
    index_t p = 1;
    for (int k = 0; k < rank; ++k) p *= dims[k].n;
    return p;
  }
  /// Number of transforms in the batch.
  index_t batch_size() const {
    index_t p = 1;
    for (int k = 0; k < batch_rank; ++k) p *= batch[k].n;
    return p;
  }
  friend bool operator==(const fft_geometry& a, const fft_geometry& b) {
    if (a.rank != b.rank || a.batch_rank != b.batch_rank) return false;
    for (int k = 0; k < a.rank; ++k)
      if (!(a.dims[k] == b.dims[k])) return false;
    for (int k = 0; k < a.batch_rank; ++k)
      if (!(a.batch[k] == b.batch[k])) return false;
    return true;
  }
};

/// Counters of a backend's plan cache.
struct plan_cache_stats {
  std::size_t size = 0;      ///< plans held now
  std::size_t capacity = 0;  ///< plans held at most (the least recently used is evicted first)
  long hits = 0;             ///< lookups that found a plan
  long misses = 0;           ///< lookups that made one
};
}  // namespace fft

template <class B>
struct fft_backend;

/// A backend with Fourier transforms in this translation unit.
template <class B>
concept fft_capable_backend = requires { sizeof(fft_backend<B>); };

namespace fft {

/// How long FFTW may search for a fast algorithm when it first sees a transform (FFTW's flags).
/// estimate (the default) plans in microseconds from heuristics and never touches the data;
/// measure and above time candidate algorithms on scratch buffers (seconds for large
/// transforms, once per cached plan) and can be saved and reloaded as wisdom. cuFFT has no
/// such choice and ignores it.
enum class planning { estimate, measure, patient, exhaustive };

/// Plans that backend B makes on this thread while the scope lives use effort p, whatever the
/// process-wide setting (fft::set_planning) says; the previous effort comes back at the end. A
/// long computation (a template-matching scan) measures its plans without changing the effort
/// of other threads. A setter of this thread's context<B>::fft_planning; a backend without
/// planning choices ignores it.
template <class B>
class planning_scope {
 public:
  explicit planning_scope(planning p) {
    if constexpr (requires { current_context<B>().fft_planning; })
      previous_ = std::exchange(current_context<B>().fft_planning, p);
  }
  ~planning_scope() {
    if constexpr (requires { current_context<B>().fft_planning; }) current_context<B>().fft_planning = previous_;
  }
  planning_scope(const planning_scope&) = delete;
  planning_scope& operator=(const planning_scope&) = delete;

 private:
  std::optional<planning> previous_{};
};

/// Transforms that backend B runs on this thread while the scope lives use at most n threads of
/// their own (n >= 1), whatever fft::set_threads says; the previous setting comes back at the
/// end. Work that is already spread over threads (a scan's rotations) runs each transform on its
/// own thread, with plans made for one thread. A setter of this thread's
/// context<B>::fft_threads; a backend without the setting ignores it.
template <class B>
class threads_scope {
 public:
  explicit threads_scope(int n) {
    if constexpr (requires { current_context<B>().fft_threads; })
      previous_ = std::exchange(current_context<B>().fft_threads, n < 1 ? 1 : n);
  }
  ~threads_scope() {
    if constexpr (requires { current_context<B>().fft_threads; }) current_context<B>().fft_threads = previous_;
  }
  threads_scope(const threads_scope&) = delete;
  threads_scope& operator=(const threads_scope&) = delete;

 private:
  int previous_ = 0;
};

}  // namespace fft
}  // namespace fusor
