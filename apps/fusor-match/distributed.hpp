#pragma once
// Scale-out over processes with MPI (Open MPI from Debian), when fusor-match is built with it and
// started by mpirun: each rank scores its own contiguous share of the rotations, and rank 0
// receives the maps merged by a max over the scan's own 64-bit (score, rotation) keys
// (match::detail::score_key), so the merged maps are the single-process maps bit for bit (given
// the same FFT plans: use --planning estimate, or FFTW wisdom, across processes). A rank that
// fails aborts the whole job with its message; rank 0 writes only merged maps. With the cuda
// backend (fusor-match-cuda) each rank takes one GPU: its node-local rank modulo the node's GPUs.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <type_traits>
#include <vector>

#if defined(FUSOR_MATCH_MPI)
#define OMPI_SKIP_MPICXX 1  // the C API only: Open MPI's deprecated C++ bindings stay out
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>
#endif

namespace fusor_match {

class world {
 public:
  /// Starts MPI when the process was launched by mpirun (Open MPI's or a PMI launcher's
  /// environment); a plain start stays one process without touching MPI.
  world(int& argc, char**& argv) {
#if defined(FUSOR_MATCH_MPI)
    if (std::getenv("OMPI_COMM_WORLD_SIZE") || std::getenv("PMIX_RANK") || std::getenv("PMI_SIZE")) {
      MPI_Init(&argc, &argv);
      started_ = true;
      MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
      MPI_Comm_size(MPI_COMM_WORLD, &size_);
    }
#else
    (void)argc;
    (void)argv;
#endif
  }
  world(const world&) = delete;
  world& operator=(const world&) = delete;
  ~world() {
#if defined(FUSOR_MATCH_MPI)
    if (started_) MPI_Finalize();
#endif
  }
  int rank() const { return rank_; }
  int size() const { return size_; }
  /// Ends every rank of the job after printing the message (one rank's failure is the job's).
  [[noreturn]] void abort(const std::string& message, int code) const {
    std::fprintf(stderr, "%s\n", message.c_str());
    std::fflush(stderr);
#if defined(FUSOR_MATCH_MPI)
    if (started_ && size_ > 1) MPI_Abort(MPI_COMM_WORLD, code);
#endif
    std::exit(code);
  }
  /// Rank 0 gets the elementwise max of every rank's keys (in place); the others keep theirs.
  void max_to_root(std::vector<std::uint64_t>& keys) const {
#if defined(FUSOR_MATCH_MPI)
    if (size_ > 1) {
      if (rank_ == 0)
        MPI_Reduce(MPI_IN_PLACE, keys.data(), int(keys.size()), MPI_UINT64_T, MPI_MAX, 0, MPI_COMM_WORLD);
      else
        MPI_Reduce(keys.data(), nullptr, int(keys.size()), MPI_UINT64_T, MPI_MAX, 0, MPI_COMM_WORLD);
    }
#else
    (void)keys;
#endif
  }
  /// Rank 0 gets the elementwise sum over ranks (in place).
  void sum_to_root(std::vector<double>& v) const {
#if defined(FUSOR_MATCH_MPI)
    if (size_ > 1) {
      if (rank_ == 0) MPI_Reduce(MPI_IN_PLACE, v.data(), int(v.size()), MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
      else MPI_Reduce(v.data(), nullptr, int(v.size()), MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    }
#else
    (void)v;
#endif
  }
  /// This rank's rank among the ranks of its node (0 without MPI).
  int node_rank() const {
#if defined(FUSOR_MATCH_MPI)
    if (started_ && size_ > 1) {
      MPI_Comm node;
      MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &node);
      int r = 0;
      MPI_Comm_rank(node, &r);
      MPI_Comm_free(&node);
      return r;
    }
#endif
    return 0;
  }
  /// The cuda backend's device for this rank: one GPU per rank of a node, round robin (a single
  /// process keeps the current device: 0, or what CUDA_VISIBLE_DEVICES names). Nothing on cpu.
  template <class B>
  void select_gpu() const {
#if defined(FUSOR_MATCH_CUDA)
    if constexpr (std::is_same_v<B, fusor::cuda>) {
      const int devices = fusor::cuda_device_count();
      if (devices == 0)
        throw fusor::cuda_error(int(cudaErrorNoDevice), "cudaGetDeviceCount",
                                "match: no CUDA device is visible to this process; run fusor-match (the cpu build) "
                                "or check CUDA_VISIBLE_DEVICES");
      if (size_ > 1) fusor::set_cuda_device(node_rank() % devices);
    }
#endif
  }
  /// Whether this build can run over several processes.
  static constexpr bool with_mpi() {
#if defined(FUSOR_MATCH_MPI)
    return true;
#else
    return false;
#endif
  }

 private:
  int rank_ = 0, size_ = 1;
  bool started_ = false;
};

}  // namespace fusor_match
