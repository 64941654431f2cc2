// The backend-generic VSA encoder bodies (tests/generic/vsa_encode_body.hpp) on the cpu backend: a
// unit of test_vsa.
#define TEST_BACKEND fusor::cpu
#include "generic/vsa_encode_body.hpp"
