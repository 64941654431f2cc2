#pragma once
// MRC / CCP4 volume files (the MRC2014 format that RELION, IMOD, pyTME and mrcfile write).
//
// A file holds a 1024-byte header, NSYMBT bytes of extended header, and nx * ny * nz values
// with the column index fastest, then the row, then the section. MAPC, MAPR and MAPS name the
// axis (1 = X, 2 = Y, 3 = Z) that columns, rows and sections run along. fusor reads a file into a
// float volume indexed [x, y, z] (the axis convention of the whole match layer, and of pyTME's
// Density), whatever the file's axis order: element [x, y, z] is the value at column, row and
// section given by those coordinates on the axes MAPC, MAPR, MAPS name. (pyTME 0.3.6 agrees for
// four of the six orders; for (1, 3, 2) and (2, 1, 3) its Density permutes the axes otherwise,
// which tests/data/make_mrc_fixtures.py's crs_132.mrc shows. fusor follows the format.)
//
// Modes read and written: 0 (int8, signed as MRC2014 and mrcfile have it), 1 (int16), 2
// (float32), 6 (uint16), 12 (float16); either byte order is read (MACHST, or the header's
// plausible reading where MACHST is blank). Every value of these modes is exact in float. Writing
// an integer mode requires integral values in range, and float16 finite values up to 65504
// (rounded to nearest, the one lossy mode), each a value_error otherwise: nothing is clipped.
//
// The voxel size along X, Y, Z is CELLA / (MX, MY, MZ) in Å (0 where the file says 0); the
// origin is the header's ORIGIN in Å, or, where that is 0 and (NXSTART, NYSTART, NZSTART) is not,
// the start times the voxel size (as pyTME and ChimeraX read it).
//
// mrc_file maps a file into memory (POSIX mmap) and checks its header against its size before
// anything is read; read() converts the whole volume and read(start, shape) a box of it, so a
// tile of a tomogram larger than memory reads only its own pages. A truncated or inconsistent
// file, a mode not listed above or an axis order that is not a permutation is an io_error naming
// the file, what was expected and what was found. write_mrc writes to a temporary file beside
// the target and renames it when complete, so an interrupted write leaves no partial file.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cerrno>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <string>
#include <system_error>
#include <type_traits>
#include <utility>
#include <vector>

#include "../core/array.hpp"
#include "../core/error.hpp"
#include "../core/transfer.hpp"
#include "interpolation.hpp"
#include "../core/ext.hpp"

namespace fusor::match {

/// The element types of MRC files that fusor reads and writes (the MODE word).
enum class mrc_mode : std::int32_t { int8 = 0, int16 = 1, float32 = 2, uint16 = 6, float16 = 12 };

/// The header of an MRC file, its words as stored (after byte swapping).
struct mrc_header {
  std::int32_t nx = 0, ny = 0, nz = 0;  ///< columns, rows, sections
  mrc_mode mode = mrc_mode::float32;
  std::int32_t nxstart = 0, nystart = 0, nzstart = 0;
  std::int32_t mx = 0, my = 0, mz = 0;  ///< grid intervals along X, Y, Z
  std::array<float, 3> cella{};         ///< cell lengths along X, Y, Z (Å)
  std::array<float, 3> cellb{90.0f, 90.0f, 90.0f};
  std::array<std::int32_t, 3> axis_order{1, 2, 3};  ///< MAPC, MAPR, MAPS
  float dmin = 0.0f, dmax = 0.0f, dmean = 0.0f, rms = 0.0f;
  std::int32_t ispg = 1;
  std::int32_t nsymbt = 0;   ///< bytes of extended header after the 1024
  std::string exttyp;        ///< the extended header's type ("FEI1", "MRCO"...), blanks dropped
  std::int32_t nversion = 0;
  std::array<float, 3> origin{};  ///< ORIGIN, X, Y, Z (Å)
  std::vector<std::string> labels;
  bool big_endian = false;

  /// Bytes per value of the mode.
  std::size_t itemsize() const {
    switch (mode) {
      case mrc_mode::int8: return 1;
      case mrc_mode::int16: case mrc_mode::uint16: case mrc_mode::float16: return 2;
      default: return 4;
    }
  }
  /// Where the data starts.
  std::size_t data_offset() const { return 1024 + std::size_t(nsymbt); }
  /// The volume's shape (X, Y, Z): the lengths of columns, rows and sections put on the axes
  /// MAPC, MAPR, MAPS name.
  extents shape() const {
    std::array<index_t, 3> s{};
    s[std::size_t(axis_order[0] - 1)] = nx;
    s[std::size_t(axis_order[1] - 1)] = ny;
    s[std::size_t(axis_order[2] - 1)] = nz;
    return {s[0], s[1], s[2]};
  }
  /// The voxel size along X, Y, Z in Å: CELLA / (MX, MY, MZ), 0 where either is 0.
  std::array<double, 3> voxel_size() const {
    const std::array<std::int32_t, 3> m{mx, my, mz};
    std::array<double, 3> v{};
    for (std::size_t a = 0; a < 3; ++a) v[a] = m[a] > 0 ? double(cella[a]) / double(m[a]) : 0.0;
    return v;
  }
  /// The origin (X, Y, Z) in Å: ORIGIN, or the start of the grid times the voxel size where
  /// ORIGIN is 0 and the start is not.
  std::array<double, 3> origin_angstrom() const {
    std::array<double, 3> o{double(origin[0]), double(origin[1]), double(origin[2])};
    const std::array<std::int32_t, 3> start_crs{nxstart, nystart, nzstart};
    if (o == std::array<double, 3>{} && start_crs != std::array<std::int32_t, 3>{}) {
      const auto v = voxel_size();
      for (std::size_t k = 0; k < 3; ++k) {
        const std::size_t a = std::size_t(axis_order[k] - 1);
        o[a] = double(start_crs[k]) * v[a];
      }
    }
    return o;
  }
};

/// A volume read from an MRC file with what its header says about it.
template <class B = cpu>
struct mrc_volume {
  array<float, B> data;  ///< indexed [x, y, z]
  mrc_header header;
  std::array<double, 3> voxel_size{};  ///< Å along X, Y, Z
  std::array<double, 3> origin{};      ///< Å
};

struct mrc_write_options {
  /// Å along X, Y, Z; written as CELLA = shape times voxel size, (MX, MY, MZ) = the shape.
  std::array<double, 3> voxel_size{1.0, 1.0, 1.0};
  /// ORIGIN (X, Y, Z) in Å.
  std::array<double, 3> origin{0.0, 0.0, 0.0};
  mrc_mode mode = mrc_mode::float32;
  /// The first label (at most 80 characters; longer is a value_error).
  std::string label = "fusor";
};

namespace detail::mrc {

inline std::uint16_t half_bits(float f) {
  const std::uint32_t x = std::bit_cast<std::uint32_t>(f), sign = (x >> 16) & 0x8000u, ax = x & 0x7fffffffu;
  if (ax >= 0x7f800000u) return std::uint16_t(sign | 0x7c00u | (ax > 0x7f800000u ? 0x200u : 0u));  // inf, NaN
  if (ax < 0x38800000u) {  // below 2^-14: a subnormal half, m 2^-24 (the product is exact)
    const float m = std::nearbyint(std::bit_cast<float>(ax) * 16777216.0f);
    return std::uint16_t(sign | std::uint32_t(m));  // m = 1024 carries into the smallest normal
  }
  std::uint32_t h = (ax >> 13) - (112u << 10);  // rebias the exponent, keep 10 mantissa bits
  const std::uint32_t rest = ax & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h;  // to nearest, ties to even
  return std::uint16_t(sign | h);
}
inline float half_value(std::uint16_t h) {
  const std::uint32_t sign = std::uint32_t(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
  if (e == 0) return std::bit_cast<float>(sign) + (sign ? -1.0f : 1.0f) * float(m) * 5.9604644775390625e-08f;
  if (e == 31) return std::bit_cast<float>(sign | 0x7f800000u | (m << 13));
  return std::bit_cast<float>(sign | ((e + 112u) << 23) | (m << 13));
}

template <class U>
U load(const unsigned char* p, bool swap) {
  unsigned char b[sizeof(U)];
  std::memcpy(b, p, sizeof(U));
  if (swap) std::reverse(b, b + sizeof(U));
  U v;
  std::memcpy(&v, b, sizeof(U));
  return v;
}
template <class U>
void store(unsigned char* p, U v) {
  std::memcpy(p, &v, sizeof(U));  // little-endian, as written
}

/// The stored type of a mode (float16 as its bits).
template <mrc_mode M>
using stored_t = std::conditional_t<M == mrc_mode::int8, std::int8_t,
                 std::conditional_t<M == mrc_mode::int16, std::int16_t,
                 std::conditional_t<M == mrc_mode::float32, float, std::uint16_t>>>;

/// The value of mode M stored at p (bytes swapped when Swap).
template <mrc_mode M, bool Swap>
float value_at(const unsigned char* p) {
  const auto v = load<stored_t<M>>(p, Swap);
  if constexpr (M == mrc_mode::float16) return half_value(v);
  else return float(v);
}

/// Calls f(std::integral_constant<mrc_mode, M>) for the mode at run time: each conversion loop is
/// compiled once per mode, with no branch per value.
template <class F>
void with_mode(mrc_mode m, F&& f) {
  switch (m) {
    case mrc_mode::int8: f(std::integral_constant<mrc_mode, mrc_mode::int8>{}); break;
    case mrc_mode::int16: f(std::integral_constant<mrc_mode, mrc_mode::int16>{}); break;
    case mrc_mode::uint16: f(std::integral_constant<mrc_mode, mrc_mode::uint16>{}); break;
    case mrc_mode::float16: f(std::integral_constant<mrc_mode, mrc_mode::float16>{}); break;
    default: f(std::integral_constant<mrc_mode, mrc_mode::float32>{}); break;
  }
}

[[noreturn]] inline void fail(const std::string& where, const std::string& what) {
  throw io_error("fusor::match::read_mrc: " + where + ": " + what);
}

inline bool known_mode(std::int32_t m) { return m == 0 || m == 1 || m == 2 || m == 6 || m == 12; }

/// The header of a file of `size` bytes, checked against that size.
inline mrc_header parse_header(const unsigned char* h, std::uint64_t size, const std::string& where) {
  if (size < 1024)
    fail(where, "expected at least the 1024-byte MRC header, found a file of " + std::to_string(size) + " bytes");
  if (std::memcmp(h + 208, "MAP ", 4) != 0) {
    std::string found;
    for (int i = 0; i < 4; ++i) {
      const unsigned char c = h[208 + i];
      found += c >= 32 && c < 127 ? std::string(1, char(c)) : "\\x" + std::to_string(int(c));
    }
    fail(where, "expected the MRC/CCP4 tag \"MAP \" at byte 208, found \"" + found + "\" (not an MRC file?)");
  }
  mrc_header r;
  // byte order: MACHST (0x44 0x4? little, 0x11 0x11 big), else the order that reads a valid mode
  const unsigned char m0 = h[212];
  bool swap;
  if (m0 == 0x44 || m0 == 0x4) {
    swap = std::endian::native == std::endian::big;
    r.big_endian = false;
  } else if (m0 == 0x11) {
    swap = std::endian::native == std::endian::little;
    r.big_endian = true;
  } else {
    const bool little_ok = known_mode(load<std::int32_t>(h + 12, std::endian::native == std::endian::big));
    r.big_endian = !little_ok;
    swap = (std::endian::native == std::endian::big) != r.big_endian;
  }
  const auto i32 = [&](std::size_t at) { return load<std::int32_t>(h + at, swap); };
  const auto f32 = [&](std::size_t at) { return load<float>(h + at, swap); };
  r.nx = i32(0);
  r.ny = i32(4);
  r.nz = i32(8);
  const std::int32_t mode = i32(12);
  r.nxstart = i32(16);
  r.nystart = i32(20);
  r.nzstart = i32(24);
  r.mx = i32(28);
  r.my = i32(32);
  r.mz = i32(36);
  for (std::size_t a = 0; a < 3; ++a) {
    r.cella[a] = f32(40 + 4 * a);
    r.cellb[a] = f32(52 + 4 * a);
    r.axis_order[a] = i32(64 + 4 * a);
    r.origin[a] = f32(196 + 4 * a);
  }
  r.dmin = f32(76);
  r.dmax = f32(80);
  r.dmean = f32(84);
  r.ispg = i32(88);
  r.nsymbt = i32(92);
  for (std::size_t i = 104; i < 108; ++i)
    if (h[i] != 0 && h[i] != ' ') r.exttyp += char(h[i]);
  r.nversion = i32(108);
  r.rms = f32(216);
  const std::int32_t nlabl = i32(220);

  if (!known_mode(mode))
    fail(where, "unsupported mode " + std::to_string(mode) +
                    " (expected 0 int8, 1 int16, 2 float32, 6 uint16 or 12 float16)");
  r.mode = mrc_mode(mode);
  if (r.nx < 0 || r.ny < 0 || r.nz < 0)
    fail(where, "expected non-negative (NX, NY, NZ), found (" + std::to_string(r.nx) + ", " + std::to_string(r.ny) + ", " +
                    std::to_string(r.nz) + ")");
  {
    std::array<std::int32_t, 3> o = r.axis_order;
    std::sort(o.begin(), o.end());
    if (o != std::array<std::int32_t, 3>{1, 2, 3})
      fail(where, "expected (MAPC, MAPR, MAPS) to be a permutation of (1, 2, 3), found (" + std::to_string(r.axis_order[0]) +
                      ", " + std::to_string(r.axis_order[1]) + ", " + std::to_string(r.axis_order[2]) + ")");
  }
  if (r.mx < 0 || r.my < 0 || r.mz < 0)
    fail(where, "expected non-negative (MX, MY, MZ), found (" + std::to_string(r.mx) + ", " + std::to_string(r.my) + ", " +
                    std::to_string(r.mz) + ")");
  for (std::size_t a = 0; a < 3; ++a)
    if (!std::isfinite(r.cella[a]) || r.cella[a] < 0.0f)
      fail(where, "expected finite non-negative cell lengths (CELLA), found " + std::to_string(r.cella[a]) + " on axis " +
                      std::to_string(a));
  if (nlabl < 0 || nlabl > 10) fail(where, "expected 0 to 10 labels (NLABL), found " + std::to_string(nlabl));
  for (std::int32_t l = 0; l < nlabl; ++l) {
    const char* s = reinterpret_cast<const char*>(h + 224 + 80 * l);
    std::string label(s, std::find(s, s + 80, '\0'));
    while (!label.empty() && label.back() == ' ') label.pop_back();
    r.labels.push_back(std::move(label));
  }
  if (r.nsymbt < 0) fail(where, "expected a non-negative extended header length (NSYMBT), found " + std::to_string(r.nsymbt));
  // the data's size, in 63 bits
  const std::uint64_t limit = std::uint64_t(std::numeric_limits<std::int64_t>::max());
  std::uint64_t bytes = r.itemsize();
  for (const std::int32_t n : {r.nx, r.ny, r.nz}) {
    if (n != 0 && bytes > limit / std::uint64_t(n))
      fail(where, "the header's dimensions (" + std::to_string(r.nx) + ", " + std::to_string(r.ny) + ", " +
                      std::to_string(r.nz) + ") call for more than 2^63 bytes");
    bytes *= std::uint64_t(n);
  }
  const std::uint64_t need = 1024 + std::uint64_t(r.nsymbt) + bytes;
  if (size < need)
    fail(where, "truncated: the header calls for " + std::to_string(need) + " bytes (1024 + " + std::to_string(r.nsymbt) +
                    " of extended header + " + std::to_string(bytes) + " of data for (" + std::to_string(r.nx) + ", " +
                    std::to_string(r.ny) + ", " + std::to_string(r.nz) + ") mode " + std::to_string(mode) +
                    "), found " + std::to_string(size));
  if (size > need)
    fail(where, "expected " + std::to_string(need) + " bytes as the header says, found " + std::to_string(size) + " (" +
                    std::to_string(size - need) + " bytes after the data: a damaged or misidentified file)");
  return r;
}

/// out[x, y, z] for x, y, z in the box [start, start + shape) of the volume, from the file's data:
/// the voxel's value sits at x sx + y sy + z sz values into the data. Tiles of 32 x 32 over
/// (x, z), so that both the file's rows (x fastest) and the volume's (z fastest) are read in runs.
inline void copy_in(const unsigned char* data, const mrc_header& h, const std::array<index_t, 3>& start,
                    const extents& shape, float* out, int threads) {
  std::array<index_t, 3> stride{};  // per axis X, Y, Z, in values
  const std::array<index_t, 3> crs_stride{1, index_t(h.nx), index_t(h.nx) * index_t(h.ny)};
  for (std::size_t k = 0; k < 3; ++k) stride[std::size_t(h.axis_order[k] - 1)] = crs_stride[k];
  const bool swap = (std::endian::native == std::endian::big) != h.big_endian;
  const index_t n0 = shape[0], n1 = shape[1], n2 = shape[2], tile = 32;
  const index_t t0 = (n0 + tile - 1) / tile, t2 = (n2 + tile - 1) / tile;
  const auto run = [&](auto mode, auto swapped) {
    constexpr mrc_mode M = decltype(mode)::value;
    constexpr bool S = decltype(swapped)::value;
    constexpr index_t item = index_t(sizeof(stored_t<M>));
    const index_t s0 = stride[0] * item, s1 = stride[1] * item, s2 = stride[2] * item;
#if defined(_OPENMP)
#pragma omp parallel for schedule(static) num_threads(threads) if (n0 * n1 * n2 > 65536)
#endif
    for (index_t t = 0; t < t0 * t2; ++t) {
      const index_t x0 = (t / t2) * tile, z0 = (t % t2) * tile, x1 = std::min(n0, x0 + tile), z1 = std::min(n2, z0 + tile);
      for (index_t y = 0; y < n1; ++y)
        for (index_t x = x0; x < x1; ++x) {
          const unsigned char* src = data + ((start[0] + x) * s0 + (start[1] + y) * s1 + start[2] * s2);
          float* o = out + (x * n1 + y) * n2;
          for (index_t z = z0; z < z1; ++z) o[z] = value_at<M, S>(src + z * s2);
        }
    }
  };
  with_mode(h.mode, [&](auto mode) {
    if (swap) run(mode, std::true_type{});
    else run(mode, std::false_type{});
  });
}

/// A read-only memory mapping of a whole file.
class mapping {
 public:
  mapping() = default;
  explicit mapping(const std::filesystem::path& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
      throw io_error("fusor::match::read_mrc: cannot open " + path.string() + ": " +
                     std::error_code(errno, std::generic_category()).message());
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
      const int e = errno;
      ::close(fd);
      throw io_error("fusor::match::read_mrc: " + path.string() + " is not a regular file" +
                     (e ? ": " + std::error_code(e, std::generic_category()).message() : std::string()));
    }
    size_ = std::uint64_t(st.st_size);
    if (size_ > 0) {
      void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
      if (p == MAP_FAILED) {
        const int e = errno;
        ::close(fd);
        throw io_error("fusor::match::read_mrc: cannot map " + path.string() + ": " +
                       std::error_code(e, std::generic_category()).message());
      }
      data_ = static_cast<const unsigned char*>(p);
    }
    ::close(fd);  // the mapping keeps the file
  }
  mapping(mapping&& o) noexcept : data_(std::exchange(o.data_, nullptr)), size_(std::exchange(o.size_, 0)) {}
  mapping& operator=(mapping&& o) noexcept {
    if (this != &o) {
      release();
      data_ = std::exchange(o.data_, nullptr);
      size_ = std::exchange(o.size_, 0);
    }
    return *this;
  }
  mapping(const mapping&) = delete;
  mapping& operator=(const mapping&) = delete;
  ~mapping() { release(); }
  const unsigned char* data() const { return data_; }
  std::uint64_t size() const { return size_; }

 private:
  void release() {
    if (data_) ::munmap(const_cast<unsigned char*>(data_), size_);
    data_ = nullptr;
  }
  const unsigned char* data_ = nullptr;
  std::uint64_t size_ = 0;
};

}  // namespace detail::mrc

/// An MRC file mapped into memory, its header checked against its size. Reads convert from the
/// mapped pages straight into the volume.
class mrc_file {
 public:
  explicit mrc_file(const std::filesystem::path& path) : path_(path.string()), map_(path) {
    static const unsigned char none[1024] = {};
    header_ = detail::mrc::parse_header(map_.size() >= 1024 ? map_.data() : none, map_.size(), path_);
  }
  const mrc_header& header() const { return header_; }
  /// The volume's shape (X, Y, Z).
  extents shape() const { return header_.shape(); }
  const std::string& path() const { return path_; }

  /// The whole volume, indexed [x, y, z].
  template <class B = cpu>
  array<float, B> read() const {
    const extents s = shape();
    return read<B>({0, 0, 0}, s);
  }
  /// The box [start, start + box) of the volume (each along X, Y, Z); only its pages are read.
  template <class B = cpu>
  array<float, B> read(const std::array<index_t, 3>& start, const extents& box) const {
    detail::require_volume(box, "mrc_file::read (the box)");
    const extents s = shape();
    for (std::size_t a = 0; a < 3; ++a)
      if (start[a] < 0 || box[int(a)] < 0 || start[a] + box[int(a)] > s[int(a)])
        throw index_error("fusor::match::mrc_file::read: the box from (" + std::to_string(start[0]) + ", " +
                          std::to_string(start[1]) + ", " + std::to_string(start[2]) + ") of shape " + to_string(box) +
                          " does not lie inside the volume of shape " + to_string(s) + " in " + path_);
    array<float, B> out(box);
    if (out.size() == 0) return out;
    const unsigned char* data = map_.data() + header_.data_offset();
    if constexpr (backend_traits<B>::host_accessible) {
      detail::mrc::copy_in(data, header_, start, box, out.data(), detail::host_threads<B>());
    } else {
      std::vector<float> host(static_cast<std::size_t>(out.size()));
      detail::mrc::copy_in(data, header_, start, box, host.data(), detail::host_threads<B>());
      fusor::ext::copy_contiguous<B, cpu>(out.data(), host.data(), out.size());
    }
    return out;
  }

 private:
  std::string path_;
  detail::mrc::mapping map_;
  mrc_header header_;
};

/// The header of an MRC file, checked against the file's size.
inline mrc_header read_mrc_header(const std::filesystem::path& path) { return mrc_file(path).header(); }

/// A whole MRC file: its volume indexed [x, y, z] as float, its header, voxel size and origin.
template <class B = cpu>
mrc_volume<B> read_mrc(const std::filesystem::path& path) {
  const mrc_file f(path);
  return {f.read<B>(), f.header(), f.header().voxel_size(), f.header().origin_angstrom()};
}

/// Writes a volume indexed [x, y, z] as an MRC2014 file (little-endian, MAPC/MAPR/MAPS = 1, 2,
/// 3, so X runs along columns), with DMIN, DMAX, DMEAN and RMS of the values as stored. The file
/// appears complete or not at all (a temporary file renamed at the end).
template <class B>
void write_mrc(const std::filesystem::path& path, const array<float, B>& volume, const mrc_write_options& o = {}) {
  const std::string fn = "fusor::match::write_mrc: ";
  detail::require_volume(volume.shape(), "write_mrc");
  const extents& s = volume.shape();
  for (std::size_t a = 0; a < 3; ++a) {
    if (s[int(a)] > std::numeric_limits<std::int32_t>::max())
      throw value_error(fn + "an MRC file holds at most 2^31 - 1 voxels along an axis, got shape " + to_string(s));
    if (!std::isfinite(o.voxel_size[a]) || o.voxel_size[a] < 0.0)
      throw value_error(fn + "expected finite non-negative voxel sizes, got " + std::to_string(o.voxel_size[a]) +
                        " on axis " + std::to_string(a));
    if (!std::isfinite(o.origin[a])) throw value_error(fn + "expected a finite origin, got a non-finite value on axis " + std::to_string(a));
  }
  if (o.label.size() > 80) throw value_error(fn + "a label holds at most 80 characters, got " + std::to_string(o.label.size()));
  const std::int32_t mode = std::int32_t(o.mode);
  if (!detail::mrc::known_mode(mode))
    throw value_error(fn + "unsupported mode " + std::to_string(mode) + " (expected 0, 1, 2, 6 or 12)");

  // the values on the host, converted and checked into the file's order (x fastest): tiles of 32
  // sections, so the volume is read in runs along z and each section's row written in order
  std::vector<float> host(static_cast<std::size_t>(volume.size()));
  if (volume.size()) fusor::ext::copy_contiguous<cpu, B>(host.data(), volume.data(), volume.size());
  mrc_header h;
  h.mode = o.mode;
  const std::size_t item = h.itemsize();
  const index_t n0 = s[0], n1 = s[1], n2 = s[2];
  std::vector<unsigned char> data(static_cast<std::size_t>(volume.size()) * item);
  const auto bad = [&](float v, index_t x, index_t y, index_t z, const char* why) {
    throw value_error(fn + "the value " + std::to_string(v) + " at (" + std::to_string(x) + ", " + std::to_string(y) + ", " +
                      std::to_string(z) + ") " + why);
  };
  double lo = std::numeric_limits<double>::infinity(), hi = -lo, sum = 0.0, sum2 = 0.0;
  detail::mrc::with_mode(o.mode, [&](auto mode) {
    constexpr mrc_mode M = decltype(mode)::value;
    using U = detail::mrc::stored_t<M>;
    const index_t tile = 32;
    for (index_t z0 = 0; z0 < n2; z0 += tile) {
      const index_t z1 = std::min(n2, z0 + tile);
      for (index_t y = 0; y < n1; ++y)
        for (index_t x = 0; x < n0; ++x) {
          const float* src = host.data() + (x * n1 + y) * n2;
          for (index_t z = z0; z < z1; ++z) {
            const float v = src[z];
            U stored;
            float back = v;
            if constexpr (M == mrc_mode::float32) {
              stored = v;
            } else if constexpr (M == mrc_mode::float16) {
              if (std::isfinite(v) && std::abs(v) >= 65520.0f) bad(v, x, y, z, "is beyond float16's range (mode 12, at most 65504)");
              stored = detail::mrc::half_bits(v);
              back = detail::mrc::half_value(stored);
            } else {
              constexpr double lowest = double(std::numeric_limits<U>::lowest()), highest = double(std::numeric_limits<U>::max());
              if (!(v == std::trunc(v)) || double(v) < lowest || double(v) > highest)
                bad(v, x, y, z,
                    M == mrc_mode::int8    ? "is not an integer in the range of int8, mode 0 (nothing is rounded or clipped)"
                    : M == mrc_mode::int16 ? "is not an integer in the range of int16, mode 1 (nothing is rounded or clipped)"
                                           : "is not an integer in the range of uint16, mode 6 (nothing is rounded or clipped)");
              stored = U(v);
            }
            std::memcpy(data.data() + std::size_t((z * n1 + y) * n0 + x) * item, &stored, sizeof(U));
            lo = std::min(lo, double(back));
            hi = std::max(hi, double(back));
            sum += double(back);
            sum2 += double(back) * double(back);
          }
        }
    }
  });

  unsigned char hd[1024] = {};
  const auto put_i = [&](std::size_t at, std::int32_t v) { detail::mrc::store(hd + at, v); };
  const auto put_f = [&](std::size_t at, double v) { detail::mrc::store(hd + at, float(v)); };
  const std::array<index_t, 3> n{n0, n1, n2};
  for (std::size_t a = 0; a < 3; ++a) {
    put_i(4 * a, std::int32_t(n[a]));                   // NX, NY, NZ
    put_i(28 + 4 * a, std::int32_t(n[a]));              // MX, MY, MZ
    put_f(40 + 4 * a, double(n[a]) * o.voxel_size[a]);  // CELLA
    put_f(52 + 4 * a, 90.0);                            // CELLB
    put_i(64 + 4 * a, std::int32_t(a + 1));             // MAPC, MAPR, MAPS
    put_f(196 + 4 * a, o.origin[a]);                    // ORIGIN
  }
  put_i(12, mode);
  const index_t count = volume.size();
  const double mean = count ? sum / double(count) : -2.0;
  const double var = count ? std::max(0.0, sum2 / double(count) - mean * mean) : 1.0;
  put_f(76, count ? lo : 0.0);  // mrcfile's "not determined" values for an empty volume
  put_f(80, count ? hi : -1.0);
  put_f(84, mean);
  put_f(216, count ? std::sqrt(var) : -1.0);
  put_i(88, 1);      // ISPG: a volume
  put_i(108, 20140); // NVERSION: MRC2014
  std::memcpy(hd + 208, "MAP ", 4);
  hd[212] = 0x44;  // MACHST: little-endian
  hd[213] = 0x44;
  put_i(220, o.label.empty() ? 0 : 1);
  std::memset(hd + 224, ' ', 800);
  std::memcpy(hd + 224, o.label.data(), o.label.size());

  // a temporary file beside the target, renamed when complete
  const std::filesystem::path tmp = path.string() + ".fusor-partial-" + std::to_string(::getpid());
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f)
    throw io_error(fn + "cannot create " + tmp.string() + ": " + std::error_code(errno, std::generic_category()).message());
  const bool ok = std::fwrite(hd, 1, 1024, f) == 1024 && (data.empty() || std::fwrite(data.data(), 1, data.size(), f) == data.size());
  const int e = errno;
  const bool closed = std::fclose(f) == 0;
  if (!ok || !closed) {
    std::error_code ignore;
    std::filesystem::remove(tmp, ignore);
    throw io_error(fn + "cannot write " + path.string() + ": " + std::error_code(ok ? errno : e, std::generic_category()).message());
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::error_code ignore;
    std::filesystem::remove(tmp, ignore);
    throw io_error(fn + "cannot move the written file into place as " + path.string() + ": " + ec.message());
  }
}

}  // namespace fusor::match
