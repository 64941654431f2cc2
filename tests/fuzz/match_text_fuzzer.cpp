// libFuzzer harness for fusor-match's text readers. The first byte picks the reader, the rest is
// the file: 0 a rotation file (--rotations), 1 a result's rotations.tsv, 2 a result's metadata.json
// read as peaks and preview read it (every field through metadata_field, the parts' records), 3 a
// --memory size. Each either reads or throws fusor::error (or CLI11's parse error); nothing may
// crash, hang, overflow or trip UBSan (an out-of-range double converted to an integer among them).
// Seeds: tests/fuzz/seeds/text (files fusor-match writes, and a rotation file).
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

#include "../../apps/fusor-match/match_run.hpp"
#include "../../apps/fusor-match/peaks_run.hpp"
#include "temp_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  namespace fm = fusor_match;
  const int which = data[0] % 4;
  const auto path = fuzz::write_input(".txt", data + 1, size - 1);
  try {
    if (which == 0) {
      volatile double sink = 0;
      for (const auto& q : fm::read_rotations(path)) sink = sink + q.w;
    } else if (which == 1) {
      volatile double sink = 0;
      for (const auto& q : fm::read_rotation_table(path)) sink = sink + q.x;
    } else if (which == 2) {
      nlohmann::json meta;
      try {
        meta = nlohmann::json::parse(fm::read_text(path));
      } catch (const nlohmann::json::exception&) {
        return 0;  // read_metadata's io_error in words: the text is not JSON
      }
      (void)fm::metadata_field<std::int64_t>(meta, {"statistics", "count"}, path);
      (void)fm::metadata_field<double>(meta, {"statistics", "mean"}, path);
      (void)fm::metadata_field<std::size_t>(meta, {"rotations", "count"}, path);
      (void)fm::metadata_field<std::array<fusor::index_t, 3>>(meta, {"template_shape"}, path);
      (void)fm::metadata_field<std::string>(meta, {"target"}, path);
      (void)fm::metadata_field<std::uintmax_t>(meta, {"parts", "scores.mrc", "bytes"}, path);
    } else {
      (void)fm::parse_bytes(std::string(reinterpret_cast<const char*>(data + 1), size - 1));
    }
  } catch (const fusor::error&) {
  }
  return 0;
}
