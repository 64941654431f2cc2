#pragma once
// A STAR file's loops as text, read by gemmi's CIF/STAR parser (Debian's gemmi-dev). The
// declarations use the standard library only: star_tables.cpp is compiled as C++17, since gemmi
// 0.5.7's document types do not compile under clang 19 in C++20 mode (a vector of an incomplete
// Item), and this header is included by the C++20 code that reads the tables.
#include <string>
#include <vector>

namespace fusor_match {

/// One loop: its tags without the leading '_' (rlnTomoName), its rows of values, and the line of
/// the file it starts on.
struct star_loop {
  std::vector<std::string> tags;
  std::vector<std::vector<std::string>> rows;
  int line = 0;
  /// The column of `tag`, or -1.
  int column(const std::string& tag) const {
    for (std::size_t i = 0; i < tags.size(); ++i)
      if (tags[i] == tag) return int(i);
    return -1;
  }
};

/// One data block: its name (data_global: "global") and its loops in file order.
struct star_block {
  std::string name;
  std::vector<star_loop> loops;
};

/// Every block of the STAR file at `path`. A file that cannot be read or parsed is a
/// std::runtime_error whose message names the file (and, from gemmi, the line).
std::vector<star_block> read_star_tables(const std::string& path);

}  // namespace fusor_match
