#pragma once
// MPI for fusor's data-parallel training (ad::nn::data_parallel): a session that starts MPI when
// the process was launched by mpirun, and a communicator over an MPI_Comm with the operations
// data_parallel needs (a summing all-reduce and a broadcast of host buffers of float or double).
// Started without mpirun, the program is one process: the communicator is rank 0 of 1 and MPI is
// never touched, so one binary serves both. The C API only (Open MPI's deprecated C++ bindings
// stay out); needs <mpi.h> on the include path and the program linked with MPI (CMake:
// find_package(MPI) and MPI::MPI_CXX; Debian: libopenmpi-dev, openmpi-bin).
#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstdlib>
#include <exception>
#include <string>
#include <type_traits>

#ifndef OMPI_SKIP_MPICXX
#define OMPI_SKIP_MPICXX 1
#endif
#ifndef MPICH_SKIP_MPICXX
#define MPICH_SKIP_MPICXX 1
#endif
#include <mpi.h>

#include "../core/error.hpp"

namespace fusor::mpi {

/// MPI failed: the message names the call and MPI's own text. (MPI's default error handler ends
/// the job itself; under MPI_ERRORS_RETURN on the communicator the calls here throw this.)
struct mpi_error : error {
  using error::error;
};

namespace detail {
inline void check(int code, const char* call) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  throw mpi_error(std::string("fusor: ") + call + " failed: " + std::string(text, std::size_t(length)));
}
template <class T>
MPI_Datatype datatype() {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>, "fusor: the MPI communicator moves float or double");
  if constexpr (std::is_same_v<T, float>) return MPI_FLOAT;
  else return MPI_DOUBLE;
}
inline bool launched_by_mpirun() {
  return std::getenv("OMPI_COMM_WORLD_SIZE") || std::getenv("PMIX_RANK") || std::getenv("PMI_SIZE");
}
inline bool running() {
  int started = 0, finished = 0;
  MPI_Initialized(&started);
  MPI_Finalized(&finished);
  return started && !finished;
}
}  // namespace detail

/// MPI for the lifetime of this object when the process was launched by mpirun (Open MPI's or a
/// PMI launcher's environment); otherwise nothing (one process). Make one at the top of main.
class session {
 public:
  session(int& argc, char**& argv) {
    if (detail::launched_by_mpirun() && !detail::running()) {
      detail::check(MPI_Init(&argc, &argv), "MPI_Init");
      started_ = true;
    }
  }
  session(const session&) = delete;
  session& operator=(const session&) = delete;
  ~session() {
    if (!started_) return;
    // leaving by an exception: the other ranks may wait in a collective for ever, so end them all
    if (std::uncaught_exceptions() > 0) MPI_Abort(MPI_COMM_WORLD, 1);
    MPI_Finalize();
  }
  /// Whether this session started MPI.
  bool started() const { return started_; }

 private:
  bool started_ = false;
};

/// The ranks of an MPI communicator (MPI_COMM_WORLD by default), or rank 0 of 1 when MPI is not
/// running. Satisfies ad::nn::communicator.
class communicator {
 public:
  explicit communicator(MPI_Comm comm = MPI_COMM_WORLD) : comm_(comm), active_(detail::running()) {
    if (active_) {
      detail::check(MPI_Comm_rank(comm_, &rank_), "MPI_Comm_rank");
      detail::check(MPI_Comm_size(comm_, &size_), "MPI_Comm_size");
    }
  }
  int rank() const { return rank_; }
  int size() const { return size_; }
  /// data[0, n) summed across the ranks, in place on every rank (MPI_Allreduce, in pieces of at
  /// most INT_MAX elements).
  template <class T>
  void all_reduce_sum(T* data, std::size_t n) const {
    if (!active_ || size_ == 1) return;
    for (std::size_t at = 0; at < n; at += std::size_t(INT_MAX)) {
      const int count = int(std::min<std::size_t>(n - at, std::size_t(INT_MAX)));
      detail::check(MPI_Allreduce(MPI_IN_PLACE, data + at, count, detail::datatype<T>(), MPI_SUM, comm_), "MPI_Allreduce");
    }
  }
  /// data[0, n) of rank `root` copied to every rank (MPI_Bcast).
  template <class T>
  void broadcast(T* data, std::size_t n, int root) const {
    if (!active_ || size_ == 1) return;
    for (std::size_t at = 0; at < n; at += std::size_t(INT_MAX)) {
      const int count = int(std::min<std::size_t>(n - at, std::size_t(INT_MAX)));
      detail::check(MPI_Bcast(data + at, count, detail::datatype<T>(), root, comm_), "MPI_Bcast");
    }
  }
  /// The MPI communicator itself (for the program's own messages).
  MPI_Comm handle() const { return comm_; }

 private:
  MPI_Comm comm_;
  bool active_;
  int rank_ = 0, size_ = 1;
};

}  // namespace fusor::mpi
