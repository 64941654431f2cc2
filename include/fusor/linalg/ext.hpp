#pragma once
// fusor::ext::linalg: the planning under matmul, tensordot and einsum, named for a layer that
// writes products into memory it owns (autodiff's backward passes write each gradient of a product
// straight into its tape slot, without the temporaries the public functions would return).
#include "detail/contract.hpp"
#include "einsum.hpp"
#include "matmul.hpp"
#include "products.hpp"

namespace fusor::ext::linalg {

/// A strided matrix stack (data, shape, strides) the GEMM planning reads and writes in place.
using fusor::detail::linalg::strided;
/// matmul's operand promotion (a vector becomes a row or a column), its result's full view,
/// its plan (batch broadcast, transposes, the GEMM calls) and the check that B has a BLAS.
using fusor::detail::linalg::promote_view;
using fusor::detail::linalg::full_view;
using fusor::detail::linalg::plan_matmul;
using fusor::detail::linalg::require_blas;
/// c = a @ b into a strided destination (batched, broadcasting the batch axes).
using fusor::detail::linalg::matmul_into;
/// tensordot's axes: the last n of a against the first n of b; a short list of axes, and the
/// check that fills one from the user's axes (in range, no repeats, negatives wrapped).
using fusor::detail::linalg::last_first_axes;
using fusor::detail::linalg::axis_list;
using fusor::detail::linalg::normalize_into;
/// einsum: a pattern parsed with every index's size, and one operand's view under its labels.
using fusor::detail::linalg::einsum_spec;
using fusor::detail::linalg::parse_einsum;
using fusor::detail::linalg::einsum_operand;

}  // namespace fusor::ext::linalg
