// .npy files: round trips for every element type, shape and layout; the NumPy-made fixtures of
// tests/data/npy (made by tests/data/make_npy_fixtures.py) against closed forms; malformed
// headers and data, each with its exception and message; and a fuzz pass that truncates and
// corrupts valid files (every outcome is the original array, an array its corrupted header
// consistently describes, or an io_error/dtype_error; never a crash).
#include "common.hpp"
#include "temp_dir.hpp"
#include "data_dir.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>


using namespace fusor;
using test::index_t;
namespace fs = std::filesystem;
using bytes_t = std::vector<std::byte>;

namespace {

fs::path fixture(const char* name) { return test::data_dir() / "npy" / name; }

struct temp_dir : test::temp_dir {
  temp_dir() : test::temp_dir("npy") {}
};

/// The chars of s as bytes, appended to b.
void append_bytes(bytes_t& b, std::string_view s) {
  for (const char c : s) b.push_back(std::byte(static_cast<unsigned char>(c)));
}

bytes_t read_file(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  REQUIRE(f.good());
  const std::string c((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  bytes_t b;
  append_bytes(b, c);
  return b;
}

void write_file(const fs::path& p, const bytes_t& b) {
  std::ofstream f(p, std::ios::binary);
  f.write(reinterpret_cast<const char*>(b.data()), std::streamsize(b.size()));
  REQUIRE(f.good());
}

/// A .npy file with the given dict written verbatim (no padding added), then the data bytes.
bytes_t npy_file(std::string_view dict, const bytes_t& data, int major = 1, int minor = 0) {
  std::string s = "\x93NUMPY";
  s += char(major);
  s += char(minor);
  const std::size_t len = dict.size();
  const int len_bytes = major == 1 ? 2 : 4;
  for (int k = 0; k < len_bytes; ++k) s += char((len >> (8 * k)) & 0xff);
  s += dict;
  bytes_t b;
  append_bytes(b, s);
  b.insert(b.end(), data.begin(), data.end());
  return b;
}
bytes_t zeros_bytes(std::size_t n) { return bytes_t(n, std::byte{0}); }

template <class T>
std::string expected_descr() {
  if constexpr (std::is_same_v<T, float>) return "<f4";
  else if constexpr (std::is_same_v<T, double>) return "<f8";
  else if constexpr (std::is_same_v<T, std::int32_t>) return "<i4";
  else if constexpr (std::is_same_v<T, std::int64_t>) return "<i8";
  else if constexpr (std::is_same_v<T, std::uint8_t>) return "|u1";
  else if constexpr (std::is_same_v<T, std::int8_t>) return "|i1";
  else if constexpr (std::is_same_v<T, std::int16_t>) return "<i2";
  else if constexpr (std::is_same_v<T, std::uint16_t>) return "<u2";
  else if constexpr (std::is_same_v<T, std::uint32_t>) return "<u4";
  else if constexpr (std::is_same_v<T, std::uint64_t>) return "<u8";
  else if constexpr (std::is_same_v<T, bool>) return "|b1";
  else if constexpr (std::is_same_v<T, std::complex<float>>) return "<c8";
  else return "<c16";
}

/// An array of the shape filled with test::values in C order (bools from test::values<uint8_t>
/// 0/1 bytes rather than test::values<bool>, which keeps the data every test was written against).
template <class T>
array<T> filled(const extents& shape, std::uint64_t seed) {
  array<T> a(shape);
  if constexpr (std::is_same_v<T, bool>) {
    const auto v = test::values<std::uint8_t>(a.size(), 0, 2, seed);
    for (index_t i = 0; i < a.size(); ++i) a.data()[i] = v[std::size_t(i)] != 0;
  } else {
    constexpr bool narrow = sizeof(T) == 1, is_unsigned = std::is_unsigned_v<T>;
    const double lo = is_unsigned ? 0 : (narrow ? -128 : -1000), hi = narrow ? (is_unsigned ? 256 : 128) : 1000;
    const auto v = test::values<T>(a.size(), lo, hi, seed);
    for (index_t i = 0; i < a.size(); ++i) a.data()[i] = v[std::size_t(i)];
  }
  return a;
}

/// Calls f(idx, flat) for every multi-index of the shape in C order.
template <class F>
void for_each_index(const extents& shape, F&& f) {
  const index_t n = shape.numel();
  std::vector<index_t> idx(std::size_t(shape.size()), 0);
  for (index_t flat = 0; flat < n; ++flat) {
    f(idx.data(), flat);
    for (int k = shape.size() - 1; k >= 0; --k) {
      if (++idx[std::size_t(k)] < shape[k]) break;
      idx[std::size_t(k)] = 0;
    }
  }
}

/// Counts the elements of `got` (C order) that differ from expected(idx, flat); checks the shape.
template <class T, class F>
void check_elements(const array<T>& got, const extents& shape, F&& expected) {
  REQUIRE(got.shape() == shape);
  index_t bad = 0;
  for_each_index(shape, [&](const index_t* idx, index_t flat) {
    const T want = expected(idx, flat);
    if (!(got.data()[flat] == want)) {
      if (bad == 0) FAIL_CHECK("first mismatch at flat index " << flat);
      ++bad;
    }
  });
  CHECK(bad == 0);
}

template <class T>
bool same_array(const array<T>& a, const array<T>& b) {
  if (!(a.shape() == b.shape())) return false;
  for (index_t i = 0; i < a.size(); ++i)
    if (!(a.data()[i] == b.data()[i])) return false;
  return true;
}

template <class T>
std::string message_of(const bytes_t& b) {
  try {
    (void)load_npy_bytes<T>(b);
  } catch (const fusor::error& e) {
    return e.what();
  }
  return "(no exception)";
}

}  // namespace

#define NPY_TYPES                                                                                         \
  float, double, std::int8_t, std::int16_t, std::int32_t, std::int64_t, std::uint8_t, std::uint16_t, std::uint32_t, \
      std::uint64_t, bool, std::complex<float>, std::complex<double>

TEST_CASE_TEMPLATE("round trips keep every element at edge sizes, in memory and on disk", T, NPY_TYPES) {
  using S = std::conditional_t<std::is_same_v<T, bool>, std::uint8_t, T>;  // SIMD lanes of bool
  temp_dir dir;
  const fs::path file = dir.path / "a.npy";
  for (index_t n : test::edge_sizes<S>()) {
    CAPTURE(n);
    const array<T> a = filled<T>(extents{n}, std::uint64_t(n) + 3);
    const bytes_t bytes = to_npy_bytes(a);
    const npy_header h = read_npy_header_bytes(bytes);
    CHECK(h.descr == expected_descr<T>());
    CHECK(h.dtype == dtype_name<T>());
    CHECK(h.shape == extents{n});
    CHECK_FALSE(h.fortran_order);
    CHECK_FALSE(h.big_endian);
    CHECK(h.version_major == 1);
    CHECK(h.itemsize == sizeof(T));
    CHECK(h.data_offset % 64 == 0);
    CHECK(char(bytes[h.data_offset - 1]) == '\n');
    CHECK(bytes.size() == h.data_offset + std::size_t(n) * sizeof(T));

    const array<T> b = load_npy_bytes<T>(bytes);
    check_elements(b, a.shape(), [&](const index_t*, index_t i) { return a.data()[i]; });

    save_npy(file, a);
    CHECK(read_file(file) == bytes);
    const array<T> c = load_npy<T>(file);
    check_elements(c, a.shape(), [&](const index_t*, index_t i) { return a.data()[i]; });
  }
}

TEST_CASE_TEMPLATE("0-d, empty and n-d shapes up to the maximum rank round-trip", T, double, std::int32_t, bool,
                   std::complex<float>) {
  temp_dir dir;
  const std::vector<extents> shapes{extents{},        extents{1},          extents{0, 3},     extents{4, 0},
                                    extents{2, 3},    extents{3, 1, 4},    extents{2, 3, 4, 5},
                                    extents{1, 1, 1}, extents{2, 1, 2, 1, 2, 1, 2, 3}};
  for (const extents& s : shapes) {
    CAPTURE(to_string(s));
    const array<T> a = filled<T>(s, 11);
    const fs::path file = dir.path / "nd.npy";
    save_npy(file, a);
    const npy_header h = read_npy_header(file);
    CHECK(h.shape == s);
    CHECK(h.data_offset % 64 == 0);
    const array<T> b = load_npy<T>(file);
    check_elements(b, s, [&](const index_t*, index_t i) { return a.data()[i]; });
  }
}

TEST_CASE_TEMPLATE("views are written in C order whatever their strides", T, float, double, std::int64_t,
                   std::uint8_t, bool, std::complex<double>) {
  temp_dir dir;
  const fs::path file = dir.path / "v.npy";
  array<T> a = filled<T>(extents{3, 4, 5}, 5);
  const T* v = a.data();
  auto check_view = [&](array_view<T> view, auto&& expected) {
    save_npy(file, view);
    CHECK(read_file(file) == to_npy_bytes(view));
    check_elements(load_npy<T>(file), view.shape(), expected);
  };
  SUBCASE("axes permuted (2, 0, 1)") {
    check_view(array_view<T>(a.data(), {5, 3, 4}, {1, 20, 5}),
               [&](const index_t* i, index_t) { return v[i[1] * 20 + i[2] * 5 + i[0]]; });
  }
  SUBCASE("2-d transpose") {
    check_view(array_view<T>(a.data(), {20, 3}, {1, 20}),
               [&](const index_t* i, index_t) { return v[i[1] * 20 + i[0]]; });
  }
  SUBCASE("every axis reversed (negative steps from the last element)") {
    check_view(array_view<T>(a.data() + 59, {3, 4, 5}, {-20, -5, -1}),
               [&](const index_t* i, index_t) { return v[59 - (i[0] * 20 + i[1] * 5 + i[2])]; });
  }
  SUBCASE("middle axis reversed") {
    check_view(array_view<T>(a.data() + 15, {3, 4, 5}, {20, -5, 1}),
               [&](const index_t* i, index_t) { return v[i[0] * 20 + (3 - i[1]) * 5 + i[2]]; });
  }
  SUBCASE("every other element") {
    check_view(array_view<T>(a.data(), {3, 2, 3}, {20, 10, 2}),
               [&](const index_t* i, index_t) { return v[i[0] * 20 + i[1] * 10 + i[2] * 2]; });
  }
  SUBCASE("a broadcast row (stride 0)") {
    check_view(array_view<T>(a.data(), {4, 5}, {0, 1}), [&](const index_t* i, index_t) { return v[i[1]]; });
  }
  SUBCASE("a contiguous view with a size-1 axis of odd stride") {
    check_view(array_view<T>(a.data() + 5, {1, 20}, {7, 1}), [&](const index_t*, index_t f) { return v[5 + f]; });
  }
}

TEST_CASE("expressions are evaluated before writing") {
  temp_dir dir;
  const array<float> a = filled<float>(extents{7, 9}, 2);
  save_npy(dir.path / "e.npy", a * 2.0f + 1.0f);
  check_elements(load_npy<float>(dir.path / "e.npy"), extents{7, 9},
                 [&](const index_t*, index_t i) { return a.data()[i] * 2.0f + 1.0f; });
  const array<std::int32_t> b = filled<std::int32_t>(extents{13}, 4);
  const bytes_t bytes = to_npy_bytes(b - 3);
  check_elements(load_npy_bytes<std::int32_t>(bytes), extents{13},
                 [&](const index_t*, index_t i) { return b.data()[i] - 3; });
  // a transposed operand inside an expression
  array<double> m = filled<double>(extents{3, 4}, 6);
  const array_view<double> mt(m.data(), {4, 3}, {1, 4});
  save_npy(dir.path / "t.npy", mt + 1.0);
  check_elements(load_npy<double>(dir.path / "t.npy"), extents{4, 3},
                 [&](const index_t* i, index_t) { return m.data()[i[1] * 4 + i[0]] + 1.0; });
}

TEST_CASE("NumPy fixtures load with the values NumPy wrote") {
  using c64 = std::complex<float>;
  using c128 = std::complex<double>;
  SUBCASE("float32 (3, 4)") {
    check_elements(load_npy<float>(fixture("f32.npy")), extents{3, 4},
                   [](const index_t*, index_t i) { return float(i) * 0.5f - 2.0f; });
  }
  SUBCASE("float64 (2, 3, 4)") {
    check_elements(load_npy<double>(fixture("f64.npy")), extents{2, 3, 4},
                   [](const index_t*, index_t i) { return (double(i) - 7.25) / 4; });
  }
  SUBCASE("int32 (2, 5)") {
    check_elements(load_npy<std::int32_t>(fixture("i32.npy")), extents{2, 5},
                   [](const index_t*, index_t i) { return std::int32_t(i * 1000003 - 5000000); });
  }
  SUBCASE("int64 (7,)") {
    check_elements(load_npy<std::int64_t>(fixture("i64.npy")), extents{7},
                   [](const index_t*, index_t i) { return std::int64_t((i - 3) * 1000000000000LL + i); });
  }
  SUBCASE("uint8 (4, 4)") {
    check_elements(load_npy<std::uint8_t>(fixture("u8.npy")), extents{4, 4},
                   [](const index_t*, index_t i) { return std::uint8_t((i * 37) % 256); });
  }
  SUBCASE("bool (3, 5)") {
    check_elements(load_npy<bool>(fixture("bool.npy")), extents{3, 5},
                   [](const index_t*, index_t i) { return i % 3 == 0; });
  }
  SUBCASE("complex64 (6,)") {
    check_elements(load_npy<c64>(fixture("c64.npy")), extents{6},
                   [](const index_t*, index_t i) { return c64(float(i) - 2.5f, float(i) * 0.25f); });
  }
  SUBCASE("complex128 (2, 3)") {
    check_elements(load_npy<c128>(fixture("c128.npy")), extents{2, 3},
                   [](const index_t*, index_t i) { return c128(double(i) / 8, -(double(i) + 0.5)); });
  }
  SUBCASE("float16 (2, 5), big-endian float16 (4,) and ml_dtypes' bfloat16 (3, 4), saved as '<V2'") {
    check_elements(load_npy<fusor::float16>(fixture("f16.npy")), extents{2, 5},
                   [](const index_t*, index_t i) { return fusor::float16(double(i) * 0.75 - 3); });
    check_elements(load_npy<fusor::float16>(fixture("be_f16.npy")), extents{4},
                   [](const index_t*, index_t i) { return fusor::float16(double(i - 1) * 1024 + std::pow(0.5, double(i))); });
    const auto bf = load_npy<fusor::bfloat16>(fixture("bf16.npy"));
    check_elements(bf, extents{3, 4}, [](const index_t*, index_t i) { return fusor::bfloat16((double(i) - 5) * 0.5 - std::ldexp(1.0, -130)); });
    CHECK(bf.data()[5].bits == 0x8008);  // -2^-130 = -8 * 2^-133, a bfloat16 subnormal, kept
    CHECK(read_npy_header(fixture("bf16.npy")).dtype == "bfloat16");
  }
  SUBCASE("Fortran-order float64 (3, 4) is transposed into C order") {
    const npy_header h = read_npy_header(fixture("fortran_2d_f64.npy"));
    CHECK(h.fortran_order);
    CHECK(h.shape == extents{3, 4});
    const array<double> a = load_npy<double>(fixture("fortran_2d_f64.npy"));
    CHECK(a.strides() == extents{4, 1});
    check_elements(a, extents{3, 4}, [](const index_t* i, index_t) { return double(10 * i[0] + i[1]); });
  }
  SUBCASE("Fortran-order int32 (2, 3, 4)") {
    check_elements(load_npy<std::int32_t>(fixture("fortran_3d_i32.npy")), extents{2, 3, 4},
                   [](const index_t* i, index_t) { return std::int32_t(100 * i[0] + 10 * i[1] + i[2]); });
  }
  SUBCASE("big-endian float64 >f8") {
    const npy_header h = read_npy_header(fixture("be_f64.npy"));
    CHECK(h.descr == ">f8");
    CHECK(h.big_endian);
    check_elements(load_npy<double>(fixture("be_f64.npy")), extents{5},
                   [](const index_t*, index_t i) { return double(i) * 1.5 - 2; });
  }
  SUBCASE("big-endian int32 >i4") {
    CHECK(read_npy_header(fixture("be_i32.npy")).big_endian);
    check_elements(load_npy<std::int32_t>(fixture("be_i32.npy")), extents{2, 3},
                   [](const index_t*, index_t i) { return std::int32_t(i * -70000 + 12345); });
  }
  SUBCASE("big-endian complex64 >c8 swaps each half") {
    check_elements(load_npy<c64>(fixture("be_c64.npy")), extents{3},
                   [](const index_t*, index_t i) { return c64(float(i) + 0.5f, -2.0f * float(i)); });
  }
  SUBCASE("0-d scalar") {
    const array<double> a = load_npy<double>(fixture("scalar_f64.npy"));
    CHECK(a.ndim() == 0);
    CHECK(a.item() == 3.25);
  }
  SUBCASE("0-size (0, 3)") {
    const array<float> a = load_npy<float>(fixture("empty_0x3_f32.npy"));
    CHECK(a.shape() == extents{0, 3});
    CHECK(a.size() == 0);
  }
  SUBCASE("format version 2.0") {
    const npy_header h = read_npy_header(fixture("v2_i64.npy"));
    CHECK(h.version_major == 2);
    CHECK(h.data_offset == 128);
    check_elements(load_npy<std::int64_t>(fixture("v2_i64.npy")), extents{3, 4},
                   [](const index_t*, index_t i) { return std::int64_t(i * i - 5); });
  }
  SUBCASE("format version 3.0") {
    CHECK(read_npy_header(fixture("v3_f32.npy")).version_major == 3);
    check_elements(load_npy<float>(fixture("v3_f32.npy")), extents{5},
                   [](const index_t*, index_t i) { return float(i) / 4 + 1; });
  }
}

TEST_CASE("saving what NumPy saved gives NumPy's bytes exactly") {
  auto same = [](const char* name, const auto& a) {
    CAPTURE(name);
    CHECK(to_npy_bytes(a) == read_file(fixture(name)));
  };
  same("f32.npy", load_npy<float>(fixture("f32.npy")));
  same("f64.npy", load_npy<double>(fixture("f64.npy")));
  same("i32.npy", load_npy<std::int32_t>(fixture("i32.npy")));
  same("i64.npy", load_npy<std::int64_t>(fixture("i64.npy")));
  same("u8.npy", load_npy<std::uint8_t>(fixture("u8.npy")));
  same("bool.npy", load_npy<bool>(fixture("bool.npy")));
  same("c64.npy", load_npy<std::complex<float>>(fixture("c64.npy")));
  same("c128.npy", load_npy<std::complex<double>>(fixture("c128.npy")));
  same("f16.npy", load_npy<fusor::float16>(fixture("f16.npy")));
  same("bf16.npy", load_npy<fusor::bfloat16>(fixture("bf16.npy")));
  same("scalar_f64.npy", load_npy<double>(fixture("scalar_f64.npy")));
  same("empty_0x3_f32.npy", load_npy<float>(fixture("empty_0x3_f32.npy")));
  // an n-d header exactly as np.save writes it: magic, version 1.0, the little-endian header
  // length 118, the dict, spaces to a total of 128 bytes, '\n'
  const std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3, 4, 5), }";
  const std::string head = std::string("\x93NUMPY\x01\x00\x76\x00", 10) + dict + std::string(52, ' ') + "\n";
  REQUIRE(head.size() == 128);
  bytes_t want_head;
  append_bytes(want_head, head);
  array<float> zeros(extents{2, 3, 4, 5});
  zeros.fill(0.0f);
  const bytes_t nd = to_npy_bytes(zeros);
  REQUIRE(nd.size() == 128 + 120 * sizeof(float));
  CHECK(bytes_t(nd.begin(), nd.begin() + 128) == want_head);
  // a Fortran-order or big-endian file is written back in C order, little-endian
  const npy_header h = read_npy_header_bytes(to_npy_bytes(load_npy<double>(fixture("fortran_2d_f64.npy"))));
  CHECK_FALSE(h.fortran_order);
  CHECK(read_npy_header_bytes(to_npy_bytes(load_npy<double>(fixture("be_f64.npy")))).descr == "<f8");
}

TEST_CASE("a file of another element type is a dtype_error, not a conversion") {
  CHECK_THROWS_WITH_AS(
      load_npy<float>(fixture("f64.npy")),
      doctest::Contains("as float32: expected float32 data, the file holds float64 (descr '<f8'); load it with "
                        "load_npy<double> and convert with .astype<float>()"),
      dtype_error);
  CHECK_THROWS_WITH_AS(load_npy<std::int64_t>(fixture("be_i32.npy")),
                       doctest::Contains("the file holds int32 (descr '>i4')"), dtype_error);
  CHECK_THROWS_WITH_AS(load_npy<bool>(fixture("u8.npy")), doctest::Contains("expected bool data"), dtype_error);
  CHECK_THROWS_AS(load_npy<std::complex<float>>(fixture("c128.npy")), dtype_error);
  // float16 and bfloat16 are two types: neither file loads as the other
  CHECK_THROWS_WITH_AS(load_npy<fusor::bfloat16>(fixture("f16.npy")),
                       doctest::Contains("expected bfloat16 data, the file holds float16 (descr '<f2')"), dtype_error);
  CHECK_THROWS_WITH_AS(load_npy<fusor::float16>(fixture("bf16.npy")),
                       doctest::Contains("expected float16 data, the file holds bfloat16 (descr '<V2')"), dtype_error);
}

TEST_CASE("lenient where Python is: key order, quotes, whitespace, commas, 'L' suffixes, no byte order") {
  bytes_t data(6 * sizeof(float));
  for (int i = 0; i < 6; ++i) {
    const float x = float(i) - 1.5f;
    std::memcpy(data.data() + i * 4, &x, 4);
  }
  auto expect_ok = [&](std::string_view dict, const extents& shape, bool fortran = false) {
    CAPTURE(dict);
    const array<float> a = load_npy_bytes<float>(npy_file(dict, data));
    REQUIRE(a.shape() == shape);
    for_each_index(shape, [&](const index_t* i, index_t flat) {
      const index_t src = fortran ? i[0] + i[1] * shape[0] : flat;
      CHECK(a.data()[flat] == float(src) - 1.5f);
    });
  };
  expect_ok("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }\n", {2, 3});
  expect_ok("{'shape': (6,), 'fortran_order': False, 'descr': '<f4'}", {6});
  expect_ok("{\"descr\": \"<f4\", \"fortran_order\": False, \"shape\": (3, 2)}   \n", {3, 2});
  expect_ok("  {'descr':'<f4','fortran_order':False,'shape':( 2 ,3 ,),}", {2, 3});
  expect_ok("{\n\t'descr': 'f4',\r\n 'fortran_order': False,\n 'shape': (6L,)\n}\n", {6});
  expect_ok("{'descr': '=f4', 'fortran_order': False, 'shape': (1, 6), }", {1, 6});
  expect_ok("{'descr': '<f4', 'fortran_order': True, 'shape': (6,), }", {6});
  expect_ok("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }", {2, 3}, true);
  // bool: any non-zero byte is True (other byte values are not valid C++ bools)
  const bytes_t b = npy_file("{'descr': '|b1', 'fortran_order': False, 'shape': (4,), }",
                             bytes_t{std::byte{0}, std::byte{1}, std::byte{2}, std::byte{0xFF}});
  const array<bool> flags = load_npy_bytes<bool>(b);
  CHECK(flags(0) == false);
  CHECK(flags(1) == true);
  CHECK(flags(2) == true);
  CHECK(flags(3) == true);
  CHECK(load_npy_bytes<bool>(npy_file("{'descr': '?', 'fortran_order': False, 'shape': (), }", bytes_t{std::byte{7}}))
            .item());
}

TEST_CASE("malformed files are io_errors naming the byte, the expectation and the finding") {
  const std::string ok_dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }\n";
  const bytes_t good = npy_file(ok_dict, zeros_bytes(48));
  REQUIRE(load_npy_bytes<float>(good).shape() == extents{3, 4});
  auto bad = [](const bytes_t& b, const std::string& substring) {
    CAPTURE(substring);
    CHECK_THROWS_WITH_AS(load_npy_bytes<float>(b), doctest::Contains(substring.c_str()), io_error);
  };
  auto with_dict = [](std::string_view dict, std::size_t data_bytes = 48) {
    return npy_file(dict, zeros_bytes(data_bytes));
  };

  SUBCASE("magic string") {
    bytes_t b = good;
    b[1] = std::byte{'X'};
    bad(b, "at byte 0: expected the magic string \"\\x93NUMPY\" of a .npy file, found \"\\x93XUMPY\"");
    bad(bytes_t{}, "found an empty file");
    bad(bytes_t(good.begin(), good.begin() + 3), "found \"\\x93NU\"");
  }
  SUBCASE("version") {
    bytes_t b = good;
    b[6] = std::byte{4};
    CHECK(message_of<float>(b) ==
          "fusor: cannot read in-memory .npy data: at byte 6: expected format version 1.0, 2.0 or 3.0, found "
          "version 4.0");
    b[6] = std::byte{1};
    b[7] = std::byte{1};
    bad(b, "found version 1.1");
    bad(bytes_t(good.begin(), good.begin() + 7), "at byte 6: expected the 2-byte format version");
  }
  SUBCASE("header length") {
    bytes_t b = good;
    b[8] = std::byte{0xFF};
    b[9] = std::byte{0xFF};
    bad(b, "at byte 8: expected a header length of at most " + std::to_string(good.size() - 10) + " (the file has " +
               std::to_string(good.size()) + " bytes), found 65535");
    bad(bytes_t(good.begin(), good.begin() + 9), "at byte 8: expected a 2-byte header length");
    // a version 2.0 file has 4 length bytes
    const bytes_t v2 = npy_file(ok_dict, zeros_bytes(48), 2);
    REQUIRE(load_npy_bytes<float>(v2).shape() == extents{3, 4});
    bad(bytes_t(v2.begin(), v2.begin() + 11), "at byte 8: expected a 4-byte header length, found the end of the file (the file has 11 bytes)");
  }
  SUBCASE("descr") {
    bad(with_dict("{'descr': '<U4', 'fortran_order': False, 'shape': (3, 4), }"),
        "at byte 20: expected a descr of an element type fusor supports");
    bad(with_dict("{'descr': '<U4', 'fortran_order': False, 'shape': (3, 4), }"), "found '<U4'");
    bad(with_dict("{'descr': 'O', 'fortran_order': False, 'shape': (3, 4), }"), "found 'O'");
    bad(with_dict("{'descr': '<f16', 'fortran_order': False, 'shape': (3, 4), }"), "found '<f16'");  // long double
    bad(with_dict("{'descr': '<V4', 'fortran_order': False, 'shape': (3, 4), }"), "found '<V4'");
    bad(with_dict("{'descr': '<i16', 'fortran_order': False, 'shape': (3, 4), }"), "found '<i16'");
    bad(with_dict("{'descr': '<f4 ', 'fortran_order': False, 'shape': (3, 4), }"), "found '<f4 '");
    bad(with_dict("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (3, 4), }"),
        "structured dtypes are not supported");
    bad(with_dict("{'descr': '<f4, 'fortran_order': False, 'shape': (3, 4), }"), "expected ',' or '}'");
  }
  SUBCASE("keys") {
    bad(with_dict("{'descr': '<f4', 'fortran_order': False, }"), "expected the key 'shape' in the header dict (it is missing)");
    bad(with_dict("{'descr': '<f4', 'shape': (3, 4), }"), "expected the key 'fortran_order'");
    bad(with_dict("{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), 'extra': 1}"),
        "expected one of the keys 'descr', 'fortran_order', 'shape', found \"'extra': 1}\"");
    bad(with_dict("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }"),
        "the key 'descr' repeats");
    bad(with_dict("{descr: '<f4', 'fortran_order': False, 'shape': (3, 4), }"), "at byte 11: expected a key");
    bad(with_dict("'descr': '<f4', 'fortran_order': False, 'shape': (3, 4)"), "at byte 10: expected '{'");
    bad(with_dict("{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), "), "found the end of the header");
    bad(with_dict("{'descr': '<f4' 'fortran_order': False, 'shape': (3, 4), }"), "expected ',' or '}' after the value of 'descr'");
    bad(with_dict("{'descr': '<f4', 'fortran_order': false, 'shape': (3, 4), }"), "expected True or False");
    bad(with_dict("{'descr': '<f4', 'fortran_order': Falsey, 'shape': (3, 4), }"), "expected True or False");
    bad(with_dict("{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }x\n"),
        "expected only spaces and a newline after the header dict, found \"x\\x0A\"");
    bad(with_dict(std::string("{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }\0", 60)),
        "after the header dict, found \"\\x00\"");
  }
  SUBCASE("shape") {
    bad(with_dict("{'descr': '<f4', 'fortran_order': False, 'shape': (12), }"),
        "a one-dimensional shape is written (5,)");
    bad(with_dict("{'descr': '<f4', 'fortran_order': False, 'shape': 12, }"), "expected a tuple");
    bad(with_dict("{'descr': '<f4', 'fortran_order': False, 'shape': (-3, 4), }"),
        "at byte 61: expected a dimension >= 0 in 'shape', found \"-3, 4), }\"");
    bad(with_dict("{'descr': '<f4', 'fortran_order': False, 'shape': (3, x), }"), "expected a dimension");
    bad(with_dict("{'descr': '<f4', 'fortran_order': False, 'shape': (3.0, 4), }"), "after a dimension");
    bad(with_dict("{'descr': '<f4', 'fortran_order': False, 'shape': (3 4), }"), "expected ',' or ')' in 'shape'");
    bad(with_dict("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,), }"),
        "expected a dimension below 2^63");
    bad(with_dict("{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296), }"),
        "expected a shape whose strides and data fit in 2^63 bytes (zero dimensions counted as 1), found "
        "(4294967296, 4294967296) of float32");
    // a zero before huge dimensions: no data, but the strides of the dimensions after it overflow
    bad(with_dict("{'descr': '<f4', 'fortran_order': False, 'shape': (0, 9223372036854775807, 2), }"),
        "found (0, 9223372036854775807, 2) of float32");
    bad(with_dict("{'descr': '<f8', 'fortran_order': False, 'shape': (3037000500, 0, 3037000500), }"),
        "found (3037000500, 0, 3037000500) of float64");
    bad(with_dict("{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1, 1, 1, 1, 1, 1, 1, 12), }"),
        "expected at most 8 dimensions in 'shape'");
  }
  SUBCASE("data length") {
    const bytes_t shortb = npy_file(ok_dict, zeros_bytes(40));
    const std::size_t start = 10 + ok_dict.size();
    CHECK(message_of<float>(shortb) == "fusor: cannot read in-memory .npy data: at byte " + std::to_string(start) +
                                           ": expected 48 bytes of data (shape (3, 4) of float32), found only 40 "
                                           "bytes before the end of the file");
    bad(npy_file(ok_dict, zeros_bytes(52)),
        "at byte " + std::to_string(start + 48) + ": expected the end of the file after the data (48 bytes of shape "
                                                  "(3, 4) of float32 from byte " +
            std::to_string(start) + "), found 4 more bytes");
    // the header alone can still be inspected
    CHECK(read_npy_header_bytes(shortb).shape == extents{3, 4});
    CHECK(read_npy_header_bytes(shortb).data_offset == start);
  }
}

TEST_CASE("files that cannot be opened, read or written name the path and the reason") {
  temp_dir dir;
  const fs::path missing = dir.path / "missing.npy";
  CHECK_THROWS_WITH_AS(load_npy<float>(missing),
                       doctest::Contains(("cannot open '" + missing.string() + "' for reading: No such file or directory").c_str()),
                       io_error);
  CHECK_THROWS_WITH_AS(read_npy_header(dir.path), doctest::Contains("it is a directory"), io_error);
  const fs::path nowhere = dir.path / "no_such_dir" / "a.npy";
  CHECK_THROWS_WITH_AS(save_npy(nowhere, array<float>{1, 2}),
                       doctest::Contains(("cannot open '" + nowhere.string() + "' for writing: No such file or directory").c_str()),
                       io_error);
  if (fs::exists("/dev/full")) {  // every write fails with ENOSPC, at the latest when fclose flushes
    CHECK_THROWS_WITH_AS(save_npy("/dev/full", array<float>{1, 2}), doctest::Contains("No space left on device"),
                         io_error);
  }
  // a truncated file on disk: the same message as in memory, with the path
  const fs::path cut = dir.path / "cut.npy";
  bytes_t b = read_file(fixture("f64.npy"));
  b.resize(b.size() - 8);
  write_file(cut, b);
  CHECK_THROWS_WITH_AS(load_npy<double>(cut),
                       doctest::Contains(("cannot read .npy file '" + cut.string() +
                                          "': at byte 128: expected 192 bytes of data (shape (2, 3, 4) of float64), "
                                          "found only 184 bytes")
                                             .c_str()),
                       io_error);
}

namespace {

// Loads every truncation of a valid file (always an io_error: the data must end where the file
// ends), an overwrite of every header byte with each of seven chosen values, and a few thousand
// random multi-byte overwrites.
// Each corrupted file must throw io_error/dtype_error or load an array; any other exception
// escapes and fails the test, a crash or a sanitizer report fails the run. A loaded array is
// either the original (the corruption was whitespace) or what a different but valid header
// says: some corruptions make another valid file ((0, 3) -> (0, 93) for an empty array, '>i4'
// -> '<i4'), and then the shape must be the one the header states, the data the same bytes,
// and, when byte order and layout are unchanged, the same elements in the same order.
template <class T>
void fuzz(const bytes_t& original) {
  const array<T> want = load_npy_bytes<T>(original);
  const npy_header h0 = read_npy_header_bytes(original);
  const std::size_t header_end = h0.data_offset;
  long errors = 0, harmless = 0, reinterpreted = 0;
  for (std::size_t len = 0; len < original.size(); ++len) {
    CAPTURE(len);
    CHECK_THROWS_AS(load_npy_bytes<T>(std::span<const std::byte>(original.data(), len)), io_error);
  }
  auto attempt = [&](const bytes_t& b) {
    try {
      const array<T> got = load_npy_bytes<T>(b);
      if (same_array(got, want)) {
        ++harmless;
        return;
      }
      ++reinterpreted;
      const npy_header h = read_npy_header_bytes(b);
      CHECK(h.data_bytes() == h0.data_bytes());
      const bool reordered = (h.fortran_order || h0.fortran_order) && (h.shape.size() > 1 || h0.shape.size() > 1);
      if (h.big_endian == h0.big_endian && !reordered) {
        REQUIRE(got.size() == want.size());
        CHECK(std::equal(got.begin(), got.end(), want.begin()));
      }
    } catch (const io_error&) {
      ++errors;
    } catch (const dtype_error&) {
      ++errors;
    }
  };
  for (std::size_t pos = 0; pos < header_end; ++pos) {
    for (const int value : {0x00, int('}'), int('9'), int(' '), 0xFF, int('\n'), int(',')}) {
      CAPTURE(pos);
      CAPTURE(value);
      bytes_t b = original;
      b[pos] = std::byte(value);
      attempt(b);
    }
  }
  // a few thousand multi-byte corruptions of the header, from a fixed seed
  test::lcg g{42};
  const unsigned char alphabet[] = {0, '}', '{', '9', '0', ' ', 0xFF, '\'', '(', ')', ',', ':', 'L', '<', '>', 'f'};
  for (int trial = 0; trial < 3000; ++trial) {
    bytes_t b = original;
    const int flips = 1 + int(g.next() * 3);
    for (int k = 0; k < flips; ++k) {
      const auto pos = std::size_t(g.next() * double(header_end));
      b[pos] = std::byte{alphabet[std::size_t(g.next() * sizeof alphabet)]};
    }
    attempt(b);
  }
  INFO(errors << " errors, " << harmless << " harmless, " << reinterpreted << " other valid files");
  CHECK(errors > 0);
  CHECK(harmless > 0);  // at least the overwrites of padding spaces with spaces
}

}  // namespace

TEST_CASE("fuzz: truncated and corrupted files load the original or throw, never crash") {
  SUBCASE("fusor-written float64 (2, 3)") { fuzz<double>(to_npy_bytes(filled<double>(extents{2, 3}, 9))); }
  SUBCASE("fusor-written 0-d int64") { fuzz<std::int64_t>(to_npy_bytes(filled<std::int64_t>(extents{}, 9))); }
  SUBCASE("Fortran int32") { fuzz<std::int32_t>(read_file(fixture("fortran_3d_i32.npy"))); }
  SUBCASE("big-endian int32") { fuzz<std::int32_t>(read_file(fixture("be_i32.npy"))); }
  SUBCASE("bool") { fuzz<bool>(read_file(fixture("bool.npy"))); }
  SUBCASE("version 2.0 int64") { fuzz<std::int64_t>(read_file(fixture("v2_i64.npy"))); }
  SUBCASE("0-size float32") { fuzz<float>(read_file(fixture("empty_0x3_f32.npy"))); }
}
