#pragma once
// tests/data, the fixtures written by the real programs (NumPy, LAPACK, MRC writers). The build
// names it relative to the test program's folder (FUSOR_TEST_DATA_DIR, tests/CMakeLists.txt): an
// absolute path in a compile command would differ between two clones of the same tree, and every
// unit naming it would miss ccache in a clone. The program finds its own folder at run time
// (example::data_path, as the examples do), so it reads the fixtures from wherever it is started.
#include <filesystem>

#include "../examples/data_path.hpp"

#ifndef FUSOR_TEST_DATA_DIR
#error "FUSOR_TEST_DATA_DIR must name tests/data (set by tests/CMakeLists.txt)"
#endif

namespace test {

inline const std::filesystem::path& data_dir() {
  static const std::filesystem::path dir = example::data_path(FUSOR_TEST_DATA_DIR);
  return dir;
}

}  // namespace test
