#pragma once
// Backend tags. Only the tag *types* live in core: every header can name array<float, cuda>,
// while what a backend does (memory, evaluation) is specialised in backend/<name>/.
#include <concepts>
#include <string>
#include <type_traits>

#include "dependent_false.hpp"

namespace fusor {

/// Host memory, SIMD loops (xsimd), threads (OpenMP).
struct cpu {};
/// NVIDIA GPU memory, one kernel per statement (Thrust/CUB).
struct cuda {};

/// What a backend is: specialised in backend/<name>/ (declared only here, so a tag without a
/// backend folder is not a backend).
template <class B>
struct backend_traits;

/// Where a backend's arrays live: allocate/deallocate and copies to and from host memory.
/// Specialised in backend/<name>/memory.hpp, so a translation unit that names array<float, cuda>
/// without the cuda memory header gets a compile error with a sentence, not a link error.
///   template <class T> static T* allocate(index_t n);          // n > 0 elements
///   template <class T> static void deallocate(T* p, index_t n) noexcept;
///   template <class T> static void copy_to_host(T* dst, const T* src, index_t n);
///   template <class T> static void copy_from_host(T* dst, const T* src, index_t n);
///   template <class T> static void copy_within(T* dst, const T* src, index_t n);
template <class B>
struct backend_memory;

/// A tag with a visible backend_traits specialisation.
template <class B>
concept backend = requires {
  { backend_traits<B>::name } -> std::convertible_to<const char*>;
};

/// The host is always there: cpu is a backend in every translation unit, so the layers that keep
/// data in host memory (io's files, checkpoints) name array<T, cpu> without including a backend
/// header. What the cpu does (memory, evaluation) is still specialised in backend/cpu/.
template <>
struct backend_traits<cpu> {
  static constexpr const char* name = "cpu";
  static constexpr bool host_accessible = true;
};

/// Where host-side data of a computation on B lives: B itself when the host reads its memory,
/// else cpu. (A type that depends on B, so a template over B can name its host arrays before the
/// cpu backend's definitions are included.)
template <class B>
using host_backend_t = std::conditional_t<backend_traits<B>::host_accessible, B, cpu>;

/// Evaluates an expression or owns memory: specialised per backend.
template <class B>
struct executor {
  static_assert(detail::dependent_false<B>,
                "fusor: evaluating an expression on this backend needs its executor; for cuda "
                "arrays that means compiling with nvcc in a .cu file that includes "
                "<fusor/cuda.cuh>");
};

/// A backend's work recorded once and launched again as one unit: ad::compile's replays run
/// through it. Where a backend has no such thing (cpu) run() calls the work each time; cuda's
/// specialisation (backend/cuda/graph.hpp) captures it as a CUDA graph.
///   template <class F> void run(F&& work);  // work() now, or a launch of its recording
///   bool recorded() const;                  // run() launches a recording
///   std::string why_not() const;            // why the work is not recorded (empty when it is)
///   void reset();                           // forget the recording (the work changed)
template <class B>
struct work_graph {
  template <class F>
  void run(F&& work) {
    work();
  }
  bool recorded() const { return false; }
  std::string why_not() const { return "this backend runs the work directly"; }
  void reset() {}
};

/// True where executor<B> is specialised in this translation unit (cpu always; cuda in .cu
/// files that include <fusor/cuda.cuh>). Transfers use it to avoid instantiating a kernel they
/// do not need in host-compiled code.
template <class B>
inline constexpr bool has_executor = false;

/// The backend a template argument defaults to where user code names none (`array<float>`,
/// `zeros<float>({n})`, `random::normal<float>(g, {n})`): `cpu`, or the tag named by the
/// FUSOR_DEFAULT_BACKEND definition (`-DFUSOR_DEFAULT_BACKEND=cuda`, or the CMake option of the
/// same name). It changes types, so every translation unit of a program must agree on it (an ODR
/// rule: two objects linked together with different defaults are different programs' types).
#if defined(FUSOR_DEFAULT_BACKEND_CUDA)
#error "fusor: FUSOR_DEFAULT_BACKEND_CUDA was replaced by FUSOR_DEFAULT_BACKEND=cuda"
#endif
#ifndef FUSOR_DEFAULT_BACKEND
#define FUSOR_DEFAULT_BACKEND cpu
#endif
using default_backend = FUSOR_DEFAULT_BACKEND;
static_assert(std::is_same_v<default_backend, cpu> || std::is_same_v<default_backend, cuda>,
              "fusor: FUSOR_DEFAULT_BACKEND must name a backend tag: cpu or cuda");

/// Marker for expression operands that carry no backend (C++ scalars).
struct no_backend {};

namespace detail {
template <class A, class B>
struct common_backend {
  static constexpr bool ok = std::is_same_v<A, B>;
  using type = A;
};
template <class A>
struct common_backend<A, no_backend> {
  static constexpr bool ok = true;
  using type = A;
};
template <class B>
struct common_backend<no_backend, B> {
  static constexpr bool ok = true;
  using type = B;
};
template <>
struct common_backend<no_backend, no_backend> {
  static constexpr bool ok = true;
  using type = no_backend;
};
}  // namespace detail

/// True when two backends (or "no backend" for scalars) can meet in one expression.
template <class A, class B>
concept same_backend = detail::common_backend<A, B>::ok;

}  // namespace fusor
