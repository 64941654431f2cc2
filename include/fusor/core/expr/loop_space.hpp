#pragma once
// The iteration space of one assignment or reduction, shared by the backends' executors: size-1
// axes dropped and neighbouring axes merged where every operand walks them contiguously one
// after the other, so a contiguous statement becomes one flat loop and a broadcast one becomes
// (rows, row length). coalesce runs once per statement on the host; next_index and unravel also
// run inside kernels.
#include <array>
#include <cstddef>

#include "../config.hpp"

namespace fusor::detail {

/// The dimensions to loop over after dropping size-1 axes and merging neighbours that every
/// operand walks contiguously one after the other. A contiguous statement becomes one flat loop;
/// a broadcast one becomes (rows, row length).
struct loop_space {
  index_t dims[max_rank];
  int rank = 0;
  index_t rows() const {
    index_t r = 1;
    for (int k = 0; k + 1 < rank; ++k) r *= dims[k];
    return r;
  }
  index_t inner() const { return dims[rank - 1]; }
};

template <std::size_t N>
loop_space coalesce(const index_t* shape, int n, const std::array<index_t*, N>& ops) {
  loop_space s;
  for (int k = 0; k < n; ++k) {
    if (shape[k] == 1) continue;
    bool merge = s.rank > 0;
    for (std::size_t j = 0; merge && j < N; ++j) merge = ops[j][s.rank - 1] == ops[j][k] * shape[k];
    if (merge) {
      s.dims[s.rank - 1] *= shape[k];
      for (std::size_t j = 0; j < N; ++j) ops[j][s.rank - 1] = ops[j][k];
    } else {
      s.dims[s.rank] = shape[k];
      for (std::size_t j = 0; j < N; ++j) ops[j][s.rank] = ops[j][k];
      ++s.rank;
    }
  }
  if (s.rank == 0) {  // a single element
    s.dims[0] = 1;
    s.rank = 1;
    for (std::size_t j = 0; j < N; ++j) ops[j][0] = 1;
  }
  return s;
}

/// Advances a row-major multi-index over dims[0..n).
FUSOR_HD inline void next_index(index_t* idx, const index_t* dims, int n) {
  for (int k = n - 1; k >= 0; --k) {
    if (++idx[k] < dims[k]) return;
    idx[k] = 0;
  }
}
/// The row-major multi-index over dims[0..n) of flat position `flat`.
FUSOR_HD inline void unravel(index_t flat, index_t* idx, const index_t* dims, int n) {
  for (int k = n - 1; k >= 0; --k) {
    idx[k] = flat % dims[k];
    flat /= dims[k];
  }
}

}  // namespace fusor::detail
