#pragma once
// `fusor-match merge-stars`: the particle tables of several tomograms (peaks.star files, RELION 5's
// data_particles) as one STAR file, as pytom-match-pick's pytom_merge_stars.py does, so that
// RELION extracts every tomogram's picks in one job. Every file is read by gemmi's STAR parser
// (star_tables.hpp) and must hold a data_particles block whose loop has the same columns as the
// first file's; rows are copied as written.
#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include <fusor/fusor.hpp>

#include "output.hpp"
#include "star_tables.hpp"

namespace fusor_match {

struct merge_stars_args {
  std::vector<std::string> inputs;
  std::string output;
  bool quiet = false;
};

/// The data_particles loop of a STAR file, or an io_error naming the file.
inline star_loop particle_loop(const std::string& path) {
  require_file(path, "STAR file");
  std::vector<star_block> blocks;
  try {
    blocks = read_star_tables(path);
  } catch (const std::exception& e) {
    throw fusor::io_error(std::string("merge-stars: ") + e.what());
  }
  for (const star_block& b : blocks)
    if (b.name == "particles" && !b.loops.empty()) return b.loops.front();
  throw fusor::io_error("merge-stars: " + path + " holds no data_particles loop (expected a particle table such as peaks.star)");
}

/// A STAR value as written back: quoted when it holds whitespace or is empty.
inline std::string star_value(const std::string& v) {
  if (!v.empty() && v.find_first_of(" \t\"'") == std::string::npos) return v;
  return "\"" + v + "\"";
}

inline int run_merge_stars(const merge_stars_args& a) {
  if (a.inputs.size() < 2) throw fusor::value_error("merge-stars: give two or more STAR files, got " + std::to_string(a.inputs.size()));
  require_output_file(a.output);
  std::vector<star_loop> loops;
  for (const std::string& p : a.inputs) {
    loops.push_back(particle_loop(p));
    if (loops.back().tags != loops.front().tags) {
      std::string want, got;
      for (const auto& t : loops.front().tags) want += " " + t;
      for (const auto& t : loops.back().tags) got += " " + t;
      throw fusor::value_error("merge-stars: " + p + " has the columns" + got + "; " + a.inputs.front() + " has" + want +
                               " (the tables must have the same columns in the same order)");
    }
  }
  std::string out = "# RELION 5 particles merged by fusor-match merge-stars from";
  for (const std::string& p : a.inputs) out += " " + p;
  out += "\n\ndata_particles\n\nloop_\n";
  for (std::size_t c = 0; c < loops.front().tags.size(); ++c) out += "_" + loops.front().tags[c] + " #" + std::to_string(c + 1) + "\n";
  std::size_t rows = 0;
  std::set<std::string> tomograms;
  const int name = loops.front().column("rlnTomoName");
  for (const star_loop& l : loops)
    for (const auto& row : l.rows) {
      for (std::size_t c = 0; c < row.size(); ++c) out += (c ? "\t" : "") + star_value(row[c]);
      out += "\n";
      ++rows;
      if (name >= 0) tomograms.insert(row[std::size_t(name)]);
    }
  make_output_folder(a.output);
  write_text(a.output, out);
  if (!a.quiet)
    std::printf("merge-stars: %zu particles from %zu files (%zu tomograms by rlnTomoName) -> %s\n", rows, a.inputs.size(),
                tomograms.size(), a.output.c_str());
  return 0;
}

}  // namespace fusor_match
