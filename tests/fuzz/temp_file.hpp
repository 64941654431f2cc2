#pragma once
// The fuzzers of readers that take a path (MRC maps the file, libzip opens it): the input bytes
// written to one file per process, reused for every input.
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>
#include <unistd.h>

namespace fuzz {
inline std::filesystem::path write_input(const char* suffix, const std::uint8_t* data, std::size_t size) {
  const std::filesystem::path p =
      std::filesystem::temp_directory_path() / ("fusor-fuzz-" + std::to_string(::getpid()) + suffix);
  std::FILE* f = std::fopen(p.c_str(), "wb");
  if (!f) std::abort();
  if (size && std::fwrite(data, 1, size, f) != size) std::abort();
  std::fclose(f);
  return p;
}
}  // namespace fuzz
