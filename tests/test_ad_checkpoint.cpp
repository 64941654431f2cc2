// The backend-generic checkpointing bodies (tests/generic/checkpoint_body.hpp) on the cpu backend.
#define TEST_BACKEND fusor::cpu
#include "generic/checkpoint_body.hpp"
