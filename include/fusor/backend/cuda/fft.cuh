#pragma once
// fft_backend<cuda>: the FFT front end's transforms on cuFFT. The front end's guru-style geometry
// (any number of batch dimensions, a stride per dimension) is mapped onto cuFFT's advanced layout
// (cufftMakePlanMany64): transform dimensions nested inside each other with one innermost stride
// (inembed/istride), and one batch dimension (idist). Batch dimensions that are not one block are
// merged where their strides allow, and otherwise looped on the host over one plan. A side whose
// transform dimensions are not nested (a transposed input, say) is first packed into a
// contiguous buffer with one kernel (or computed into one and scattered back), so every layout
// the front end hands over works. Plans are cached per (geometry, precision, kind, device,
// stream) in an LRU cache like FFTW's.
#include <cufft.h>

#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

#include "../../fft/backend_fwd.hpp"
#include "../../fft/plan_cache.hpp"
#include "executor.cuh"

namespace fusor::detail::cufft {

inline const char* status_name(cufftResult r) {
  switch (r) {
    case CUFFT_SUCCESS: return "CUFFT_SUCCESS";
    case CUFFT_INVALID_PLAN: return "CUFFT_INVALID_PLAN";
    case CUFFT_ALLOC_FAILED: return "CUFFT_ALLOC_FAILED";
    case CUFFT_INVALID_VALUE: return "CUFFT_INVALID_VALUE";
    case CUFFT_INTERNAL_ERROR: return "CUFFT_INTERNAL_ERROR";
    case CUFFT_EXEC_FAILED: return "CUFFT_EXEC_FAILED";
    case CUFFT_SETUP_FAILED: return "CUFFT_SETUP_FAILED";
    case CUFFT_INVALID_SIZE: return "CUFFT_INVALID_SIZE";
    case CUFFT_INVALID_DEVICE: return "CUFFT_INVALID_DEVICE";
    case CUFFT_NO_WORKSPACE: return "CUFFT_NO_WORKSPACE";
    case CUFFT_NOT_IMPLEMENTED: return "CUFFT_NOT_IMPLEMENTED";
    case CUFFT_NOT_SUPPORTED: return "CUFFT_NOT_SUPPORTED";
    default: return "unknown cuFFT status";
  }
}
inline void check(cufftResult r, const char* call, const std::string& what = {}) {
  if (r != CUFFT_SUCCESS)
    throw cuda_error(int(r), call,
                     std::string("fusor: ") + call + " failed: " + status_name(r) + (what.empty() ? "" : " (" + what + ")"));
}

enum class kind : int { c2c, r2c, c2r };

/// cuFFT's advanced layout for one plan.
struct layout {
  int rank = 0;
  long long n[3]{}, inembed[3]{}, onembed[3]{};
  long long istride = 1, ostride = 1, idist = 1, odist = 1, batch = 1;
  friend bool operator==(const layout&, const layout&) = default;
};

struct plan_key {
  layout l;
  kind what;
  bool single;
  int device;
  cudaStream_t stream;
  // cudaStreamPerThread is one handle value for every thread: a plan (and its work area) must not
  // be executed by two threads at once, so plans are also per thread
  std::thread::id thread;
  friend bool operator==(const plan_key&, const plan_key&) = default;
};
struct plan_key_hash {
  std::size_t operator()(const plan_key& k) const {
    std::size_t h = std::size_t(k.what) * 31 + std::size_t(k.single) * 7 + std::size_t(k.device) * 131 +
                    std::hash<const void*>{}(static_cast<const void*>(k.stream)) ^ std::hash<std::thread::id>{}(k.thread);
    auto mix = [&](long long v) { h = h * 1000003u ^ std::hash<long long>{}(v); };
    mix(k.l.rank);
    for (int i = 0; i < 3; ++i) mix(k.l.n[i]), mix(k.l.inembed[i]), mix(k.l.onembed[i]);
    mix(k.l.istride), mix(k.l.ostride), mix(k.l.idist), mix(k.l.odist), mix(k.l.batch);
    return h;
  }
};

struct plan_holder {
  cufftHandle plan{};
  explicit plan_holder(cufftHandle p) : plan(p) {}
  plan_holder(const plan_holder&) = delete;
  plan_holder& operator=(const plan_holder&) = delete;
  ~plan_holder() { cufftDestroy(plan); }
};

inline std::mutex& cache_mutex() {
  static std::mutex m;
  return m;
}
class plan_cache : public lru_plan_cache<plan_key, plan_key_hash, plan_holder, std::mutex> {
 public:
  plan_cache() : lru_plan_cache(cache_mutex()) {}
  static plan_cache& instance() {
    static plan_cache c;
    return c;
  }
};

/// The nested form of transform dimensions with strides s and logical lengths len, or false
/// when cuFFT's inembed/istride cannot express them.
inline bool nest(int rank, const index_t* s, const index_t* len, long long* embed, long long& inner) {
  for (int k = 0; k < rank; ++k)
    if (s[k] <= 0) return false;
  inner = s[rank - 1];
  embed[0] = len[0];
  for (int k = 1; k < rank; ++k) {
    if (s[k - 1] % s[k] != 0 || s[k - 1] / s[k] < len[k]) return false;
    embed[k] = s[k - 1] / s[k];
  }
  return true;
}

/// Contiguous strides (in elements) for dimensions `lens` placed after batch dimensions `blens`;
/// returns the number of elements. Each transform block is padded to an even count, so that every
/// batch of a real buffer starts on a complex element's boundary (see complex_aligned).
inline index_t contiguous(int rank, const index_t* lens, int brank, const index_t* blens, index_t* st, index_t* bst) {
  index_t acc = 1;
  for (int k = rank - 1; k >= 0; --k) st[k] = acc, acc *= lens[k];
  if (brank > 0) acc += acc % 2;
  for (int k = brank - 1; k >= 0; --k) bst[k] = acc, acc *= blens[k];
  return acc;
}

/// Whether every batch of a real side (R elements from p, batch strides bst) starts on a
/// complex<R> boundary, as cuFFT requires.
template <class R>
bool complex_aligned(const void* p, int brank, const index_t* bst) {
  if (reinterpret_cast<std::uintptr_t>(p) % (2 * sizeof(R)) != 0) return false;
  for (int k = 0; k + 1 < brank; ++k)  // the host-looped batch dimensions (cuFFT's own may be odd)
    if (bst[k] % 2 != 0) return false;
  return true;
}

/// A leaf over memory laid out by (batch dims, transform dims) with the given strides.
template <class T>
leaf<T, cuda> side_leaf(T* p, int rank, const index_t* lens, const index_t* st, int brank, const index_t* blens,
                        const index_t* bst) {
  leaf<T, cuda> l{p, {}, {}};
  for (int k = 0; k < brank; ++k) l.shape.push_back(blens[k]), l.strides.push_back(bst[k]);
  for (int k = 0; k < rank; ++k) l.shape.push_back(lens[k]), l.strides.push_back(st[k]);
  return l;
}

/// A one-point transform along every axis is the identity: out = in, converted as astype does
/// (r2c: imaginary part zero; c2r: the real part). One pass.
template <class In, class Out>
void one_point(int rank, const In* in, const index_t* is, Out* out, const index_t* os, int brank, const index_t* bn,
               const index_t* bis, const index_t* bos) {
  const index_t ones[3] = {1, 1, 1};
  const leaf<In, cuda> src = side_leaf(const_cast<In*>(in), rank, ones, is, brank, bn, bis);
  executor<cuda>::assign(side_leaf(out, rank, ones, os, brank, bn, bos), cast_expr<Out, leaf<In, cuda>>{src});
}

template <class R, class In, class Out>
void run(kind what, const fft::fft_geometry& g0, const In* in, Out* out, int sign) {
  static_assert(sizeof(std::complex<R>) == sizeof(cufftComplex) * (std::is_same_v<R, float> ? 1 : 2),
                "fusor: std::complex and cuFFT's complex differ");
  if (g0.rank > 3)
    throw fft_error("fusor: cuFFT transforms at most 3 axes at once; got " + std::to_string(g0.rank) +
                    " (transform the axes in groups of at most 3, or move the array to the cpu)");
  const int rank = g0.rank, brank0 = g0.batch_rank;
  index_t n[3], in_len[3], out_len[3], is[3], os[3];
  for (int k = 0; k < rank; ++k) {
    n[k] = in_len[k] = out_len[k] = g0.dims[k].n;
    is[k] = g0.dims[k].in_stride;
    os[k] = g0.dims[k].out_stride;
  }
  if (what == kind::c2r) in_len[rank - 1] = n[rank - 1] / 2 + 1;
  if (what == kind::r2c) out_len[rank - 1] = n[rank - 1] / 2 + 1;
  // batch dimensions: drop size-1 ones, merge neighbours that are one block on both sides
  index_t bn[max_rank], bis[max_rank], bos[max_rank];
  int brank = 0;
  for (int k = 0; k < brank0; ++k) {
    const fft::fft_dim& d = g0.batch[k];
    if (d.n == 1) continue;
    if (brank > 0 && bis[brank - 1] == d.in_stride * d.n && bos[brank - 1] == d.out_stride * d.n) {
      bn[brank - 1] *= d.n;
      bis[brank - 1] = d.in_stride;
      bos[brank - 1] = d.out_stride;
    } else {
      bn[brank] = d.n, bis[brank] = d.in_stride, bos[brank] = d.out_stride;
      ++brank;
    }
  }
  index_t points = 1;
  for (int k = 0; k < rank; ++k) points *= n[k];
  if (points == 1) {  // a one-point DFT is the identity (cuFFT gives wrong values for it with a batch distance)
    one_point(rank, in, is, out, os, brank, bn, bis, bos);
    return;
  }
  layout l;
  l.rank = rank;
  for (int k = 0; k < rank; ++k) l.n[k] = n[k];
  bool in_ok = nest(rank, is, in_len, l.inembed, l.istride);
  bool out_ok = nest(rank, os, out_len, l.onembed, l.ostride);
  for (int k = 0; k < brank; ++k) in_ok = in_ok && bis[k] > 0;
  // cuFFT refuses (CUFFT_INVALID_VALUE) a real array that does not start on a complex element's
  // boundary, e.g. an odd row of a float matrix: such a side goes through a buffer, as above
  if (what == kind::r2c) in_ok = in_ok && complex_aligned<R>(in, brank, bis);
  if (what == kind::c2r) out_ok = out_ok && complex_aligned<R>(out, brank, bos);
  // a side cuFFT cannot address is packed into (or produced in) a contiguous buffer
  const bool in_place = static_cast<const void*>(in) == static_cast<const void*>(out);
  array<In, cuda> in_buf;
  array<Out, cuda> out_buf;
  const In* src = in;
  Out* dst = out;
  if (!in_ok || (!out_ok && in_place)) {
    index_t cst[3], cbst[max_rank];
    in_buf = array<In, cuda>(extents{contiguous(rank, in_len, brank, bn, cst, cbst)});
    executor<cuda>::assign(side_leaf(in_buf.data(), rank, in_len, cst, brank, bn, cbst),
                           side_leaf(const_cast<In*>(in), rank, in_len, is, brank, bn, bis));
    for (int k = 0; k < rank; ++k) is[k] = cst[k];
    for (int k = 0; k < brank; ++k) bis[k] = cbst[k];
    src = in_buf.data();
    nest(rank, is, in_len, l.inembed, l.istride);
  }
  index_t ost_user[3], obst_user[max_rank];
  for (int k = 0; k < rank; ++k) ost_user[k] = os[k];
  for (int k = 0; k < brank; ++k) obst_user[k] = bos[k];
  if (!out_ok) {
    index_t cst[3], cbst[max_rank];
    out_buf = array<Out, cuda>(extents{contiguous(rank, out_len, brank, bn, cst, cbst)});
    for (int k = 0; k < rank; ++k) os[k] = cst[k];
    for (int k = 0; k < brank; ++k) bos[k] = cbst[k];
    dst = out_buf.data();
    nest(rank, os, out_len, l.onembed, l.ostride);
  }
  // one batch dimension goes to cuFFT (the innermost), the others are looped here
  if (brank > 0) {
    l.batch = bn[brank - 1];
    l.idist = bis[brank - 1];
    l.odist = bos[brank - 1];
  }
  const plan_key key{l, what, std::is_same_v<R, float>, cuda_device(), current_cuda_stream(), std::this_thread::get_id()};
  const auto plan = plan_cache::instance().get(key, [&] {
    cufftHandle h{};
    check(cufftCreate(&h), "cufftCreate");
    cufftType type;
    if constexpr (std::is_same_v<R, float>) type = what == kind::c2c ? CUFFT_C2C : what == kind::r2c ? CUFFT_R2C : CUFFT_C2R;
    else type = what == kind::c2c ? CUFFT_Z2Z : what == kind::r2c ? CUFFT_D2Z : CUFFT_Z2D;
    std::size_t work = 0;
    layout m = l;  // cuFFT takes non-const pointers
    const cufftResult r = cufftMakePlanMany64(h, m.rank, m.n, m.inembed, m.istride, m.idist, m.onembed, m.ostride,
                                              m.odist, type, m.batch, &work);
    if (r != CUFFT_SUCCESS) {
      cufftDestroy(h);
      check(r, "cufftMakePlanMany64", "rank " + std::to_string(l.rank) + ", batch " + std::to_string(l.batch));
    }
    check(cufftSetStream(h, key.stream), "cufftSetStream");
    return std::make_shared<const plan_holder>(h);
  });
  // the outer batch dimensions, walked on the host over the one plan
  index_t outer = 1;
  for (int k = 0; k + 1 < brank; ++k) outer *= bn[k];
  for (index_t b = 0; b < outer; ++b) {
    index_t rem = b, ioff = 0, ooff = 0;
    for (int k = brank - 2; k >= 0; --k) {
      const index_t i = rem % bn[k];
      rem /= bn[k];
      ioff += i * bis[k];
      ooff += i * bos[k];
    }
    auto* ip = const_cast<In*>(src) + ioff;
    Out* op = dst + ooff;
    if constexpr (std::is_same_v<R, float>) {
      if (what == kind::c2c)
        check(cufftExecC2C(plan->plan, reinterpret_cast<cufftComplex*>(ip), reinterpret_cast<cufftComplex*>(op), sign),
              "cufftExecC2C");
      else if (what == kind::r2c)
        check(cufftExecR2C(plan->plan, reinterpret_cast<cufftReal*>(ip), reinterpret_cast<cufftComplex*>(op)),
              "cufftExecR2C");
      else
        check(cufftExecC2R(plan->plan, reinterpret_cast<cufftComplex*>(ip), reinterpret_cast<cufftReal*>(op)),
              "cufftExecC2R");
    } else {
      if (what == kind::c2c)
        check(cufftExecZ2Z(plan->plan, reinterpret_cast<cufftDoubleComplex*>(ip),
                           reinterpret_cast<cufftDoubleComplex*>(op), sign),
              "cufftExecZ2Z");
      else if (what == kind::r2c)
        check(cufftExecD2Z(plan->plan, reinterpret_cast<cufftDoubleReal*>(ip), reinterpret_cast<cufftDoubleComplex*>(op)),
              "cufftExecD2Z");
      else
        check(cufftExecZ2D(plan->plan, reinterpret_cast<cufftDoubleComplex*>(ip), reinterpret_cast<cufftDoubleReal*>(op)),
              "cufftExecZ2D");
    }
    FUSOR_COUNT_FFT_EXECUTION();
  }
  if (dst != out)  // scatter the contiguous result into the caller's layout
    executor<cuda>::assign(side_leaf(out, rank, out_len, ost_user, brank, bn, obst_user),
                           side_leaf(dst, rank, out_len, os, brank, bn, bos));
}

}  // namespace fusor::detail::cufft

namespace fusor {

template <>
struct fft_backend<cuda> {
  static constexpr const char* name = "cuFFT";

  template <class R>
  static void c2c(const fft::fft_geometry& g, const std::complex<R>* in, std::complex<R>* out, int sign) {
    detail::cufft::run<R>(detail::cufft::kind::c2c, g, in, out, sign < 0 ? CUFFT_FORWARD : CUFFT_INVERSE);
  }
  template <class R>
  static void r2c(const fft::fft_geometry& g, const R* in, std::complex<R>* out) {
    detail::cufft::run<R>(detail::cufft::kind::r2c, g, in, out, 0);
  }
  template <class R>
  static void c2r(const fft::fft_geometry& g, std::complex<R>* in, R* out) {
    detail::cufft::run<R>(detail::cufft::kind::c2r, g, in, out, 0);
  }
  static fft::plan_cache_stats cache_stats() { return detail::cufft::plan_cache::instance().stats(); }
  static void set_cache_capacity(std::size_t n) { detail::cufft::plan_cache::instance().set_capacity(n); }
  static void clear_cache() { detail::cufft::plan_cache::instance().clear(); }
};

}  // namespace fusor
