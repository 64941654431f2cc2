// nvcc's half of test_mixed_link: a .cu translation unit evaluating a cpu expression in host
// code (no device is needed or used).
#include <fusor/cuda.cuh>

#include "statement.hpp"

namespace mixed {
outcome statement_in_cu(const fusor::array<float>& a, const fusor::array<float>& b, const fusor::array<float>& c) {
  MIXED_STATEMENT_BODY;
}
}  // namespace mixed
