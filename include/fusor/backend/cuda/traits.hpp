#pragma once
// The cuda tag as a backend (host-safe, no CUDA headers): enough to name array<float, cuda> in
// any translation unit. Device memory and execution arrive with the CUDA backend; until its
// headers are included, creating or evaluating a cuda array fails to compile with a sentence.
#include "../../core/backend.hpp"

namespace fusor {

template <>
struct backend_traits<cuda> {
  static constexpr const char* name = "cuda";
  static constexpr bool host_accessible = false;
};

}  // namespace fusor
