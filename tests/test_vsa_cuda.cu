// The backend-generic VSA bodies (tests/generic/vsa_body.hpp, vsa_models_body.hpp, vsa_encode_body.hpp, vsa_learn_body.hpp) on the cuda backend: the same
// checks, and every random vector compared with the cpu backend's.
#include <fusor/cuda.cuh>
#define TEST_BACKEND fusor::cuda
#include "generic/vsa_body.hpp"
#include "generic/vsa_models_body.hpp"
#include "generic/vsa_encode_body.hpp"
#include "generic/vsa_learn_body.hpp"
