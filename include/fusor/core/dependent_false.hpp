#pragma once
// The one spelling of "false, but dependent": a static_assert in a template's discarded branch,
// or in a primary template nothing may instantiate, must name the template's parameters so that
// it fires only when that branch or template is instantiated (before C++23's P2593).

namespace fusor::detail {

template <class...>
inline constexpr bool dependent_false = false;

}  // namespace fusor::detail
