#pragma once
// The exception hierarchy. Every message says what was expected and what was given.
#include <cstddef>
#include <stdexcept>
#include <string>

namespace fusor {

/// Base of every exception fusor throws.
struct error : std::runtime_error {
  using std::runtime_error::runtime_error;
};
/// Shapes that do not broadcast, do not match, or cannot be reshaped.
struct shape_error : error {
  using error::error;
};
/// An element type an operation does not support at run time (most such misuse fails to compile).
struct dtype_error : error {
  using error::error;
};
/// An index outside an axis, or an axis outside the rank.
struct index_error : error {
  using error::error;
};
/// An argument with a value the operation cannot use (zero step, empty range, p outside [0, 1]).
struct value_error : error {
  using error::error;
};
/// A backend that cannot do what was asked (no device, unsupported configuration).
struct backend_error : error {
  using error::error;
};
/// An allocation that would take a backend's live arrays above the memory_limit of the context
/// it was made under (see context<B>); thrown before any memory is taken.
struct memory_limit_error : backend_error {
  memory_limit_error(const std::string& what, std::size_t requested_bytes, std::size_t limit_bytes)
      : backend_error(what), requested(requested_bytes), limit(limit_bytes) {}
  std::size_t requested;  ///< the bytes the allocation asked for
  std::size_t limit;      ///< the context's memory_limit
};
/// Reading or writing files.
struct io_error : error {
  using error::error;
};
/// Planning or executing a Fourier transform.
struct fft_error : error {
  using error::error;
};
/// A matrix a decomposition cannot take (singular for solve/inv, not positive definite for
/// cholesky, an iteration that did not converge). `matrix` is its index in the flattened batch
/// (0 for a single matrix), also named in the message.
struct linalg_error : error {
  linalg_error(const std::string& what, long long matrix_index) : error(what), matrix(matrix_index) {}
  long long matrix;
};

}  // namespace fusor
