#pragma once
// NumPy's .npy format: save_npy / load_npy (files), to_npy_bytes /
// load_npy_bytes (memory), read_npy_header (inspection).
//
// Writing produces what np.save produces, byte for byte: format 1.0 (2.0 only if the header
// would not fit 65535 bytes), a native-order descr ('<f4', '|u1', '|b1', '<c16'... on the
// little-endian machines fusor runs on), C order, the header padded with spaces (including
// NumPy's spare room for growing the first axis) to a multiple of 64 bytes and ending in '\n'.
//
// Reading accepts versions 1.0, 2.0 and 3.0, either byte order (big-endian data is swapped),
// C or Fortran order (Fortran data is transposed into a C-order array), and the header dict as
// Python would parse it for these three keys: any key order, any whitespace, optional trailing
// comma, single or double quotes, Python 2's 'L' suffix on dimensions. It is strict about the
// rest, and every defect is an io_error naming the byte offset, what was expected and what was
// found: the magic string, the version, the header length against the file size, the dict
// syntax, the keys (each exactly once, no others), the descr (one of NumPy's thirteen element
// types, float16 ('<f2'), or a 2-byte void ('<V2', what ml_dtypes' bfloat16 arrays are saved as);
// '<U4', 'O' and structured dtypes are rejected), the shape (non-negative, at most
// max_rank dimensions, a byte count that fits in 63 bits), and the data length. The data must
// end exactly where the file ends: unlike np.load, which ignores anything after the array,
// trailing bytes are rejected, because fusor reads one array per file and extra bytes mean a
// damaged or misidentified file. A file whose element type is not the requested T is a
// dtype_error (nothing is converted silently: load it as its own type and call .astype<T>()).
// Nothing is allocated before the header has been checked against the file size, and a failed
// load never returns a partial array.
//
// The format is backend-neutral: data is read into and written from host memory (a cpu array)
// and crosses to a device only through the backends' memory hooks (to<B>), so this layer names
// no backend header; the umbrella that brings it (<fusor/base.hpp> and above) brings the cpu
// backend as well.
#include <algorithm>
#include <bit>
#include <cctype>
#include <cerrno>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <utility>
#include <vector>

#include "../core/array.hpp"
#include "../core/assign.hpp"
#include "../core/error.hpp"
#include "../core/indexing.hpp"
#include "../core/shape_ops.hpp"
#include "../core/transfer.hpp"
#include "../core/ext.hpp"

namespace fusor {

/// What the header of a .npy file says (see read_npy_header).
struct npy_header {
  std::string descr;           ///< as written in the file, e.g. "<f8" or ">i4"
  std::string dtype;           ///< NumPy's (and fusor's) name of the element type, e.g. "float64"
  extents shape;               ///< the array's shape, C-order meaning even for Fortran-order files
  bool fortran_order = false;  ///< the data is stored column-major
  bool big_endian = false;     ///< multi-byte elements are stored most significant byte first
  std::size_t itemsize = 0;    ///< bytes per element
  std::size_t data_offset = 0; ///< where the data starts (the byte after the header's '\n')
  int version_major = 1;       ///< format version: 1.0, 2.0 or 3.0
  int version_minor = 0;
  /// Bytes of data the shape calls for (itemsize times the element count).
  std::size_t data_bytes() const { return itemsize * std::size_t(shape.numel()); }
};

namespace detail::npy {

struct type_code {
  char kind;                 // NumPy's kind letter
  std::size_t size;          // bytes per element
  std::string_view name;     // dtype name
  std::string_view cpp;      // the C++ type, for messages
  std::size_t component;     // bytes swapped as a unit (complex swaps each half)
};

inline constexpr type_code type_codes[] = {
    {'f', 4, "float32", "float", 4},
    {'f', 8, "float64", "double", 8},
    {'i', 1, "int8", "std::int8_t", 1},
    {'i', 2, "int16", "std::int16_t", 2},
    {'i', 4, "int32", "std::int32_t", 4},
    {'i', 8, "int64", "std::int64_t", 8},
    {'u', 1, "uint8", "std::uint8_t", 1},
    {'u', 2, "uint16", "std::uint16_t", 2},
    {'u', 4, "uint32", "std::uint32_t", 4},
    {'u', 8, "uint64", "std::uint64_t", 8},
    {'b', 1, "bool", "bool", 1},
    {'c', 8, "complex64", "std::complex<float>", 4},
    {'c', 16, "complex128", "std::complex<double>", 8},
    {'f', 2, "float16", "fusor::float16", 2},
    // NumPy has no bfloat16: ml_dtypes' arrays are saved as 2-byte voids ('<V2'), which is what
    // fusor writes and reads back as bfloat16 (np.load gives a V2 array: .view(ml_dtypes.bfloat16))
    {'V', 2, "bfloat16", "fusor::bfloat16", 1},
};

/// The first of type_codes that pred accepts, or nullptr.
template <class Pred>
constexpr const type_code* find_code(Pred pred) {
  for (const type_code& c : type_codes)
    if (pred(c)) return &c;
  return nullptr;
}

/// NumPy's own element types (a user-defined element type has no .npy code).
template <class T>
inline constexpr bool supported_v =
    is_element_v<T> && find_code([](const type_code& t) { return t.name == dtype_name<T>(); }) != nullptr;

template <class T>
constexpr void require_supported() {
  static_assert(supported_v<T>,
                "fusor: .npy files hold NumPy's element types (bool, int8/16/32/64, uint8/16/32/64, "
                "float16/32/64, complex64/128) and ml_dtypes' bfloat16");
}

template <class T>
constexpr const type_code& code_of() {
  const type_code* c = find_code([](const type_code& t) { return t.name == dtype_name<T>(); });
  return c ? *c : type_codes[0];  // the fallback is unreachable for supported_v<T>
}

inline constexpr bool native_big = std::endian::native == std::endian::big;

/// The descr np.save writes for T on this machine.
template <class T>
std::string descr_of() {
  const type_code& c = code_of<T>();
  return std::string(1, c.size == 1 ? '|' : (native_big ? '>' : '<')) + c.kind + std::to_string(c.size);
}

/// Text for a message: at most `max` bytes, printable ASCII as is, anything else as \xNN.
inline std::string quote(std::string_view s, std::size_t max = 16) {
  std::string r = "\"";
  for (std::size_t i = 0; i < s.size() && i < max; ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c == '"' || c == '\\') {
      r += '\\';
      r += char(c);
    } else if (c >= 0x20 && c < 0x7f) {
      r += char(c);
    } else {
      static constexpr char hex[] = "0123456789ABCDEF";
      r += "\\x";
      r += hex[c >> 4];
      r += hex[c & 15];
    }
  }
  if (s.size() > max) r += "...";
  return r + "\"";
}

[[noreturn]] inline void fail(const std::string& source, std::size_t offset, std::string_view expected,
                              std::string_view found) {
  throw io_error("fusor: cannot read " + source + ": at byte " + std::to_string(offset) + ": expected " +
                 std::string(expected) + ", found " + std::string(found));
}

inline std::string errno_text(int e) { return std::generic_category().message(e); }

inline std::string file_label(const std::filesystem::path& p) { return ".npy file '" + p.string() + "'"; }

// A byte source read front to back: an open file or a span of memory.
struct memory_source {
  std::span<const std::byte> bytes;
  std::size_t pos = 0;
  std::string name = "in-memory .npy data";  // what messages call the data (an .npz entry says which)
  std::string label() const { return name; }
  std::size_t size() const { return bytes.size(); }
  void read(void* dst, std::size_t n) {
    if (n) std::memcpy(dst, bytes.data() + pos, n);
    pos += n;
  }
};

struct file_source {
  std::filesystem::path path;
  std::FILE* f = nullptr;
  std::size_t total = 0;
  std::size_t pos = 0;

  explicit file_source(const std::filesystem::path& p) : path(p) {
    std::error_code ec;
    if (std::filesystem::is_directory(p, ec))
      throw io_error("fusor: cannot open '" + p.string() + "' for reading: it is a directory");
    errno = 0;
    f = std::fopen(p.string().c_str(), "rb");
    if (!f) throw io_error("fusor: cannot open '" + p.string() + "' for reading: " + errno_text(errno));
    const auto sz = std::filesystem::file_size(p, ec);
    if (ec) {
      std::fclose(f);
      throw io_error("fusor: cannot get the size of '" + p.string() + "': " + ec.message());
    }
    total = std::size_t(sz);
  }
  file_source(const file_source&) = delete;
  file_source& operator=(const file_source&) = delete;
  ~file_source() {
    if (f) std::fclose(f);
  }
  std::string label() const { return file_label(path); }
  std::size_t size() const { return total; }
  void read(void* dst, std::size_t n) {
    if (n == 0) return;
    errno = 0;
    const std::size_t got = std::fread(dst, 1, n, f);
    if (got != n) {
      // the file changed size since it was measured, or the device failed
      if (std::ferror(f))
        throw io_error("fusor: cannot read '" + path.string() + "' at byte " + std::to_string(pos + got) + ": " +
                       errno_text(errno));
      fail(label(), pos + got, std::to_string(n - got) + " more bytes", "the end of the file");
    }
    pos += n;
  }
};

// A recursive-descent reader of the header dict, which is a Python literal.
struct dict_parser {
  std::string_view text;
  std::size_t base;  // file offset of text[0]
  const std::string& source;
  std::size_t pos = 0;

  std::size_t offset() const { return base + pos; }
  std::string found() const { return pos >= text.size() ? "the end of the header" : quote(text.substr(pos)); }
  [[noreturn]] void error(std::string_view expected) const { fail(source, offset(), expected, found()); }
  bool at_end() const { return pos >= text.size(); }
  char peek() const { return at_end() ? '\0' : text[pos]; }
  void skip_ws() {
    while (!at_end() && (text[pos] == ' ' || text[pos] == '\t' || text[pos] == '\n' || text[pos] == '\r')) ++pos;
  }
  bool eat(char c) {
    if (at_end() || text[pos] != c) return false;
    ++pos;
    return true;
  }
  void expect(char c, std::string_view what) {
    if (!eat(c)) error(what);
  }
  bool starts_with(std::string_view w) const { return text.substr(pos, w.size()) == w; }

  std::string_view string_literal(std::string_view what) {
    const char q = peek();
    if (q != '\'' && q != '"') error(what);
    const std::size_t start = ++pos;
    while (!at_end() && text[pos] != q) {
      if (text[pos] == '\\' || text[pos] == '\n') error("a plain string without escapes or line breaks");
      ++pos;
    }
    if (at_end()) error(std::string("a closing ") + q);
    return text.substr(start, pos++ - start);
  }

  bool boolean() {
    for (const auto& [word, value] : {std::pair<std::string_view, bool>{"True", true}, {"False", false}}) {
      if (starts_with(word)) {
        const std::size_t after = pos + word.size();
        const char next = after < text.size() ? text[after] : ' ';
        // "Truex" is a name, not the literal
        if (!(std::isalnum(static_cast<unsigned char>(next)) || next == '_')) {
          pos = after;
          return value;
        }
      }
    }
    error("True or False for 'fortran_order'");
  }

  index_t dimension() {
    if (peek() == '-') error("a dimension >= 0 in 'shape'");
    if (peek() < '0' || peek() > '9') error("a dimension (a non-negative integer) in 'shape'");
    const std::size_t start = pos;
    index_t v = 0;
    while (peek() >= '0' && peek() <= '9') {
      const int d = peek() - '0';
      if (v > (std::numeric_limits<index_t>::max() - d) / 10) {
        pos = start;
        error("a dimension below 2^63 in 'shape'");
      }
      v = v * 10 + d;
      ++pos;
    }
    if (peek() == 'L' || peek() == 'l') ++pos;  // Python 2 long, as np.load accepts
    if (std::isalnum(static_cast<unsigned char>(peek())) || peek() == '_' || peek() == '.') error("',' or ')' after a dimension");
    return v;
  }

  extents shape_tuple() {
    expect('(', "a tuple such as (2, 3), (5,) or () for 'shape'");
    skip_ws();
    extents s;
    bool comma = false;
    while (peek() != ')') {
      if (s.size() == max_rank)
        error("at most " + std::to_string(max_rank) + " dimensions in 'shape' (fusor's maximum rank)");
      s.push_back(dimension());
      skip_ws();
      comma = eat(',');
      skip_ws();
      if (!comma && peek() != ')') error("',' or ')' in 'shape'");
    }
    if (s.size() == 1 && !comma) error("',' before ')': a one-dimensional shape is written (5,) ((5) is an integer)");
    ++pos;
    return s;
  }
};

/// Parses the 6..12-byte prefix and the dict; `read` fills the header bytes.
template <class Source>
npy_header parse_header(Source& src) {
  const std::string source = src.label();
  const std::size_t total = src.size();
  unsigned char pre[12] = {};
  const std::size_t have = std::min<std::size_t>(total, 10);
  src.read(pre, have);
  const std::string_view pre_text(reinterpret_cast<const char*>(pre), have);

  static constexpr unsigned char magic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
  if (have < 6 || std::memcmp(pre, magic, 6) != 0)
    fail(source, 0, "the magic string \"\\x93NUMPY\" of a .npy file",
         have == 0 ? std::string("an empty file") : quote(pre_text.substr(0, 6)));
  if (have < 8) fail(source, 6, "the 2-byte format version", "the end of the file");
  npy_header h;
  h.version_major = pre[6];
  h.version_minor = pre[7];
  if (h.version_minor != 0 || h.version_major < 1 || h.version_major > 3)
    fail(source, 6, "format version 1.0, 2.0 or 3.0",
         "version " + std::to_string(h.version_major) + "." + std::to_string(h.version_minor));
  const std::size_t len_bytes = h.version_major == 1 ? 2 : 4;
  const std::size_t prefix = 8 + len_bytes;
  if (total < prefix)
    fail(source, 8, "a " + std::to_string(len_bytes) + "-byte header length",
         "the end of the file (the file has " + std::to_string(total) + " bytes)");
  if (len_bytes == 4) src.read(pre + 10, 2);
  std::size_t header_len = 0;
  for (std::size_t k = 0; k < len_bytes; ++k) header_len |= std::size_t(pre[8 + k]) << (8 * k);
  if (header_len > total - prefix)
    fail(source, 8,
         "a header length of at most " + std::to_string(total - prefix) + " (the file has " + std::to_string(total) +
             " bytes)",
         std::to_string(header_len));
  h.data_offset = prefix + header_len;

  std::string text(header_len, '\0');
  src.read(text.data(), header_len);
  dict_parser p{text, prefix, source};
  p.skip_ws();
  p.expect('{', "'{' opening the header dict");
  bool have_descr = false, have_order = false, have_shape = false;
  std::size_t descr_at = 0, shape_at = 0;
  p.skip_ws();
  while (p.peek() != '}') {
    const std::size_t key_pos = p.pos;
    const std::string_view key = p.string_literal("a key ('descr', 'fortran_order' or 'shape') or '}'");
    auto once = [&](bool& seen) {
      if (seen) {
        p.pos = key_pos;
        p.error("each key once (the key '" + std::string(key) + "' repeats)");
      }
      seen = true;
    };
    p.skip_ws();
    p.expect(':', "':' after the key");
    p.skip_ws();
    if (key == "descr") {
      once(have_descr);
      descr_at = p.offset();
      if (p.peek() != '\'' && p.peek() != '"')
        p.error("a string for 'descr' (structured dtypes are not supported)");
      h.descr = std::string(p.string_literal("a string for 'descr'"));
    } else if (key == "fortran_order") {
      once(have_order);
      h.fortran_order = p.boolean();
    } else if (key == "shape") {
      once(have_shape);
      shape_at = p.offset();
      h.shape = p.shape_tuple();
    } else {
      p.pos = key_pos;
      p.error("one of the keys 'descr', 'fortran_order', 'shape'");
    }
    p.skip_ws();
    if (p.eat(',')) p.skip_ws();
    else if (p.peek() != '}') p.error("',' or '}' after the value of '" + std::string(key) + "'");
  }
  for (const auto& [seen, name] : {std::pair<bool, const char*>{have_descr, "descr"},
                                   {have_order, "fortran_order"},
                                   {have_shape, "shape"}})
    if (!seen) p.error(std::string("the key '") + name + "' in the header dict (it is missing)");
  ++p.pos;
  p.skip_ws();
  if (!p.at_end()) p.error("only spaces and a newline after the header dict");

  // the descr: an optional byte order and one of fusor's element types
  std::string_view d = h.descr;
  char order = '=';
  if (!d.empty() && (d[0] == '<' || d[0] == '>' || d[0] == '=' || d[0] == '|')) {
    order = d[0];
    d.remove_prefix(1);
  }
  char kind = d.empty() ? '\0' : d[0];
  std::string_view size_text = d.empty() ? d : d.substr(1);
  if (d == "?") kind = 'b', size_text = "1";
  const type_code* code =
      find_code([&](const type_code& c) { return c.kind == kind && size_text == std::to_string(c.size); });
  if (!code)
    fail(source, descr_at,
         "a descr of an element type fusor supports ('|b1', '|i1', '<i2', '<i4', '<i8', '|u1', '<u2', '<u4', "
         "'<u8', '<f2', '<f4', '<f8', '<c8', '<c16', in either byte order, or '<V2' for bfloat16)",
         "'" + h.descr + "'");
  h.dtype = std::string(code->name);
  h.itemsize = code->size;
  h.big_endian = code->size > 1 && (order == '>' || ((order == '=' || order == '|') && native_big));

  // every dimension counts, zeros as 1: (0, 2**62, 4) holds no data, but its strides overflow
  if (detail::strided_extent(h.shape, std::numeric_limits<index_t>::max() / index_t(h.itemsize)) < 0)
    fail(source, shape_at, "a shape whose strides and data fit in 2^63 bytes (zero dimensions counted as 1)",
         to_string(h.shape) + " of " + h.dtype);
  return h;
}

/// Reverses the bytes of every `unit`-byte group.
inline void byteswap(void* data, std::size_t bytes, std::size_t unit) {
  auto* p = static_cast<unsigned char*>(data);
  if (unit == 4) {
    for (std::size_t i = 0; i + 4 <= bytes; i += 4) {
      std::uint32_t v;
      std::memcpy(&v, p + i, 4);
      v = (v >> 24) | ((v >> 8) & 0xff00u) | ((v << 8) & 0xff0000u) | (v << 24);
      std::memcpy(p + i, &v, 4);
    }
  } else if (unit == 8) {
    for (std::size_t i = 0; i + 8 <= bytes; i += 8) {
      std::uint64_t v;
      std::memcpy(&v, p + i, 8);
      std::uint64_t r = 0;
      for (int k = 0; k < 8; ++k) r |= ((v >> (8 * k)) & 0xffu) << (8 * (7 - k));
      std::memcpy(p + i, &r, 8);
    }
  } else if (unit > 1) {
    for (std::size_t i = 0; i + unit <= bytes; i += unit) std::reverse(p + i, p + i + unit);
  }
}

template <class T, class Source>
array<T, cpu> load(Source& src) {
  require_supported<T>();
  const npy_header h = parse_header(src);
  const type_code& want = code_of<T>();
  if (h.dtype != want.name) {
    const type_code* have = find_code([&](const type_code& c) { return c.name == h.dtype; });
    const std::string_view have_cpp = have ? have->cpp : std::string_view();
    throw dtype_error("fusor: cannot load " + src.label() + " as " + std::string(want.name) + ": expected " +
                      std::string(want.name) + " data, the file holds " + h.dtype + " (descr '" + h.descr +
                      "'); load it with load_npy<" + std::string(have_cpp) + "> and convert with .astype<" +
                      std::string(want.cpp) + ">()");
  }
  const std::size_t need = h.data_bytes();
  const std::size_t avail = src.size() - h.data_offset;
  auto what = [&] { return "shape " + to_string(h.shape) + " of " + h.dtype; };
  if (avail < need)
    fail(src.label(), h.data_offset, std::to_string(need) + " bytes of data (" + what() + ")",
         "only " + std::to_string(avail) + " bytes before the end of the file");
  if (avail > need)
    fail(src.label(), h.data_offset + need,
         "the end of the file after the data (" + std::to_string(need) + " bytes of " + what() + " from byte " +
             std::to_string(h.data_offset) + ")",
         std::to_string(avail - need) + " more bytes");

  // Fortran order: the bytes are a C-order array of the reversed shape, transposed below
  const bool reversed = h.fortran_order && h.shape.size() > 1;
  extents stored = h.shape;
  if (reversed) std::reverse(stored.begin(), stored.end());
  array<T, cpu> r(stored);
  src.read(static_cast<void*>(r.data()), need);
  if (h.big_endian != native_big) byteswap(r.data(), need, want.component);
  if constexpr (std::is_same_v<T, bool>) {
    // any non-zero byte is True, as in NumPy; other bytes are not valid C++ bools
    auto* b = reinterpret_cast<unsigned char*>(r.data());
    for (std::size_t i = 0; i < need; ++i) b[i] = b[i] != 0;
  }
  if (!reversed) return r;
  return transpose(r).copy();
}

/// The prefix, header dict and padding np.save writes for a C-order array of T.
template <class T>
std::string header_bytes(const extents& shape) {
  std::string dict = "{'descr': '" + descr_of<T>() + "', 'fortran_order': False, 'shape': " + to_string(shape) + ", }";
  // NumPy leaves room to rewrite the first dimension in place with up to 21 digits
  if (shape.size() > 0) dict.append(21 - std::to_string(shape[0]).size(), ' ');
  for (int major : {1, 2}) {
    const std::size_t prefix = major == 1 ? 10 : 12;
    const std::size_t hlen = dict.size() + 1;
    const std::size_t pad = 64 - (prefix + hlen) % 64;
    const std::size_t len = hlen + pad;
    if (major == 1 && len > 65535) continue;
    std::string out = "\x93NUMPY";
    out += char(major);
    out += '\0';
    for (std::size_t k = 0; k < prefix - 8; ++k) out += char((len >> (8 * k)) & 0xff);
    out += dict;
    out.append(pad, ' ');
    out += '\n';
    return out;
  }
  throw io_error("fusor: a .npy header of " + std::to_string(dict.size()) + " bytes does not fit format 2.0");
}

/// Calls f(pointer, shape) with x's elements contiguous in C order, evaluating or copying only
/// when x is an expression or a non-contiguous view.
/// (A device array is copied to the host first, as np.save(cupy_array) would need.)
template <class E, class F>
void with_c_order(const E& x, F&& f) {
  require_supported<value_t<E>>();
  if constexpr (backend_traits<backend_of_t<E>>::host_accessible) {
    const auto c = fusor::ext::contiguous_of(x);
    f(static_cast<const value_t<E>*>(c.data()), c.view().shape());
  } else {
    const auto h = to<cpu>(x);
    f(h.data(), h.shape());
  }
}

// A source's array on backend B: read on the host, transferred once (not at all where B's memory
// is host memory).
template <class T, class B, class Source>
array<T, B> load_on(Source& src) {
  if constexpr (std::is_same_v<B, host_backend_t<B>>) return load<T>(src);
  else return to<B>(load<T>(src));
}

}  // namespace detail::npy

/// The header of a .npy file, checked as load_npy checks it (the data length is not checked).
inline npy_header read_npy_header(const std::filesystem::path& path) {
  detail::npy::file_source src(path);
  return detail::npy::parse_header(src);
}
/// The header of .npy data held in memory.
inline npy_header read_npy_header_bytes(std::span<const std::byte> bytes) {
  detail::npy::memory_source src{bytes};
  return detail::npy::parse_header(src);
}

/// Reads a .npy file holding T elements into a C-order array (np.load). Throws io_error for
/// anything unreadable or malformed and dtype_error when the file holds another element type.
/// load_npy<T, cuda> reads on the host and transfers the array once.
template <element T, backend B = default_backend>
array<T, B> load_npy(const std::filesystem::path& path) {
  detail::npy::file_source src(path);
  return detail::npy::load_on<T, B>(src);
}
/// load_npy for the bytes of a .npy file held in memory.
template <element T, backend B = default_backend>
array<T, B> load_npy_bytes(std::span<const std::byte> bytes) {
  detail::npy::memory_source src{bytes};
  return detail::npy::load_on<T, B>(src);
}

/// The bytes np.save would write for x (an array, a view or an expression, which is evaluated).
template <expression E>
std::vector<std::byte> to_npy_bytes(const E& x) {
  std::vector<std::byte> out;
  detail::npy::with_c_order(x, [&](const auto* data, const extents& shape) {
    const std::string head = detail::npy::header_bytes<value_t<E>>(shape);
    const std::size_t n = std::size_t(shape.numel()) * sizeof(value_t<E>);
    out.reserve(head.size() + n);
    const auto* h = reinterpret_cast<const std::byte*>(head.data());
    out.insert(out.end(), h, h + head.size());
    const auto* d = reinterpret_cast<const std::byte*>(data);
    if (n) out.insert(out.end(), d, d + n);
  });
  return out;
}

/// Writes x to a .npy file (np.save), replacing the file if it exists. x may be an array, any
/// view (written in C order) or an expression (evaluated first). Throws io_error naming the path
/// and the system's reason when the file cannot be written.
template <expression E>
void save_npy(const std::filesystem::path& path, const E& x) {
  detail::npy::with_c_order(x, [&](const auto* data, const extents& shape) {
    const std::string head = detail::npy::header_bytes<value_t<E>>(shape);
    const std::size_t n = std::size_t(shape.numel()) * sizeof(value_t<E>);
    errno = 0;
    std::FILE* f = std::fopen(path.string().c_str(), "wb");
    if (!f) throw io_error("fusor: cannot open '" + path.string() + "' for writing: " + detail::npy::errno_text(errno));
    errno = 0;
    bool ok = std::fwrite(head.data(), 1, head.size(), f) == head.size();
    if (ok && n) ok = std::fwrite(data, 1, n, f) == n;
    int err = errno;
    // fclose flushes: a full disk may only show here
    if (std::fclose(f) != 0 && ok) {
      ok = false;
      err = errno;
    }
    if (!ok)
      throw io_error("fusor: cannot write " + std::to_string(head.size() + n) + " bytes to '" + path.string() +
                     "': " + detail::npy::errno_text(err));
  });
}

}  // namespace fusor
