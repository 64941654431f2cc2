#pragma once
// NumPy's .npz archives: several named arrays in one zip file, as np.savez and
// np.savez_compressed write them and np.load reads them. Each array is the entry "<name>.npy",
// holding exactly what save_npy would write (see npy.hpp), so np.load(path)[name] gives the array.
//
// The zip container is libzip's (Debian's libzip-dev), not fusor's: it writes ZIP64 when an
// archive outgrows 4 GiB, checks CRCs when reading, and writes the archive to a temporary file
// that replaces the target only when everything is written, so a failed save never leaves a
// truncated archive behind.
//
// Writing: npz_writer collects arrays (add) and writes the archive at close(); save_npz writes a
// whole map at once. Reading: npz_archive opens an archive and loads entries by name; load_npz
// reads every array of one element type into a map. Every defect is an io_error that names the
// archive, and for an entry, the entry: a missing file, a file that is not a zip archive, a
// damaged entry (CRC), a name asked for that the archive lacks (with the names it has), a name
// added twice. An entry's contents are checked as load_npy checks a file (dtype_error when it
// holds another element type).
#include <zip.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <system_error>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "../core/array.hpp"
#include "../core/error.hpp"
#include "../core/name_list.hpp"
#include "npy.hpp"

namespace fusor {

/// How npz_writer stores its entries: as np.savez (stored, the default: fastest, and the
/// archive's size is the arrays' size) or as np.savez_compressed (deflated).
enum class npz_compression { stored, deflated };

namespace detail::npz {

inline constexpr std::string_view suffix = ".npy";

inline std::string libzip_text(int code) {
  zip_error_t e;
  zip_error_init_with_code(&e, code);
  std::string r = zip_error_strerror(&e);
  zip_error_fini(&e);
  return r;
}

inline std::string archive_label(const std::filesystem::path& p) { return ".npz archive '" + p.string() + "'"; }

// What np.load calls an entry: its name without ".npy" (other entries keep their whole name).
inline std::string array_name(std::string_view entry) {
  if (entry.size() > suffix.size() && entry.substr(entry.size() - suffix.size()) == suffix)
    return std::string(entry.substr(0, entry.size() - suffix.size()));
  return std::string(entry);
}

}  // namespace detail::npz

/// Writes an .npz archive: add() the arrays, then close(). Until close() the archive is built in
/// memory (each added array is converted to .npy bytes at once, so later changes to it are not
/// saved); an npz_writer destroyed without close() writes nothing and leaves an existing file at
/// the path as it was. Not copyable; movable.
class npz_writer {
 public:
  explicit npz_writer(std::filesystem::path path, npz_compression compression = npz_compression::stored)
      : path_(std::move(path)), compression_(compression) {}
  npz_writer(const npz_writer&) = delete;
  npz_writer& operator=(const npz_writer&) = delete;
  npz_writer(npz_writer&& o) noexcept
      : path_(std::move(o.path_)), compression_(o.compression_), names_(std::move(o.names_)),
        bytes_(std::move(o.bytes_)), closed_(o.closed_) {
    o.closed_ = true;
  }
  npz_writer& operator=(npz_writer&&) = delete;
  ~npz_writer() = default;

  /// Adds x (an array, any view, or an expression, evaluated now) as the entry "<name>.npy".
  /// Throws value_error for an empty name, a name already added, or after close().
  template <expression E>
  npz_writer& add(std::string_view name, const E& x) {
    if (closed_)
      throw value_error("fusor: npz_writer for '" + path_.string() + "': add('" + std::string(name) +
                        "') after close() (expected every add before close)");
    if (name.empty()) throw value_error("fusor: npz_writer for '" + path_.string() + "': an array name is empty (expected a non-empty name)");
    if (std::find(names_.begin(), names_.end(), name) != names_.end())
      throw value_error("fusor: npz_writer for '" + path_.string() + "': the name '" + std::string(name) +
                        "' was added twice (expected each name once)");
    bytes_.push_back(to_npy_bytes(x));
    names_.emplace_back(name);
    return *this;
  }
  /// The names added so far, in order.
  std::vector<std::string> names() const { return names_; }

  /// Writes the archive, replacing any file at the path. Throws io_error with libzip's reason
  /// (a missing directory, a full disk); the target is then left as it was, and the writer keeps
  /// its arrays (close() may be called again).
  void close() {
    if (closed_) return;
    if (names_.empty()) {
      write_empty();
      closed_ = true;
      return;
    }
    int code = 0;
    zip_t* za = zip_open(path_.string().c_str(), ZIP_CREATE | ZIP_TRUNCATE, &code);
    if (za == nullptr)
      throw io_error("fusor: cannot create the " + detail::npz::archive_label(path_) + ": " + detail::npz::libzip_text(code));
    try {
      for (std::size_t k = 0; k < names_.size(); ++k) {
        // libzip reads the buffer at zip_close: bytes_ keeps it alive until then
        zip_source_t* src = zip_source_buffer(za, bytes_[k].data(), bytes_[k].size(), 0);
        if (src == nullptr) fail(za, "cannot add '" + names_[k] + "'");
        const std::string entry = names_[k] + std::string(detail::npz::suffix);
        const zip_int64_t index = zip_file_add(za, entry.c_str(), src, ZIP_FL_ENC_UTF_8);
        if (index < 0) {
          zip_source_free(src);
          fail(za, "cannot add '" + names_[k] + "'");
        }
        // zlib's default level 6, as NumPy's savez_compressed (Python's zipfile) uses: libzip's own
        // default, 9, searches its longest chains on repetitive data such as small integers
        // (1M int64 values: 10 s against 0.3 s) for a file a few percent smaller
        const bool deflate = compression_ == npz_compression::deflated;
        const zip_int32_t method = deflate ? ZIP_CM_DEFLATE : ZIP_CM_STORE;
        if (zip_set_file_compression(za, zip_uint64_t(index), method, deflate ? 6 : 0) != 0) fail(za, "cannot set the compression of '" + names_[k] + "'");
      }
      if (zip_close(za) != 0) fail(za, "cannot write it");
    } catch (...) {
      zip_discard(za);  // the target is left as it was; the arrays stay for another close()
      throw;
    }
    closed_ = true;
    bytes_.clear();
  }

 private:
  [[noreturn]] void fail(zip_t* za, const std::string& what) const {
    throw io_error("fusor: " + detail::npz::archive_label(path_) + ": " + what + ": " + zip_error_strerror(zip_get_error(za)));
  }
  // libzip removes an archive left with no entries instead of writing it; NumPy writes an empty
  // archive, which is the zip format's end record alone (22 bytes: signature, then zero counts).
  // Written beside the target and renamed over it, as libzip does, so a failure leaves it as it was.
  void write_empty() const {
    static constexpr unsigned char end_record[22] = {'P', 'K', 5, 6};
    std::filesystem::path temp = path_;
    temp += ".fusor-tmp";
    errno = 0;
    std::FILE* f = std::fopen(temp.string().c_str(), "wb");
    if (!f) throw io_error("fusor: cannot create the " + detail::npz::archive_label(path_) + ": " + detail::npy::errno_text(errno));
    bool ok = std::fwrite(end_record, 1, sizeof end_record, f) == sizeof end_record;
    int err = errno;
    if (std::fclose(f) != 0 && ok) {
      ok = false;
      err = errno;
    }
    std::error_code ec;
    if (ok) std::filesystem::rename(temp, path_, ec);
    if (!ok || ec) {
      const std::string why = ok ? ec.message() : detail::npy::errno_text(err);
      std::filesystem::remove(temp, ec);
      throw io_error("fusor: cannot write the " + detail::npz::archive_label(path_) + ": " + why);
    }
  }

  std::filesystem::path path_;
  npz_compression compression_;
  std::vector<std::string> names_;
  std::vector<std::vector<std::byte>> bytes_;
  bool closed_ = false;
};

/// An .npz archive open for reading (np.load of an .npz): entries are read when asked for. Not
/// copyable; movable. One archive must not be read from two threads at once.
class npz_archive {
 public:
  /// Opens the archive; io_error when it is missing or not a zip archive.
  explicit npz_archive(std::filesystem::path path) : path_(std::move(path)) {
    std::error_code ec;
    if (std::filesystem::is_directory(path_, ec))
      throw io_error("fusor: cannot open the " + detail::npz::archive_label(path_) + ": it is a directory");
    int code = 0;
    za_ = zip_open(path_.string().c_str(), ZIP_RDONLY | ZIP_CHECKCONS, &code);
    if (za_ == nullptr)
      throw io_error("fusor: cannot open the " + detail::npz::archive_label(path_) + ": " + detail::npz::libzip_text(code));
    try {
      const zip_int64_t n = zip_get_num_entries(za_, 0);
      for (zip_int64_t k = 0; k < n; ++k) {
        const char* entry = zip_get_name(za_, zip_uint64_t(k), ZIP_FL_ENC_GUESS);
        if (entry == nullptr)
          throw io_error("fusor: cannot read the " + detail::npz::archive_label(path_) + ": entry " + std::to_string(k) +
                         ": " + zip_error_strerror(zip_get_error(za_)));
        entries_.emplace_back(entry);
        names_.push_back(detail::npz::array_name(entry));
      }
    } catch (...) {
      zip_discard(za_);  // (a constructor that throws runs no destructor)
      throw;
    }
  }
  npz_archive(const npz_archive&) = delete;
  npz_archive& operator=(const npz_archive&) = delete;
  npz_archive(npz_archive&& o) noexcept
      : path_(std::move(o.path_)), za_(std::exchange(o.za_, nullptr)), entries_(std::move(o.entries_)),
        names_(std::move(o.names_)) {}
  npz_archive& operator=(npz_archive&&) = delete;
  ~npz_archive() {
    if (za_) zip_discard(za_);  // opened read-only: nothing to write
  }

  const std::filesystem::path& path() const { return path_; }
  /// The arrays' names in archive order, as np.load's .files: entry names without ".npy". (A copy:
  /// `for (auto& n : npz_archive(p).names())` must not read a destroyed archive's list.)
  std::vector<std::string> names() const { return names_; }
  bool contains(std::string_view name) const { return find(name) >= 0; }

  /// The .npy header of entry `name` (its dtype and shape).
  npy_header header(std::string_view name) const {
    const std::vector<std::byte> b = bytes(name);
    detail::npy::memory_source src{b, 0, entry_label(name)};
    return detail::npy::parse_header(src);
  }
  /// Entry `name` as an array of T on backend B: io_error when the archive has no such entry or
  /// it is malformed, dtype_error when it holds another element type.
  template <element T, backend B = default_backend>
  array<T, B> load(std::string_view name) const {
    const std::vector<std::byte> b = bytes(name);
    detail::npy::memory_source src{b, 0, entry_label(name)};
    return detail::npy::load_on<T, B>(src);
  }
  /// The raw bytes of entry `name` (a .npy file's contents).
  std::vector<std::byte> bytes(std::string_view name) const {
    const std::ptrdiff_t k = find(name);
    if (k < 0)
      throw io_error("fusor: the " + detail::npz::archive_label(path_) + " has no array '" + std::string(name) +
                     "' (it has " + ext::name_list(names_) + ")");
    zip_stat_t st;
    zip_stat_init(&st);
    constexpr zip_uint64_t needed = ZIP_STAT_SIZE | ZIP_STAT_COMP_SIZE | ZIP_STAT_COMP_METHOD;
    if (zip_stat_index(za_, zip_uint64_t(k), 0, &st) != 0 || (st.valid & needed) != needed)
      fail(name, "cannot read its size");
    // The sizes are the archive's word, and a damaged or hostile one may claim gigabytes in a
    // kilobyte: the claim is bounded by what the entry can hold (a stored entry its own bytes,
    // a deflated one deflate's largest expansion), and the buffer grows with the data that
    // actually arrives, never to the claim at once.
    const zip_uint64_t claimed = st.size, packed = st.comp_size;
    const bool stored = st.comp_method == ZIP_CM_STORE;
    constexpr zip_uint64_t deflate_expansion = 1032;  // deflate's limit: 258 bytes per 2 bits
    const zip_uint64_t limit = stored ? packed
                               : packed > (UINT64_MAX - 1024) / deflate_expansion ? UINT64_MAX
                                                                                  : packed * deflate_expansion + 1024;
    if (claimed > limit)
      throw io_error("fusor: cannot read " + entry_label(name) + ": its directory entry claims " + std::to_string(claimed) +
                     " bytes, more than its " + std::to_string(packed) + (stored ? " stored" : " compressed") +
                     " bytes can hold" + (stored ? "" : " (deflate expands at most 1032 times)"));
    std::vector<std::byte> out;
    std::size_t got = 0;
    const auto grow = [&](std::size_t to) {
      try {
        out.resize(to);
      } catch (const std::exception&) {
        throw io_error("fusor: cannot read " + entry_label(name) + ": its " + std::to_string(claimed) +
                       " bytes are more than can be allocated");
      }
    };
    constexpr std::size_t first_chunk = std::size_t(1) << 20;
    grow(std::size_t(std::min<zip_uint64_t>(claimed, first_chunk)));
    zip_file_t* f = zip_fopen_index(za_, zip_uint64_t(k), 0);
    if (f == nullptr) fail(name, "cannot open it");
    for (;;) {
      if (got == out.size() && out.size() < claimed) {  // full, and more is claimed: twice the room
        try {
          grow(std::size_t(std::min<zip_uint64_t>(claimed, zip_uint64_t(out.size()) * 2)));
        } catch (...) {
          zip_fclose(f);
          throw;
        }
      }
      // one read past the claimed end: libzip checks the entry's CRC when it reaches the end
      std::byte probe{};
      const bool past = got == out.size();
      const zip_int64_t r = zip_fread(f, past ? &probe : out.data() + got, past ? 1 : out.size() - got);
      if (r < 0) {
        const std::string why = zip_error_strerror(zip_file_get_error(f));
        zip_fclose(f);
        throw io_error("fusor: cannot read " + entry_label(name) + ": " + why);
      }
      if (r == 0) break;
      if (past) {
        zip_fclose(f);
        throw io_error("fusor: cannot read " + entry_label(name) + ": it holds more than the " +
                       std::to_string(claimed) + " bytes its directory entry says");
      }
      got += std::size_t(r);
    }
    const int rc = zip_fclose(f);
    if (rc != 0) throw io_error("fusor: cannot read " + entry_label(name) + ": " + detail::npz::libzip_text(rc));
    if (got != claimed)
      throw io_error("fusor: cannot read " + entry_label(name) + ": expected " + std::to_string(claimed) + " bytes, found " +
                     std::to_string(got));
    return out;
  }

 private:
  std::ptrdiff_t find(std::string_view name) const {
    for (std::size_t k = 0; k < names_.size(); ++k)
      if (names_[k] == name) return std::ptrdiff_t(k);
    return -1;
  }
  std::string entry_label(std::string_view name) const {
    const std::ptrdiff_t k = find(name);
    return "entry '" + (k >= 0 ? entries_[std::size_t(k)] : std::string(name)) + "' of the " + detail::npz::archive_label(path_);
  }
  [[noreturn]] void fail(std::string_view name, const std::string& what) const {
    throw io_error("fusor: " + entry_label(name) + ": " + what + ": " + zip_error_strerror(zip_get_error(za_)));
  }

  std::filesystem::path path_;
  zip_t* za_ = nullptr;
  std::vector<std::string> entries_;
  std::vector<std::string> names_;
};

/// Writes every array of `arrays` as an entry named by its key (np.savez(path, **arrays)).
template <class T, backend B, class Compare, class Alloc>
void save_npz(const std::filesystem::path& path, const std::map<std::string, array<T, B>, Compare, Alloc>& arrays,
              npz_compression compression = npz_compression::stored) {
  npz_writer w(path, compression);
  for (const auto& [name, a] : arrays) w.add(name, a);
  w.close();
}

/// Reads every array of an archive as T on backend B, by name. dtype_error names the first entry
/// of another element type (read such archives entry by entry with npz_archive).
template <element T, backend B = default_backend>
std::map<std::string, array<T, B>> load_npz(const std::filesystem::path& path) {
  const npz_archive z(path);
  std::map<std::string, array<T, B>> out;
  for (const std::string& name : z.names()) out.emplace(name, z.load<T, B>(name));
  return out;
}

}  // namespace fusor
