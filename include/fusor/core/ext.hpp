#pragma once
// fusor::ext: the engine's functions that a layer built on arrays (autodiff, VSA, matching, file
// IO, or a user's own) calls, named once and documented (docs/extending.md, "The extension API"),
// as Eigen documents evaluator<> and MatX its operator guide. fusor::detail is what nothing
// outside the folder that declares it may call; tests/layering/check_layers.py keeps vsa/, match/
// and io/ off core's detail, and holds ad/'s remaining uses to a list that only shrinks.
#include "assign.hpp"
#include "expr/nodes.hpp"
#include "indexing.hpp"
#include "transfer.hpp"

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

}  // namespace fusor::ext
