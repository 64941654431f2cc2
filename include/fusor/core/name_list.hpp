#pragma once
// Names quoted for an error message ('a', 'b', ...), the first twelve and then a count, so that a
// message about an archive or a checkpoint of thousands of entries stays readable. Part of
// fusor::ext (core/ext.hpp), declared here so that io can include it without the rest of ext.
#include <cstddef>
#include <string>
#include <vector>

namespace fusor::ext {

inline std::string name_list(const std::vector<std::string>& names) {
  if (names.empty()) return "none";
  std::string r;
  for (std::size_t k = 0; k < names.size(); ++k) {
    if (k == 12) return r + ", ... (" + std::to_string(names.size()) + " in all)";
    r += (k ? ", '" : "'") + names[k] + "'";
  }
  return r;
}

}  // namespace fusor::ext
