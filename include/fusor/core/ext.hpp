#pragma once
// fusor::ext: the engine's functions that a layer built on arrays (autodiff, VSA, matching, file
// IO, or a user's own) calls, named once and documented (docs/extending.md, "The extension API"),
// as Eigen documents evaluator<> and MatX its operator guide. fusor::detail is what nothing
// outside the folder that declares it may call; tests/layering/check_layers.py keeps ad/, vsa/,
// match/ and io/ off core's detail. linalg/ext.hpp adds the GEMM planning autodiff's products need.
#include "assign.hpp"
#include "dependent_false.hpp"
#include "expr/nodes.hpp"
#include "extents.hpp"
#include "functors.hpp"
#include "indexing.hpp"
#include "join.hpp"
#include "name_list.hpp"
#include "pad.hpp"
#include "reduce.hpp"
#include "reduce_ops.hpp"
#include "shape_ops.hpp"
#include "slice.hpp"
#include "transfer.hpp"
#include "write_watch.hpp"

namespace fusor::ext {

/// The node that stands for an operand: an array or a view becomes its leaf, a node stays itself.
using fusor::detail::to_node;
/// x's elements contiguous in C order (`.data()`, `.view()`): x itself when it already is, else a
/// copy (a view) or its evaluation (an expression).
using fusor::detail::contiguous;
using fusor::detail::contiguous_of;
/// dst = e elementwise on dst's backend, broadcasting e; with check_alias, an e that reads dst's
/// memory at other positions is evaluated into a temporary first.
using fusor::detail::assign_expr;
/// An index_error unless every index lies in [0, n) (lookup tables, labels: no wrap-around).
using fusor::detail::check_indices;
/// Integer indices as int64 on backend B, negatives wrapped as NumPy does, out of range an index_error.
using fusor::detail::checked_indices;
/// n contiguous elements from backend Src's memory to backend Dst's (either may be the host).
using fusor::detail::copy_contiguous;
/// dst[to[k], :] += src[from[k], :] for every k, in one pass (to ascending, indices in range).
using fusor::detail::add_gathered_rows;
/// Makes `count` int64 indices along an axis of length n non-negative in place (NumPy's wrap); one
/// outside [-n, n) is an index_error naming it, the axis and the shape.
using fusor::detail::wrap_checked;
/// A mask (a bool array or a comparison) as contiguous bools of `shape`, broadcast if it must be.
using fusor::detail::mask_of;

// Kinds of operand, for `if constexpr` and requires-clauses.
/// An array<T, B> (owning), and an array_view<T, B>.
using fusor::detail::is_array_v;
using fusor::detail::is_view_v;
/// What split() can return views of without dangling: an lvalue array or any view.
using fusor::detail::split_source;
/// L is one of the types T...
using fusor::detail::one_of;
/// T is float16 or bfloat16 (core/half.hpp): a layer computes them in float32 and rounds once.
using fusor::detail::small_float_v;
/// false, naming template parameters: a static_assert in a discarded branch or a primary template.
using fusor::detail::dependent_false;

// Shapes: the rules the array functions apply, for a layer that builds the same result itself.
/// s without axis `axis` (a reduction's result), and s with that axis set to 1 (keepdims).
using fusor::detail::drop_axis;
using fusor::detail::keep_axis;
/// outer = the product of the sides before `axis`, inner = the product after it.
using fusor::detail::split_around;
/// The shape of take(x, indices, axis).
using fusor::detail::take_shape;
/// A reshape target with its one -1 resolved, after checking that the sizes agree (shape_error).
using fusor::detail::resolve_reshape;
/// NumPy's no-copy reshape: the strides addressing the same elements in the new shape, or false.
using fusor::detail::reshape_strides;
/// The offset, shape and strides a subscript list (integers, slices, ellipsis, newaxis) selects.
using fusor::detail::subscript_window;
/// A leaf narrowed to [start, stop) along an axis (no copy: leaves are plain pointer structs).
using fusor::detail::slice_leaf;
/// pad(): the padded shape after checking the widths, axis k's (before, after) widths, and the
/// source position inside [0, n) of padded position i in a mode other than constant.
using fusor::detail::padded_shape;
using fusor::detail::pad_width;
using fusor::detail::pad_source;

// Reductions: the operations executor<B>::reduce_axis and reduce_into combine with.
/// Sums (integers widened as NumPy does), sums for means (integers in float64), NaN-propagating maxima.
using fusor::detail::sum_op;
using fusor::detail::mean_sum_op;
using fusor::detail::max_op;
/// A whole reduction's last step where reduce_into writes it: R(w / divisor) * factor.
using fusor::detail::finish_as;

// Writes to memory a recording depends on (autodiff's tape checks that its inputs stay unchanged).
/// The lowest and one-past-highest bytes a leaf touches.
using fusor::detail::byte_range;
/// The process's table of watched byte ranges: watch, unwatch, first_written, first_adopted.
using fusor::detail::watched_memory;

// name_list(names), names quoted for an error message, is declared in name_list.hpp (included above).

}  // namespace fusor::ext
