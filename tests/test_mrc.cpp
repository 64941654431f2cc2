// MRC files: the fixtures written by the mrcfile package (tests/data/make_mrc_fixtures.py) read
// against the volumes NumPy computed from each formula; fusor's files against mrcfile's header
// words and read back in every mode; float16 against the compiler's own conversion; boxes
// against the whole volume; and the reader on truncated and corrupted files, where every outcome
// must be a volume or an io_error.
#include <doctest/doctest.h>

#include <fusor/io/npy.hpp>
#include <fusor/match/mrc.hpp>

#include "temp_dir.hpp"
#include "data_dir.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>


namespace match = fusor::match;
namespace fs = std::filesystem;
using fusor::extents;
using fusor::index_t;

namespace {

fs::path fixture(const std::string& name) { return test::data_dir() / "mrc" / name; }

struct temp_dir : test::temp_dir {
  temp_dir() : test::temp_dir("mrc") {}
};

std::vector<unsigned char> file_bytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}
void put_bytes(const fs::path& p, const std::vector<unsigned char>& b) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(b.data()), std::streamsize(b.size()));
}
std::int32_t word(const std::vector<unsigned char>& b, std::size_t at) {
  std::int32_t v;
  std::memcpy(&v, b.data() + at, 4);
  return v;
}
void set_word(std::vector<unsigned char>& b, std::size_t at, std::int32_t v) { std::memcpy(b.data() + at, &v, 4); }

std::vector<float> values(const fusor::array<float>& a) { return {a.data(), a.data() + a.size()}; }

struct fixture_case {
  const char* name;
  match::mrc_mode mode;
  std::array<double, 3> voxel, origin;
};

}  // namespace

TEST_CASE("mrc: mrcfile's fixtures in every mode and axis order read as NumPy's volumes") {
  const std::array<double, 3> v1{1.5, 2.0, 2.5}, o1{10.0, -20.0, 30.5}, v3{3, 3, 3}, zero{0, 0, 0};
  const fixture_case cases[] = {{"mode0_i8", match::mrc_mode::int8, v1, o1},       {"mode1_i16", match::mrc_mode::int16, v1, o1},
                                {"mode2_f32", match::mrc_mode::float32, v1, o1},   {"mode6_u16", match::mrc_mode::uint16, v1, o1},
                                {"mode12_f16", match::mrc_mode::float16, v1, o1},  {"mode2_be", match::mrc_mode::float32, v1, o1},
                                {"crs_321", match::mrc_mode::float32, v3, zero},   {"crs_132", match::mrc_mode::float32, v3, zero},
                                {"ext_header", match::mrc_mode::float32, v3, zero}, {"nstart", match::mrc_mode::float32, v3, {12, -6, 18}}};
  for (const fixture_case& c : cases) {
    CAPTURE(c.name);
    const auto want = fusor::load_npy<float>(fixture(std::string(c.name) + ".npy"));
    const auto got = match::read_mrc(fixture(std::string(c.name) + ".mrc"));
    REQUIRE(got.data.shape() == want.shape());
    CHECK(values(got.data) == values(want));
    CHECK(got.header.mode == c.mode);
    for (std::size_t a = 0; a < 3; ++a) {
      CHECK(got.voxel_size[a] == doctest::Approx(c.voxel[a]).epsilon(1e-6));
      CHECK(got.origin[a] == doctest::Approx(c.origin[a]).epsilon(1e-6));
    }
    CHECK(got.header.big_endian == (std::string(c.name) == "mode2_be"));
    REQUIRE(!got.header.labels.empty());
    CHECK(got.header.labels[0].rfind("Created by mrcfile.py", 0) == 0);
  }
  const auto ext = match::read_mrc_header(fixture("ext_header.mrc"));
  CHECK(ext.nsymbt == 80);
  CHECK(ext.exttyp == "MRCO");
  CHECK(ext.data_offset() == 1104);
  const auto crs = match::read_mrc_header(fixture("crs_132.mrc"));
  CHECK(crs.axis_order == std::array<std::int32_t, 3>{1, 3, 2});
  CHECK(crs.shape() == extents{5, 3, 4});
  CHECK(crs.nx == 5);
  CHECK(crs.ny == 4);
  CHECK(crs.nz == 3);
}

TEST_CASE("mrc: boxes read from the mapped file equal the same box of the whole volume") {
  for (const char* name : {"mode1_i16.mrc", "crs_132.mrc", "crs_321.mrc", "mode2_be.mrc"}) {
    CAPTURE(name);
    const match::mrc_file f(fixture(name));
    const auto whole = f.read();
    const extents s = f.shape();
    for (index_t x = 0; x < s[0]; x += 2)
      for (index_t y = 0; y < s[1]; ++y)
        for (index_t z = 0; z < s[2]; z += 3) {
          const extents box{s[0] - x, std::min<index_t>(2, s[1] - y), s[2] - z};
          const auto part = f.read({x, y, z}, box);
          REQUIRE(part.shape() == box);
          bool same = true;
          for (index_t i = 0; i < box[0]; ++i)
            for (index_t j = 0; j < box[1]; ++j)
              for (index_t k = 0; k < box[2]; ++k)
                same = same && part.data()[(i * box[1] + j) * box[2] + k] ==
                                   whole.data()[((x + i) * s[1] + (y + j)) * s[2] + (z + k)];
          CHECK(same);
        }
    CHECK(f.read({0, 0, 0}, extents{0, 1, 1}).size() == 0);
    CHECK_THROWS_AS(f.read({1, 0, 0}, s), fusor::index_error);
    CHECK_THROWS_AS(f.read({-1, 0, 0}, extents{1, 1, 1}), fusor::index_error);
    CHECK_THROWS_AS(f.read({0, 0, 0}, extents{1, 1}), fusor::shape_error);
  }
}

TEST_CASE("mrc: fusor's files carry mrcfile's header words and read back in every mode") {
  temp_dir dir;
  // the same volume and cell as mrcfile's mode2_f32.mrc: the words that describe the volume agree
  const auto want = fusor::load_npy<float>(fixture("mode2_f32.npy"));
  match::mrc_write_options o;
  o.voxel_size = {1.5, 2.0, 2.5};
  o.origin = {10.0, -20.0, 30.5};
  match::write_mrc(dir.path / "ours.mrc", want, o);
  const auto ours = file_bytes(dir.path / "ours.mrc"), theirs = file_bytes(fixture("mode2_f32.mrc"));
  REQUIRE(ours.size() == theirs.size());
  for (std::size_t at = 0; at < 76; at += 4) {  // NX..MAPS
    CAPTURE(at);
    CHECK(word(ours, at) == word(theirs, at));
  }
  for (std::size_t at : {88u, 92u, 196u, 200u, 204u, 208u, 212u}) {  // ISPG NSYMBT ORIGIN MAP MACHST
    CAPTURE(at);
    CHECK(word(ours, at) == word(theirs, at));
  }
  for (std::size_t at : {76u, 80u, 84u, 216u}) {  // DMIN DMAX DMEAN RMS, float against NumPy's
    CAPTURE(at);
    float a, b;
    std::memcpy(&a, ours.data() + at, 4);
    std::memcpy(&b, theirs.data() + at, 4);
    CHECK(a == doctest::Approx(b).epsilon(1e-6));
  }
  CHECK(std::memcmp(ours.data() + 1024, theirs.data() + 1024, ours.size() - 1024) == 0);  // the data, byte for byte

  // every mode: integral values in range come back exactly; float16 to nearest
  struct mode_case {
    match::mrc_mode mode;
    float lo, hi;
  };
  const extents s{5, 4, 3};
  for (const mode_case m : {mode_case{match::mrc_mode::int8, -128, 127}, mode_case{match::mrc_mode::int16, -32768, 32767},
                            mode_case{match::mrc_mode::uint16, 0, 65535}, mode_case{match::mrc_mode::float32, -1e30f, 1e30f},
                            mode_case{match::mrc_mode::float16, -65504, 65504}}) {
    CAPTURE(int(m.mode));
    fusor::array<float> v(s);
    for (index_t i = 0; i < v.size(); ++i) v.data()[i] = i == 0 ? m.lo : i == 1 ? m.hi : std::round(m.lo + (m.hi - m.lo) * float(i) / 61.0f);
    o.mode = m.mode;
    o.label = "a label of exactly eighty characters " + std::string(43, '.');
    REQUIRE(o.label.size() == 80);
    match::write_mrc(dir.path / "mode.mrc", v, o);
    const auto back = match::read_mrc(dir.path / "mode.mrc");
    CHECK(back.header.mode == m.mode);
    CHECK(back.header.labels == std::vector<std::string>{o.label});
    CHECK(back.header.nversion == 20140);
    REQUIRE(back.data.shape() == s);
    double lo = 1e300, hi = -1e300, sum = 0, sum2 = 0;
    for (index_t i = 0; i < v.size(); ++i) {
      const float stored = back.data.data()[i];
      if (m.mode == match::mrc_mode::float16) CHECK(std::abs(stored - v.data()[i]) <= std::abs(v.data()[i]) * 0x1p-11f);
      else CHECK(stored == v.data()[i]);
      lo = std::min(lo, double(stored));
      hi = std::max(hi, double(stored));
      sum += stored;
      sum2 += double(stored) * stored;
    }
    const double mean = sum / double(v.size());
    CHECK(back.header.dmin == float(lo));
    CHECK(back.header.dmax == float(hi));
    CHECK(back.header.dmean == doctest::Approx(mean).epsilon(1e-6).scale(std::abs(hi)));
    CHECK(back.header.rms == doctest::Approx(std::sqrt(sum2 / double(v.size()) - mean * mean)).epsilon(1e-5));
    for (std::size_t a = 0; a < 3; ++a) {
      CHECK(back.voxel_size[a] == doctest::Approx(o.voxel_size[a]).epsilon(1e-6));
      CHECK(back.origin[a] == o.origin[a]);
    }
  }
  // an empty volume, and the file replaced whole on a second write; no partial file left over
  match::write_mrc(dir.path / "empty.mrc", fusor::array<float>(extents{0, 3, 2}));
  CHECK(match::read_mrc(dir.path / "empty.mrc").data.shape() == extents{0, 3, 2});
  std::size_t partial = 0;
  for (const auto& e : fs::directory_iterator(dir.path)) partial += e.path().filename().string().find("partial") != std::string::npos;
  CHECK(partial == 0);
}

TEST_CASE("mrc: writing what a mode cannot hold is a value_error, nothing clipped") {
  temp_dir dir;
  const fs::path p = dir.path / "bad.mrc";
  fusor::array<float> v(extents{2, 2, 2});
  for (index_t i = 0; i < 8; ++i) v.data()[i] = float(i);
  match::mrc_write_options o;
  const auto fails = [&](match::mrc_mode mode, float value, const char* text) {
    CAPTURE(text);
    v.data()[5] = value;
    o.mode = mode;
    CHECK_THROWS_WITH_AS(match::write_mrc(p, v, o), doctest::Contains(text), fusor::value_error);
    CHECK(!fs::exists(p));
    v.data()[5] = 5.0f;
  };
  fails(match::mrc_mode::int8, 128.0f, "int8");
  fails(match::mrc_mode::int8, 1.5f, "not an integer");
  fails(match::mrc_mode::int16, -40000.0f, "int16");
  fails(match::mrc_mode::uint16, -1.0f, "uint16");
  fails(match::mrc_mode::uint16, NAN, "uint16");
  fails(match::mrc_mode::float16, 70000.0f, "float16");
  fails(match::mrc_mode::float16, 65520.0f, "float16");
  o = {};
  o.voxel_size = {1, -1, 1};
  CHECK_THROWS_AS(match::write_mrc(p, v, o), fusor::value_error);
  o = {};
  o.origin = {0, NAN, 0};
  CHECK_THROWS_AS(match::write_mrc(p, v, o), fusor::value_error);
  o = {};
  o.label = std::string(81, 'x');
  CHECK_THROWS_AS(match::write_mrc(p, v, o), fusor::value_error);
  o = {};
  o.mode = match::mrc_mode(4);
  CHECK_THROWS_WITH_AS(match::write_mrc(p, v, o), doctest::Contains("unsupported mode 4"), fusor::value_error);
  CHECK_THROWS_AS(match::write_mrc(p, fusor::array<float>(extents{2, 2}), {}), fusor::shape_error);
  CHECK_THROWS_AS(match::write_mrc(dir.path / "no" / "such" / "dir.mrc", v, {}), fusor::io_error);
  CHECK(!fs::exists(p));
}

TEST_CASE("mrc: float16 conversion agrees with the compiler's, every half value round trips") {
  for (std::uint32_t h = 0; h < 65536; ++h) {
    const float f = match::detail::mrc::half_value(std::uint16_t(h));
    if (std::isnan(f)) {
      CHECK(((h >> 10) & 0x1f) == 0x1f);
      CHECK(std::isnan(match::detail::mrc::half_value(match::detail::mrc::half_bits(f))));
    } else if (match::detail::mrc::half_bits(f) != h) {
      FAIL_CHECK("half " << h << " -> " << f << " -> " << match::detail::mrc::half_bits(f));
    }
  }
  // hand cases: the largest half, ties to even at the subnormal end and between normals
  CHECK(match::detail::mrc::half_value(0x7bff) == 65504.0f);
  CHECK(match::detail::mrc::half_bits(65519.0f) == 0x7bff);
  CHECK(match::detail::mrc::half_bits(0x1p-24f) == 0x0001);
  CHECK(match::detail::mrc::half_bits(0x1p-25f) == 0x0000);        // half way to 2^-24: to even (0)
  CHECK(match::detail::mrc::half_bits(0x1.8p-24f) == 0x0002);      // 1.5 ulp: to even (2)
  CHECK(match::detail::mrc::half_bits(1.0f + 0x1p-11f) == 0x3c00);  // tie between 1 and 1 + 2^-10: to even
  CHECK(match::detail::mrc::half_bits(1.0f + 0x1.8p-10f) == 0x3c02);
  CHECK(match::detail::mrc::half_bits(-2.0f) == 0xc000);
#if defined(__FLT16_MAX__)
  std::mt19937 g(5);
  std::uniform_int_distribution<std::uint32_t> bits;
  int mismatches = 0;
  for (int i = 0; i < 200000; ++i) {
    float f = std::bit_cast<float>(bits(g));
    if (!std::isfinite(f) || std::abs(f) >= 65520.0f) f = std::ldexp(float(i % 2000) - 1000.0f, -(i % 40));
    const _Float16 c = static_cast<_Float16>(f);
    std::uint16_t want;
    std::memcpy(&want, &c, 2);
    mismatches += match::detail::mrc::half_bits(f) != want;
  }
  CHECK(mismatches == 0);
#endif
}

TEST_CASE("mrc: damaged files are io_errors that say what was expected and found") {
  temp_dir dir;
  const fs::path p = dir.path / "damaged.mrc";
  const auto good = file_bytes(fixture("mode2_f32.mrc"));
  const auto fails = [&](std::vector<unsigned char> b, const char* text) {
    CAPTURE(text);
    put_bytes(p, b);
    CHECK_THROWS_WITH_AS(match::read_mrc(p), doctest::Contains(text), fusor::io_error);
  };
  {
    auto b = good;
    set_word(b, 12, 4);
    fails(b, "unsupported mode 4");
  }
  {
    auto b = good;
    set_word(b, 64, 1);
    set_word(b, 68, 1);
    fails(b, "permutation of (1, 2, 3), found (1, 1, 3)");
  }
  {
    auto b = good;
    set_word(b, 0, -7);
    fails(b, "non-negative (NX, NY, NZ)");
  }
  {
    auto b = good;
    set_word(b, 92, -1);
    fails(b, "extended header length");
  }
  {
    auto b = good;
    set_word(b, 92, 1 << 30);
    fails(b, "truncated");
  }
  {
    auto b = good;
    for (std::size_t at : {0u, 4u, 8u}) set_word(b, at, 2147483647);
    fails(b, "more than 2^63 bytes");
  }
  {
    auto b = good;
    std::int32_t pam;
    std::memcpy(&pam, "PAM ", 4);
    set_word(b, 208, pam);
    fails(b, "\"MAP \" at byte 208");
  }
  {
    auto b = good;
    set_word(b, 220, 11);
    fails(b, "labels");
  }
  {
    auto b = good;
    b.push_back(0);
    fails(b, "1 bytes after the data");
  }
  {
    auto b = good;
    b.pop_back();
    fails(b, "truncated");
  }
  fails(std::vector<unsigned char>(good.begin(), good.begin() + 100), "at least the 1024-byte MRC header");
  fails({}, "found a file of 0 bytes");
  CHECK_THROWS_WITH_AS(match::read_mrc(dir.path / "missing.mrc"), doctest::Contains("cannot open"), fusor::io_error);
  CHECK_THROWS_WITH_AS(match::read_mrc(dir.path), doctest::Contains("not a regular file"), fusor::io_error);
}

TEST_CASE("mrc: fuzz: every truncation and random corruption is a volume or an io_error") {
  temp_dir dir;
  const fs::path p = dir.path / "fuzz.mrc";
  std::mt19937 g(12345);
  int read = 0, rejected = 0;
  for (const char* name : {"mode0_i8.mrc", "mode12_f16.mrc", "mode2_be.mrc", "crs_132.mrc", "ext_header.mrc"}) {
    CAPTURE(name);
    const auto good = file_bytes(fixture(name));
    // every truncation
    for (std::size_t n = 0; n < good.size(); n += (n < 1000 ? 37 : 1)) {
      put_bytes(p, std::vector<unsigned char>(good.begin(), good.begin() + std::ptrdiff_t(n)));
      CHECK_THROWS_AS(match::read_mrc(p), fusor::io_error);
    }
    // one to four random bytes of the header (or its words) replaced
    for (int trial = 0; trial < 600; ++trial) {
      auto b = good;
      const int k = 1 + int(g() % 4);
      for (int i = 0; i < k; ++i) {
        const std::size_t at = trial % 2 ? g() % 1024 : 4 * (g() % 56);  // anywhere, or the leading words
        b[at] = static_cast<unsigned char>(g() % 3 == 0 ? 0xff : g());
      }
      put_bytes(p, b);
      try {
        const auto v = match::read_mrc(p);
        const auto h = match::read_mrc_header(p);
        CHECK(v.data.shape() == h.shape());
        CHECK(std::uint64_t(v.data.size()) * h.itemsize() + h.data_offset() == b.size());
        ++read;
      } catch (const fusor::io_error&) {
        ++rejected;
      }
    }
  }
  MESSAGE("fuzz: ", read, " damaged files still read, ", rejected, " rejected");
  CHECK(read > 0);
  CHECK(rejected > 0);
}
