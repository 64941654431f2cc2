#pragma once
// work_graph<cuda>: ad::compile's replay as one CUDA graph. The first run() captures the work's
// kernels, copies and memsets on a stream of its own (nothing executes while capturing), makes
// an executable graph of them and launches it on the thread's current stream, so it is ordered
// after the work queued before it there (the new batch written into the inputs) and before the
// work queued after (the loss read back, an optimizer step). Later runs launch the graph again:
// one launch instead of one per kernel, and no host work per kernel.
//
// Work that cannot be captured (a read back to the host, a synchronisation, a workspace that
// must grow) makes the capture fail; run() then runs the work directly, now and on every later
// call, and why_not() says what failed. A graph points at the buffers its kernels were captured
// with: it is made again when a backend workspace was replaced since (a larger reduction grew
// it) or the current device changed, and the owner resets it when its buffers change.
// Host-safe: any host compiler with the CUDA runtime's headers.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <exception>
#include <memory>
#include <optional>
#include <type_traits>
#include <string>
#include <utility>

#include "../../core/backend.hpp"
#include "error.hpp"
#include "memory.hpp"

namespace fusor {

template <>
class work_graph<cuda> {
 public:
  /// Launches the recording of work() on the current stream, capturing it first where there is
  /// none (or it is stale); runs work() directly where it cannot be captured.
  template <class F>
  void run(F&& work) {
    if (failed_) {
      work();
      return;
    }
    if (exec_ != nullptr && (generation_ != detail::cuda_workspace_generation().load() || device_ != cuda_device()))
      reset();
    if (exec_ == nullptr && !capture(work)) {
      work();  // (nothing ran while capturing)
      return;
    }
    FUSOR_CUDA_CHECK(cudaGraphLaunch(exec_.get(), current_cuda_stream()));
  }
  bool recorded() const { return exec_ != nullptr; }
  std::string why_not() const { return exec_ != nullptr ? std::string() : why_not_; }
  /// Forgets the recording (the next run() captures again) and an earlier failure.
  void reset() {
    exec_.reset();
    failed_ = false;
  }

 private:
  template <class F>
  bool capture(F& work) {
    if (!stream_) stream_.emplace();
    const int device = cuda_device();
    const std::uint64_t generation = detail::cuda_workspace_generation().load();
    cudaGraph_t graph = nullptr;
    {
      const cuda_stream_scope scope(*stream_);
      // thread-local mode: a call of this thread that is unsafe while capturing (a synchronous
      // copy, a synchronisation, cudaMalloc) fails instead of breaking the capture silently
      FUSOR_CUDA_CHECK(cudaStreamBeginCapture(stream_->get(), cudaStreamCaptureModeThreadLocal));
      std::string failure;
      try {
        work();
      } catch (const std::exception& e) {
        failure = e.what();
      }
      const cudaError_t end = cudaStreamEndCapture(stream_->get(), &graph);
      if (failure.empty() && end != cudaSuccess) failure = std::string("cudaStreamEndCapture: ") + cudaGetErrorString(end);
      if (!failure.empty()) {
        if (graph != nullptr) cudaGraphDestroy(graph);
        cudaGetLastError();  // (a capture error is not sticky: clear it)
        return give_up(std::move(failure));
      }
    }
    cudaGraphExec_t exec = nullptr;
    const cudaError_t made = cudaGraphInstantiate(&exec, graph, 0);
    cudaGraphDestroy(graph);  // (the executable graph keeps what it needs)
    if (made != cudaSuccess) {
      cudaGetLastError();
      return give_up(std::string("cudaGraphInstantiate: ") + cudaGetErrorString(made));
    }
    exec_.reset(exec);
    generation_ = generation;
    device_ = device;
    return true;
  }
  bool give_up(std::string why) {
    failed_ = true;
    why_not_ = std::move(why);
    return false;
  }

  struct exec_deleter {
    void operator()(cudaGraphExec_t g) const { cudaGraphExecDestroy(g); }  // (a launch in flight completes first)
  };
  std::optional<cuda_stream> stream_;
  std::unique_ptr<std::remove_pointer_t<cudaGraphExec_t>, exec_deleter> exec_;
  std::uint64_t generation_ = 0;
  int device_ = -1;
  bool failed_ = false;
  std::string why_not_ = "not captured yet";
};

}  // namespace fusor
