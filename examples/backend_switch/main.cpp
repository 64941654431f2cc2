// The cpu build (BACKEND=cpu): a .cpp compiled by the host compiler.
#include <fusor/fusor.hpp>

#include "run.hpp"

static_assert(std::is_same_v<fusor::default_backend, fusor::cpu>, "BACKEND=cpu must make fusor::default_backend cpu");

int main() { return run(); }
