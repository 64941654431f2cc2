// The cpu build (BACKEND=cpu): a .cpp compiled by the host compiler.
#include <fusor/fusor.hpp>

#include "run.hpp"

int main() { return run(); }
