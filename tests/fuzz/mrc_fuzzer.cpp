// libFuzzer harness for the MRC reader: any file either reads (header, then the volume converted
// to float32, every voxel touched) or throws fusor::error; nothing may crash, leak, read out of
// bounds, allocate past what the file can hold, or trip UBSan. Seeds: tests/data/mrc (mrcfile's
// files of every mode) and tests/fuzz/seeds/mrc (files fusor-match writes).
#include <cstddef>
#include <cstdint>

#include <fusor/match.hpp>

#include "temp_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto path = fuzz::write_input(".mrc", data, size);
  try {
    const fusor::match::mrc_file f(path);
    (void)f.header().voxel_size();
    const auto v = f.read<fusor::cpu>();
    volatile float sink = 0;
    for (fusor::index_t i = 0; i < v.size(); ++i) sink = sink + v.data()[i];
  } catch (const fusor::error&) {
  }
  return 0;
}
