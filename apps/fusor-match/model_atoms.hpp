#pragma once
// The atoms of a PDB or mmCIF model (optionally gzipped), read by gemmi (Debian's gemmi-dev), each
// with its electron scattering factor from gemmi's copy of International Tables for
// Crystallography C, table 4.3.2.2 (five Gaussians). The declarations use the standard library
// only: model_atoms.cpp is compiled as C++17 with gemmi, as star_tables.cpp is (star_tables.hpp
// says why).
#include <array>
#include <string>
#include <vector>

namespace fusor_match {

/// One atom as the model file gives it: position (Å), occupancy, isotropic B (Å^2), its element's
/// scattering-factor Gaussians (a in Å, b in Å^2) and atomic mass (daltons).
struct model_atom {
  std::array<double, 3> position{};
  double occupancy = 1, b_iso = 0, mass = 0;
  std::array<double, 5> a{}, b{};
};

struct atomic_model_file {
  std::vector<model_atom> atoms;
  std::string format;       // "PDB" or "mmCIF"
  int models_in_file = 0;   // only the first is read
  long long waters_removed = 0;
};

/// The first model's atoms of the file at `path` (waters left out unless keep_waters). A file that
/// cannot be read or parsed, an element without a tabulated factor, or a model without atoms is a
/// std::runtime_error naming the file (and the atom).
atomic_model_file read_atomic_model(const std::string& path, bool keep_waters);

}  // namespace fusor_match
