// The backend-generic residue, multivariate FPE decoding and sparse distributed memory bodies
// (tests/generic/vsa_learn_body.hpp) on the cpu backend: a unit of test_vsa.
#define TEST_BACKEND fusor::cpu
#include "generic/vsa_learn_body.hpp"
