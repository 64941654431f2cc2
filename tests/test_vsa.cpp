// The backend-generic VSA bodies (tests/generic/vsa_body.hpp, vsa_models_body.hpp) on the cpu backend.
#define TEST_BACKEND fusor::cpu
#include "generic/vsa_body.hpp"
#include "generic/vsa_models_body.hpp"
