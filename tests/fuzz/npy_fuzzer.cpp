// libFuzzer harness for the .npy reader: any bytes either load (as the element type the header
// names) or throw fusor::error; nothing may crash, leak, overflow or trip UBSan. Built with
// clang's -fsanitize=fuzzer,address,undefined in the asan preset (a short smoke run in ctest) and
// run for as long as asked by scripts/fuzz. Seeds: tests/data/npy (NumPy's own files).
#include <cstddef>
#include <cstdint>
#include <span>

#include <fusor/fusor.hpp>

namespace {
template <class T>
void load_as(std::span<const std::byte> bytes) {
  const fusor::array<T> a = fusor::load_npy_bytes<T>(bytes);
  // touch every element so a wrong size or stride is a read out of bounds
  volatile std::size_t sink = 0;
  const auto* p = reinterpret_cast<const unsigned char*>(a.data());
  for (std::size_t i = 0; i < std::size_t(a.size()) * sizeof(T); ++i) sink = sink + p[i];
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(data), size);
  try {
    const fusor::npy_header h = fusor::read_npy_header_bytes(bytes);
    // load with the type the header names (the others are a dtype_error before any data is read)
    if (h.dtype == "float32") load_as<float>(bytes);
    else if (h.dtype == "float64") load_as<double>(bytes);
    else if (h.dtype == "int8") load_as<std::int8_t>(bytes);
    else if (h.dtype == "int16") load_as<std::int16_t>(bytes);
    else if (h.dtype == "int32") load_as<std::int32_t>(bytes);
    else if (h.dtype == "int64") load_as<std::int64_t>(bytes);
    else if (h.dtype == "uint8") load_as<std::uint8_t>(bytes);
    else if (h.dtype == "uint16") load_as<std::uint16_t>(bytes);
    else if (h.dtype == "uint32") load_as<std::uint32_t>(bytes);
    else if (h.dtype == "uint64") load_as<std::uint64_t>(bytes);
    else if (h.dtype == "bool") load_as<bool>(bytes);
    else if (h.dtype == "complex64") load_as<std::complex<float>>(bytes);
    else if (h.dtype == "complex128") load_as<std::complex<double>>(bytes);
    load_as<float>(bytes);  // and as a type it may not be: a dtype_error, not a conversion
  } catch (const fusor::error&) {
  }
  return 0;
}
