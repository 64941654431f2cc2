#pragma once
// The cpu statement both translation units of test_mixed_link evaluate: the same expression
// type, so both instantiate the same fusor templates (assign_expr, executor<cpu>::assign, the
// cpu loops), once compiled by g++ and once by nvcc's host pass.
#include <fusor/fusor.hpp>

namespace mixed {
struct outcome {
  fusor::array<float> result;
  long simd_passes;  ///< how many of the statement's passes ran the SIMD loop (expected: 1)
};
outcome statement_in_cpp(const fusor::array<float>& a, const fusor::array<float>& b, const fusor::array<float>& c);
outcome statement_in_cu(const fusor::array<float>& a, const fusor::array<float>& b, const fusor::array<float>& c);
}  // namespace mixed

#define MIXED_STATEMENT_BODY                              \
  fusor::array<float> r(a.shape());                       \
  const long before = fusor::instrument::simd_passes;     \
  r = a * b + c - fusor::sqrt(a);                         \
  return {std::move(r), fusor::instrument::simd_passes - before}
