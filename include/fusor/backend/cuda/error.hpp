#pragma once
// cuda_error and the checks around every CUDA runtime call (host-safe: any host compiler).
#include <cuda_runtime_api.h>

#include <string>

#include "../../core/error.hpp"

namespace fusor {

/// A CUDA runtime or library call that failed: holds the status code and the call.
struct cuda_error : backend_error {
  cuda_error(int status, std::string call, const std::string& what)
      : backend_error(what), status_(status), call_(std::move(call)) {}
  /// The status code (a cudaError_t, or the library's own status type for cuFFT/cuBLAS).
  int status() const noexcept { return status_; }
  /// The call that failed, as written in fusor's source.
  const std::string& call() const noexcept { return call_; }

 private:
  int status_;
  std::string call_;
};

namespace detail {
[[noreturn]] inline void throw_cuda(cudaError_t st, const char* call, const std::string& context = {}) {
  cudaGetLastError();  // clears a non-sticky error so the next call does not report it again
  throw cuda_error(int(st), call,
                   std::string("fusor: ") + call + " failed: " + cudaGetErrorName(st) + " (" + cudaGetErrorString(st) +
                       ")" + (context.empty() ? std::string() : "; " + context));
}
inline void cuda_check(cudaError_t st, const char* call) {
  if (st != cudaSuccess) throw_cuda(st, call);
}
}  // namespace detail

}  // namespace fusor

/// Runs a CUDA runtime call and throws cuda_error naming it when it fails.
#define FUSOR_CUDA_CHECK(...) ::fusor::detail::cuda_check((__VA_ARGS__), #__VA_ARGS__)
