// The backend-generic forward-over-reverse bodies (tests/generic/ad_hessian_body.hpp) on the cpu backend: the
// third translation unit of test_ad_ops.
#define TEST_BACKEND fusor::cpu
#include "generic/ad_hessian_body.hpp"
