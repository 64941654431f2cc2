// The backend-generic attention bodies (tests/generic/attention_body.hpp) on the cpu backend.
#define TEST_BACKEND fusor::cpu
#include "generic/attention_body.hpp"
