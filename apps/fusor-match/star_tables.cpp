// read_star_tables (star_tables.hpp) through gemmi's STAR parser; compiled as C++17 (the header
// says why).
#include "star_tables.hpp"

#include <filesystem>
#include <stdexcept>

#include <gemmi/cif.hpp>

namespace fusor_match {

std::vector<star_block> read_star_tables(const std::string& path) {
  if (!std::filesystem::is_regular_file(path)) throw std::runtime_error(path + " is not a file that can be read");
  gemmi::cif::Document doc;
  try {
    doc = gemmi::cif::read_file(path);
  } catch (const std::exception& e) {
    // gemmi's parse errors read "file:line:col: what"
    throw std::runtime_error(std::string("cannot parse ") + path + " as STAR: " + e.what());
  }
  std::vector<star_block> out;
  for (const gemmi::cif::Block& b : doc.blocks) {
    star_block block{b.name, {}};
    for (const gemmi::cif::Item& item : b.items) {
      if (item.type != gemmi::cif::ItemType::Loop) continue;
      star_loop loop;
      loop.line = item.line_number;
      for (const std::string& tag : item.loop.tags) loop.tags.push_back(!tag.empty() && tag[0] == '_' ? tag.substr(1) : tag);
      const std::size_t width = item.loop.width();
      for (std::size_t r = 0; width && r < item.loop.length(); ++r) {
        std::vector<std::string> row;
        for (std::size_t c = 0; c < width; ++c) row.push_back(gemmi::cif::as_string(item.loop.val(r, c)));
        loop.rows.push_back(std::move(row));
      }
      block.loops.push_back(std::move(loop));
    }
    out.push_back(std::move(block));
  }
  return out;
}

}  // namespace fusor_match
