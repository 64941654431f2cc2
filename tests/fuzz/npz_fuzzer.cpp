// libFuzzer harness for the .npz reader: any archive either lists its entries and loads each (as
// float64: other types are a dtype_error before their data is read; the raw bytes of every entry)
// or throws fusor::error; nothing may crash, leak, allocate past what the archive can hold (a
// claimed size is bounded by the entry's stored bytes) or trip UBSan. Seeds: tests/fuzz/seeds/npz
// (archives fusor writes, stored and deflated).
#include <cstddef>
#include <cstdint>

#include <fusor/base.hpp>

#include "temp_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto path = fuzz::write_input(".npz", data, size);
  try {
    const fusor::npz_archive z(path);
    for (const std::string& name : z.names()) {
      try {
        volatile std::size_t sink = z.bytes(name).size();
        const auto h = z.header(name);
        sink = sink + h.shape.size();
        const auto a = z.load<double>(name);
        for (fusor::index_t i = 0; i < a.size(); ++i) sink = sink + std::size_t(a.data()[i] != 0);
      } catch (const fusor::error&) {
      }
    }
  } catch (const fusor::error&) {
  }
  return 0;
}
