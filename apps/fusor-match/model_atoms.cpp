// read_atomic_model (model_atoms.hpp) through gemmi; compiled as C++17 (the header says why).
#include "model_atoms.hpp"

#include <filesystem>
#include <stdexcept>

#include <gemmi/c4322.hpp>
#include <gemmi/gz.hpp>
#include <gemmi/mmread.hpp>

namespace fusor_match {

atomic_model_file read_atomic_model(const std::string& path, bool keep_waters) {
  if (!std::filesystem::is_regular_file(path)) throw std::runtime_error("the model " + path + " is missing or not a file");
  gemmi::Structure st;
  try {
    // the format from the content (PDB, mmCIF, mmJSON), not the name; .gz read through zlib
    st = gemmi::read_structure(gemmi::MaybeGzipped(path), gemmi::CoorFormat::Detect);
  } catch (const std::exception& e) {
    throw std::runtime_error("cannot read the model " + path + " as PDB or mmCIF: " + e.what());
  }
  atomic_model_file out;
  out.format = st.input_format == gemmi::CoorFormat::Pdb ? "PDB" : st.input_format == gemmi::CoorFormat::Mmcif ? "mmCIF" : "mmJSON";
  out.models_in_file = int(st.models.size());
  if (st.models.empty()) throw std::runtime_error("the model " + path + " holds no model (no atoms)");
  for (const gemmi::Chain& chain : st.models[0].chains)
    for (const gemmi::Residue& res : chain.residues) {
      if (res.is_water() && !keep_waters) {
        out.waters_removed += (long long)res.atoms.size();
        continue;
      }
      for (const gemmi::Atom& atom : res.atoms) {
        const gemmi::El el = atom.element.elem;
        if (el == gemmi::El::X || !gemmi::C4322<double>::has(el))
          throw std::runtime_error("the model " + path + ": atom " + atom.name + " of residue " + res.name + " " +
                                   res.seqid.str() + " in chain " + chain.name +
                                   (el == gemmi::El::X ? std::string(" has no element gemmi knows (read as \"X\")")
                                                       : " has the element \"" + std::string(atom.element.name()) + "\"") +
                                   ", and so no tabulated electron scattering factor");
        const auto& coef = gemmi::C4322<double>::get(el);
        model_atom m;
        m.position = {atom.pos.x, atom.pos.y, atom.pos.z};
        m.occupancy = atom.occ;
        m.b_iso = atom.b_iso;
        m.mass = atom.element.weight();
        for (int i = 0; i < 5; ++i) m.a[std::size_t(i)] = coef.a(i), m.b[std::size_t(i)] = coef.b(i);
        out.atoms.push_back(m);
      }
    }
  if (out.atoms.empty()) throw std::runtime_error("the model " + path + " holds no atoms in its first model");
  return out;
}

}  // namespace fusor_match
