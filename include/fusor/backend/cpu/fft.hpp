#pragma once
// fft_backend<cpu>: FFTW3 (float and double) behind a bounded, thread-safe plan cache.
//
// A plan is made once per (kind, precision, geometry, in-place, alignment, threads, effort) and
// run on any arrays of that description with FFTW's new-array execute functions, which are
// thread-safe; the planner is not, so planning, destroying plans and the wisdom calls hold one
// process-wide mutex. Plans live in an LRU list of `plan_cache_capacity()` entries held by
// shared_ptr, so a plan evicted by one thread while another executes it is destroyed only when
// the second is done.
//
// Only this header names fftw3.h: the front end (fusor/fft) sees fft_backend<B> alone.
#include <fftw3.h>

#include <algorithm>
#include <atomic>
#include <complex>
#include <cstdint>
#include <cstring>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <type_traits>
#include <unordered_map>

#include "../../core/backend.hpp"
#include "../../core/config.hpp"
#include "../../core/error.hpp"
#include "../../fft/backend_fwd.hpp"
#include "../../fft/plan_cache.hpp"
#include "parallel.hpp"

#if defined(FUSOR_INSTRUMENT)
namespace fusor::instrument {
inline std::atomic<long> fft_executions{0};  ///< transforms executed by the cpu FFT backend
}  // namespace fusor::instrument
#define FUSOR_COUNT_FFT_EXECUTION() (++::fusor::instrument::fft_executions)
#else
#define FUSOR_COUNT_FFT_EXECUTION() ((void)0)
#endif

namespace fusor {

namespace detail::fftw {

enum class kind : int { c2c_forward, c2c_backward, r2c, c2r };

inline std::recursive_mutex& planner_mutex() {
  static std::recursive_mutex m;
  return m;
}
inline std::atomic<int> planning_effort{int(fft::planning::estimate)};
inline std::atomic<int> thread_setting{0};  // 0: fusor's cpu thread count (set_num_threads)
// Transforms below this many elements (all of a batch together) run on one thread: starting
// FFTW's threads costs more than it saves.
inline constexpr index_t threaded_threshold = index_t(1) << 15;

inline unsigned effort_flags(fft::planning p) {
  switch (p) {
    case fft::planning::measure: return FFTW_MEASURE;
    case fft::planning::patient: return FFTW_PATIENT;
    case fft::planning::exhaustive: return FFTW_EXHAUSTIVE;
    default: return FFTW_ESTIMATE;
  }
}

inline void init_threads_once() {
  static const bool done = [] {
    if (!fftw_init_threads() || !fftwf_init_threads())
      throw fft_error("fusor: FFTW's thread support failed to initialise (fftw_init_threads returned 0)");
    return true;
  }();
  (void)done;
}

struct plan_key {
  int what = 0;       // kind
  int precision = 0;  // sizeof(R)
  fft::fft_geometry g;
  bool in_place = false;
  int align_in = 0, align_out = 0;
  int threads = 1;
  unsigned flags = 0;
  friend bool operator==(const plan_key&, const plan_key&) = default;
};
struct plan_key_hash {
  std::size_t operator()(const plan_key& k) const noexcept {
    std::uint64_t h = 1469598103934665603ull;
    auto mix = [&](std::uint64_t v) { h = (h ^ v) * 1099511628211ull; };
    mix(std::uint64_t(k.what));
    mix(std::uint64_t(k.precision));
    mix(std::uint64_t(k.g.rank));
    mix(std::uint64_t(k.g.batch_rank));
    for (int i = 0; i < k.g.rank; ++i) {
      mix(std::uint64_t(k.g.dims[i].n));
      mix(std::uint64_t(k.g.dims[i].in_stride));
      mix(std::uint64_t(k.g.dims[i].out_stride));
    }
    for (int i = 0; i < k.g.batch_rank; ++i) {
      mix(std::uint64_t(k.g.batch[i].n));
      mix(std::uint64_t(k.g.batch[i].in_stride));
      mix(std::uint64_t(k.g.batch[i].out_stride));
    }
    mix(std::uint64_t(k.in_place) | std::uint64_t(k.align_in) << 8 | std::uint64_t(k.align_out) << 16);
    mix(std::uint64_t(k.threads));
    mix(std::uint64_t(k.flags));
    return std::size_t(h);
  }
};

/// An FFTW plan of either precision; destroyed under the planner lock.
struct plan_holder {
  void* plan = nullptr;
  bool single = false;
  plan_holder(void* p, bool s) : plan(p), single(s) {}
  plan_holder(const plan_holder&) = delete;
  plan_holder& operator=(const plan_holder&) = delete;
  ~plan_holder() {
    std::lock_guard lock(planner_mutex());
    if (single) fftwf_destroy_plan(static_cast<fftwf_plan>(plan));
    else fftw_destroy_plan(static_cast<fftw_plan>(plan));
  }
};

class plan_cache : public fusor::detail::lru_plan_cache<plan_key, plan_key_hash, plan_holder, std::recursive_mutex> {
 public:
  plan_cache() : lru_plan_cache(planner_mutex()) {}
  static plan_cache& instance() {
    static plan_cache c;
    return c;
  }
};

// FFTW's two precisions behind one name.
template <class R>
struct api;
template <>
struct api<double> {
  using complex = fftw_complex;
  using plan = fftw_plan;
  using iodim = fftw_iodim64;
  static int alignment_of(void* p) { return fftw_alignment_of(static_cast<double*>(p)); }
  static void* malloc(std::size_t n) { return fftw_malloc(n); }
  static void free(void* p) { fftw_free(p); }
  static void plan_with_nthreads(int n) { fftw_plan_with_nthreads(n); }
  static plan guru_dft(int r, const iodim* d, int hr, const iodim* hd, complex* i, complex* o, int s, unsigned f) {
    return fftw_plan_guru64_dft(r, d, hr, hd, i, o, s, f);
  }
  static plan guru_r2c(int r, const iodim* d, int hr, const iodim* hd, double* i, complex* o, unsigned f) {
    return fftw_plan_guru64_dft_r2c(r, d, hr, hd, i, o, f);
  }
  static plan guru_c2r(int r, const iodim* d, int hr, const iodim* hd, complex* i, double* o, unsigned f) {
    return fftw_plan_guru64_dft_c2r(r, d, hr, hd, i, o, f);
  }
  static void exec_dft(void* p, complex* i, complex* o) { fftw_execute_dft(static_cast<plan>(p), i, o); }
  static void exec_r2c(void* p, double* i, complex* o) { fftw_execute_dft_r2c(static_cast<plan>(p), i, o); }
  static void exec_c2r(void* p, complex* i, double* o) { fftw_execute_dft_c2r(static_cast<plan>(p), i, o); }
};
template <>
struct api<float> {
  using complex = fftwf_complex;
  using plan = fftwf_plan;
  using iodim = fftwf_iodim64;
  static int alignment_of(void* p) { return fftwf_alignment_of(static_cast<float*>(p)); }
  static void* malloc(std::size_t n) { return fftwf_malloc(n); }
  static void free(void* p) { fftwf_free(p); }
  static void plan_with_nthreads(int n) { fftwf_plan_with_nthreads(n); }
  static plan guru_dft(int r, const iodim* d, int hr, const iodim* hd, complex* i, complex* o, int s, unsigned f) {
    return fftwf_plan_guru64_dft(r, d, hr, hd, i, o, s, f);
  }
  static plan guru_r2c(int r, const iodim* d, int hr, const iodim* hd, float* i, complex* o, unsigned f) {
    return fftwf_plan_guru64_dft_r2c(r, d, hr, hd, i, o, f);
  }
  static plan guru_c2r(int r, const iodim* d, int hr, const iodim* hd, complex* i, float* o, unsigned f) {
    return fftwf_plan_guru64_dft_c2r(r, d, hr, hd, i, o, f);
  }
  static void exec_dft(void* p, complex* i, complex* o) { fftwf_execute_dft(static_cast<plan>(p), i, o); }
  static void exec_r2c(void* p, float* i, complex* o) { fftwf_execute_dft_r2c(static_cast<plan>(p), i, o); }
  static void exec_c2r(void* p, complex* i, float* o) { fftwf_execute_dft_c2r(static_cast<plan>(p), i, o); }
};

/// Elements spanned by one side of a layout (largest offset + 1).
inline index_t span(const fft::fft_geometry& g, bool input, index_t last_dim_n) {
  index_t off = 0;
  auto add = [&](const fft::fft_dim& d, index_t n) { off += (n - 1) * (input ? d.in_stride : d.out_stride); };
  for (int k = 0; k < g.rank; ++k) add(g.dims[k], k == g.rank - 1 ? last_dim_n : g.dims[k].n);
  for (int k = 0; k < g.batch_rank; ++k) add(g.batch[k], g.batch[k].n);
  return off + 1;
}

/// FFTW scratch memory with a chosen alignment offset (measuring planners overwrite their arrays,
/// so they plan here, on memory that matches the real arrays' alignment).
template <class R>
struct scratch {
  void* base = nullptr;
  char* at = nullptr;
  scratch(std::size_t bytes, int align_offset) {
    base = api<R>::malloc(bytes + 64);
    if (!base) throw fft_error("fusor: out of memory for FFTW's planning scratch (" + std::to_string(bytes) + " bytes)");
    at = static_cast<char*>(base) + align_offset;
  }
  scratch(const scratch&) = delete;
  scratch& operator=(const scratch&) = delete;
  ~scratch() { api<R>::free(base); }
};

inline std::string describe(const fft::fft_geometry& g) {
  std::string s = "sizes (";
  for (int k = 0; k < g.rank; ++k) s += (k ? ", " : "") + std::to_string(g.dims[k].n);
  s += "), batch (";
  for (int k = 0; k < g.batch_rank; ++k) s += (k ? ", " : "") + std::to_string(g.batch[k].n);
  return s + ")";
}

inline int threads_for_transform(const fft::fft_geometry& g) {
  if (g.transform_size() * g.batch_size() < threaded_threshold) return 1;
  if (const int own = current_context<cpu>().fft_threads; own > 0) return own;
  const int t = thread_setting.load();
  return t > 0 ? t : num_threads();
}

/// Plans (or finds) and runs one transform. In and Out are R or std::complex<R>.
template <class R, class In, class Out>
void run(kind what, const fft::fft_geometry& g, In* in, Out* out) {
  using A = api<R>;
  static_assert(sizeof(std::complex<R>) == sizeof(typename A::complex), "std::complex and FFTW's complex differ");
  if (g.batch_size() == 0) return;
  FUSOR_COUNT_FFT_EXECUTION();
  plan_key key;
  key.what = int(what);
  key.precision = int(sizeof(R));
  key.g = g;
  key.in_place = static_cast<const void*>(in) == static_cast<const void*>(out);
  key.align_in = A::alignment_of(const_cast<void*>(static_cast<const void*>(in)));
  key.align_out = A::alignment_of(static_cast<void*>(out));
  key.threads = threads_for_transform(g);
  // a deterministic context plans by estimate: a measured plan depends on timings
  const context<cpu>& ctx = current_context<cpu>();
  const fft::planning effort = ctx.deterministic ? fft::planning::estimate
                                                 : ctx.fft_planning.value_or(fft::planning(planning_effort.load()));
  key.flags = effort_flags(effort);

  auto make = [&]() -> plan_cache::plan_ptr {
    typename A::iodim dims[max_rank], batch[max_rank];
    for (int k = 0; k < g.rank; ++k) dims[k] = {g.dims[k].n, g.dims[k].in_stride, g.dims[k].out_stride};
    for (int k = 0; k < g.batch_rank; ++k) batch[k] = {g.batch[k].n, g.batch[k].in_stride, g.batch[k].out_stride};
    init_threads_once();  // FFTW wants this before any planning with its threading library linked
    A::plan_with_nthreads(key.threads);
    // estimate never touches the arrays, so it plans on the real ones; measuring planners write
    // to theirs, so they get scratch arrays of the same span and alignment
    const index_t n_last = g.dims[g.rank - 1].n;
    const index_t in_last = what == kind::c2r ? n_last / 2 + 1 : n_last;
    const index_t out_last = what == kind::r2c ? n_last / 2 + 1 : n_last;
    void* pin = const_cast<void*>(static_cast<const void*>(in));
    void* pout = static_cast<void*>(out);
    std::unique_ptr<scratch<R>> sin, sout;
    if (effort != fft::planning::estimate) {
      const std::size_t bin = std::size_t(span(g, true, in_last)) * sizeof(In);
      const std::size_t bout = std::size_t(span(g, false, out_last)) * sizeof(Out);
      if (key.in_place) {
        sin = std::make_unique<scratch<R>>(std::max(bin, bout), key.align_in);
        pin = pout = sin->at;
      } else {
        sin = std::make_unique<scratch<R>>(bin, key.align_in);
        sout = std::make_unique<scratch<R>>(bout, key.align_out);
        pin = sin->at;
        pout = sout->at;
      }
    }
    const unsigned flags = key.flags | (what == kind::c2r ? FFTW_DESTROY_INPUT : 0u);
    typename A::plan p = nullptr;
    using C = typename A::complex;
    switch (what) {
      case kind::c2c_forward:
      case kind::c2c_backward:
        p = A::guru_dft(g.rank, dims, g.batch_rank, batch, static_cast<C*>(pin), static_cast<C*>(pout),
                        what == kind::c2c_forward ? FFTW_FORWARD : FFTW_BACKWARD, flags);
        break;
      case kind::r2c:
        p = A::guru_r2c(g.rank, dims, g.batch_rank, batch, static_cast<R*>(pin), static_cast<C*>(pout), flags);
        break;
      case kind::c2r:
        p = A::guru_c2r(g.rank, dims, g.batch_rank, batch, static_cast<C*>(pin), static_cast<R*>(pout), flags);
        break;
    }
    if (!p)
      throw fft_error("fusor: FFTW could not plan the transform (" + describe(g) +
                      "); expected positive transform sizes and a layout FFTW supports");
    return std::make_shared<const plan_holder>(static_cast<void*>(p), std::is_same_v<R, float>);
  };
  const plan_cache::plan_ptr plan = plan_cache::instance().get(key, make);
  using C = typename A::complex;
  switch (what) {
    case kind::c2c_forward:
    case kind::c2c_backward:
      A::exec_dft(plan->plan, reinterpret_cast<C*>(const_cast<std::remove_const_t<In>*>(in)), reinterpret_cast<C*>(out));
      break;
    case kind::r2c:
      A::exec_r2c(plan->plan, reinterpret_cast<R*>(const_cast<std::remove_const_t<In>*>(in)), reinterpret_cast<C*>(out));
      break;
    case kind::c2r:
      A::exec_c2r(plan->plan, reinterpret_cast<C*>(const_cast<std::remove_const_t<In>*>(in)), reinterpret_cast<R*>(out));
      break;
  }
}

}  // namespace detail::fftw

template <>
struct fft_backend<cpu> {
  static constexpr const char* name = "FFTW3";

  template <class R>
  static void c2c(const fft::fft_geometry& g, const std::complex<R>* in, std::complex<R>* out, int sign) {
    using detail::fftw::kind;
    detail::fftw::run<R>(sign < 0 ? kind::c2c_forward : kind::c2c_backward, g, in, out);
  }
  template <class R>
  static void r2c(const fft::fft_geometry& g, const R* in, std::complex<R>* out) {
    detail::fftw::run<R>(detail::fftw::kind::r2c, g, in, out);
  }
  template <class R>
  static void c2r(const fft::fft_geometry& g, std::complex<R>* in, R* out) {
    detail::fftw::run<R>(detail::fftw::kind::c2r, g, in, out);
  }

  static fft::plan_cache_stats cache_stats() { return detail::fftw::plan_cache::instance().stats(); }
  static void set_cache_capacity(std::size_t n) { detail::fftw::plan_cache::instance().set_capacity(n); }
  static void clear_cache() { detail::fftw::plan_cache::instance().clear(); }
};

namespace fft {

/// The planning effort for transforms not planned yet (a setting of the whole process; plans
/// already cached keep theirs, and the effort is part of the cache key).
inline void set_planning(planning p) { fusor::detail::fftw::planning_effort = int(p); }
inline planning planning_effort() { return planning(fusor::detail::fftw::planning_effort.load()); }

/// Threads FFTW may use for one large transform (0, the default: fusor's set_num_threads
/// setting). Transforms under 32768 elements (a whole batch together) always use one.
inline void set_threads(int n) { fusor::detail::fftw::thread_setting = std::max(0, n); }
inline int threads() {
  const int t = fusor::detail::fftw::thread_setting.load();
  return t > 0 ? t : num_threads();
}

/// FFTW's accumulated wisdom (what measuring planners learnt) for float or double transforms,
/// as FFTW's text format.
template <class R>
std::string export_wisdom() {
  static_assert(std::is_same_v<R, float> || std::is_same_v<R, double>, "fusor: FFTW wisdom exists for float and double");
  std::string s;
  auto put = [](char c, void* p) { static_cast<std::string*>(p)->push_back(c); };
  std::lock_guard lock(fusor::detail::fftw::planner_mutex());
  if constexpr (std::is_same_v<R, float>) fftwf_export_wisdom(put, &s);
  else fftw_export_wisdom(put, &s);
  return s;
}
/// Imports wisdom exported earlier (by this or another run on the same machine and FFTW build),
/// so measuring planners skip the measurements they already made. Text FFTW cannot read raises
/// fft_error.
template <class R>
void import_wisdom(const std::string& text) {
  static_assert(std::is_same_v<R, float> || std::is_same_v<R, double>, "fusor: FFTW wisdom exists for float and double");
  std::lock_guard lock(fusor::detail::fftw::planner_mutex());
  const int ok = std::is_same_v<R, float> ? fftwf_import_wisdom_from_string(text.c_str())
                                          : fftw_import_wisdom_from_string(text.c_str());
  if (!ok)
    throw fft_error(std::string("fusor: expected FFTW ") + (std::is_same_v<R, float> ? "float" : "double") +
                    " wisdom text (as export_wisdom returns), got " + std::to_string(text.size()) +
                    " characters FFTW could not read starting \"" + text.substr(0, 40) + "\"");
}
/// Forgets all wisdom (plans already cached are kept).
inline void forget_wisdom() {
  std::lock_guard lock(fusor::detail::fftw::planner_mutex());
  fftw_forget_wisdom();
  fftwf_forget_wisdom();
}

}  // namespace fft

}  // namespace fusor
