// doctest's main for the gpu-labelled tests: without a CUDA device they report a skip (exit 77,
// which ctest's SKIP_RETURN_CODE turns into "Skipped"), never a pass.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>

#include <fusor/backend/cuda/memory.hpp>

int main(int argc, char** argv) {
  if (fusor::cuda_device_count() == 0) {
    std::puts("skipped: no CUDA device");
    return 77;
  }
  return doctest::Context(argc, argv).run();
}
