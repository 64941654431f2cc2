#pragma once
// Where an example finds tests/data when it is given no directory: the build names the folder
// relative to the example's own (FUSOR_DIGITS_DIR, FUSOR_LANGUAGE_DIR in examples/CMakeLists.txt),
// so that no absolute path reaches a compile command (a clone of the tree in another folder then
// hits the compiler cache), and the program resolves it from its own location at run time.
#include <filesystem>
#include <string>

namespace example {

inline std::string data_path(const char* relative_to_program) {
  return (std::filesystem::read_symlink("/proc/self/exe").parent_path() / relative_to_program).lexically_normal().string();
}

}  // namespace example
