#pragma once
// A fresh directory under the system's temporary directory, removed with everything in it when
// the object goes: for tests that write files (.npy, MRC).
#include <chrono>
#include <filesystem>
#include <random>
#include <string>
#include <system_error>

namespace test {

struct temp_dir {
  std::filesystem::path path;
  /// `tag` names the test program in the directory's name.
  explicit temp_dir(const std::string& tag) {
    const auto stamp = std::chrono::steady_clock::now().time_since_epoch().count();
    path = std::filesystem::temp_directory_path() /
           ("fusor_test_" + tag + "_" + std::to_string(stamp) + "_" + std::to_string(std::random_device{}()));
    std::filesystem::create_directories(path);
  }
  temp_dir(const temp_dir&) = delete;
  temp_dir& operator=(const temp_dir&) = delete;
  ~temp_dir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

}  // namespace test
