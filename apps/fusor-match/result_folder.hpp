#pragma once
// A match output folder changes from one whole result to another whole result, or not at all.
//  - `match` writes the parts (scores.mrc, rotations.mrc, rotations.tsv, metadata.json last) into a
//    staging folder beside the output, `.NAME.fusor-partial-HOST-PID`, and swaps it in with one
//    rename (renameat2's RENAME_EXCHANGE, atomic on Linux's local file systems). The folder it
//    replaces goes with everything derived from it (peaks.tsv, peaks.star, preview.png): a new scan
//    invalidates them. A failure or a kill before the swap leaves the previous result as it was.
//  - metadata.json records each part's size and CRC-32 (its "parts"), and every reader checks the
//    parts against it (check_result_parts), so a folder mixing two results is refused in words.
//  - An advisory lock (flock on NAME/.fusor-match.lock, which holds the writer's pid, host and
//    start) keeps a second writer out for the whole scan; the second one fails at once, naming the
//    first. peaks and preview take it too while they write into the folder.
//  - Staging folders and temporary files of processes of this host that are gone are removed.
// A folder that holds files fusor-match did not write is refused before any work: the swap would
// take them away with the previous result.
#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <initializer_list>
#include <optional>
#include <signal.h>
#include <string>
#include <string_view>
#include <type_traits>
#include <sys/file.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <unistd.h>
#include <vector>

#include <nlohmann/json.hpp>
#include <zlib.h>

#include <fusor/fusor.hpp>

#include "output.hpp"

namespace fusor_match {

/// A match result's parts; metadata.json is written last and records the others.
inline constexpr const char* result_parts[] = {"scores.mrc", "rotations.mrc", "rotations.tsv"};
/// Parts some results have (a seeded search's table, the maps as HDF5), recorded like the others
/// where written.
inline constexpr const char* optional_parts[] = {"seeds.tsv", "scores.h5", "rotations.h5"};
inline constexpr const char* metadata_name = "metadata.json";
/// What peaks, preview and stats write into a result folder by default: derived from one result.
inline constexpr const char* derived_files[] = {"peaks.tsv", "peaks.star", "preview.png", "stats.svg", "stats.tsv", "stats.json"};
inline constexpr const char* lock_name = ".fusor-match.lock";

inline std::string host_name() {
  char h[256] = {};
  if (::gethostname(h, sizeof h - 1) != 0) return "localhost";
  std::string s(h);
  for (char& c : s)
    if (c == '-' || c == '/' || c == '.') c = '_';  // the staging name splits at its last '-'
  return s;
}

inline std::string errno_text(int e) { return std::error_code(e, std::generic_category()).message(); }

/// True unless the process `pid` of this host is known to be gone.
inline bool process_alive(long pid) { return pid > 0 && (::kill(pid_t(pid), 0) == 0 || errno == EPERM); }

/// The pid at the end of a temporary's name ("...-PID" or "...part-PID"), or -1.
inline long trailing_pid(std::string_view name) {
  const auto dash = name.find_last_of('-');
  if (dash == std::string_view::npos || dash + 1 == name.size()) return -1;
  long pid = 0;
  for (char c : name.substr(dash + 1)) {
    if (c < '0' || c > '9' || pid > 100000000) return -1;
    pid = pid * 10 + (c - '0');
  }
  return pid;
}

/// Temporary files inside a result folder: write_text's ".NAME.part-PID", write_mrc's
/// "NAME.fusor-partial-PID".
inline bool temporary_name(std::string_view n) {
  return (n.starts_with('.') && n.find(".part-") != std::string_view::npos) ||
         n.find(".fusor-partial-") != std::string_view::npos;
}

/// An exclusive advisory lock on a folder (flock on DIR/.fusor-match.lock), or an io_error that
/// names the process holding it. Released (and its file removed) by the destructor or the exit.
class folder_lock {
 public:
  folder_lock(const fs::path& dir, const std::string& action) : path_(dir / lock_name) {
    for (int attempt = 0; attempt < 100; ++attempt) {
      fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
      if (fd_ < 0) throw fusor::io_error("cannot open the lock " + path_.string() + ": " + errno_text(errno));
      if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
        const int e = errno;
        std::string holder(512, '\0');
        const ssize_t got = ::pread(fd_, holder.data(), holder.size(), 0);
        holder.resize(got > 0 ? std::size_t(got) : 0);
        while (!holder.empty() && (holder.back() == '\n' || holder.back() == '\0')) holder.pop_back();
        ::close(fd_);
        fd_ = -1;
        if (e != EWOULDBLOCK)
          throw fusor::io_error("cannot lock " + path_.string() + ": " + errno_text(e));
        throw fusor::io_error("the folder " + dir.string() + " is in use by another fusor-match (" +
                              (holder.empty() ? std::string("a process that is starting") : holder) +
                              "); wait for it to finish or choose another folder");
      }
      // the file may have been removed (a holder's release) between our open and our lock: then
      // the lock guards nothing, and we start again on the file the path names now
      struct stat held{}, named{};
      if (::fstat(fd_, &held) == 0 && ::stat(path_.c_str(), &named) == 0 && held.st_ino == named.st_ino &&
          held.st_dev == named.st_dev) {
        char when[32] = {};
        const std::time_t now = std::time(nullptr);
        std::tm utc{};
        ::gmtime_r(&now, &utc);
        std::strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S UTC", &utc);
        const std::string who = "pid " + std::to_string(::getpid()) + " on " + host_name() + ", " + action +
                                " since " + when + "\n";
        if (::ftruncate(fd_, 0) != 0 || ::pwrite(fd_, who.data(), who.size(), 0) != ssize_t(who.size())) {
          // the holder's description is for messages only: the lock itself holds
        }
        return;
      }
      ::close(fd_);
      fd_ = -1;
    }
    throw fusor::io_error("cannot lock " + path_.string() + ": it keeps being replaced");
  }
  folder_lock(const folder_lock&) = delete;
  folder_lock& operator=(const folder_lock&) = delete;
  ~folder_lock() {
    if (fd_ < 0) return;
    // while still held: a process that opened it meanwhile re-checks the inode (above)
    if (!path_.empty()) ::unlink(path_.c_str());
    ::close(fd_);
  }
  /// The lock file is no longer at its path (its folder was swapped away): release only.
  void detach() { path_.clear(); }

 private:
  fs::path path_;
  int fd_ = -1;
};

/// Removes this host's staging folders beside `dir` and temporary files inside it whose
/// processes are gone (a match killed part-way leaves them).
inline void remove_stale_temporaries(const fs::path& dir) {
  std::error_code ec;
  const fs::path parent = fs::absolute(dir).parent_path();
  const std::string prefix = "." + fs::absolute(dir).filename().string() + ".fusor-partial-" + host_name() + "-";
  for (const auto& e : fs::directory_iterator(parent, ec)) {
    const std::string n = e.path().filename().string();
    if (n.starts_with(prefix) && !process_alive(trailing_pid(n))) fs::remove_all(e.path(), ec);
  }
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string n = e.path().filename().string();
    if (temporary_name(n) && !process_alive(trailing_pid(n))) fs::remove(e.path(), ec);
  }
}

/// The files in `dir` that fusor-match did not write (its result, derived files, lock, temporaries).
inline std::vector<std::string> foreign_files(const fs::path& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string n = e.path().filename().string();
    bool ours = n == metadata_name || n == lock_name || temporary_name(n);
    for (const char* p : result_parts) ours = ours || n == p;
    for (const char* p : optional_parts) ours = ours || n == p;
    for (const char* p : derived_files) ours = ours || n == p;
    if (!ours) out.push_back(n);
  }
  std::sort(out.begin(), out.end());
  return out;
}

/// A file's size and CRC-32 (zlib's), as metadata.json records each part.
struct file_digest {
  std::uintmax_t bytes = 0;
  unsigned long crc = 0;
};
inline file_digest digest_of(const fs::path& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) throw fusor::io_error("cannot read " + path.string() + ": " + errno_text(errno));
  file_digest d;
  d.crc = ::crc32(0L, Z_NULL, 0);
  std::vector<unsigned char> buf(std::size_t(1) << 20);
  std::size_t got = 0;
  while ((got = std::fread(buf.data(), 1, buf.size(), f)) > 0) {
    d.crc = ::crc32(d.crc, buf.data(), uInt(got));
    d.bytes += got;
  }
  const bool failed = std::ferror(f) != 0;
  std::fclose(f);
  if (failed) throw fusor::io_error("cannot read " + path.string());
  return d;
}
inline std::string hex32(unsigned long v) {
  char t[16];
  std::snprintf(t, sizeof t, "%08lx", v & 0xffffffffUL);
  return t;
}

/// Flushes a file (or folder) to the disk, so that a result swapped in survives a crash whole.
inline void sync_path(const fs::path& path, bool folder) {
  const int fd = ::open(path.c_str(), (folder ? O_RDONLY | O_DIRECTORY : O_RDONLY) | O_CLOEXEC);
  if (fd < 0) return;
  const int r = ::fsync(fd);
  const int e = errno;
  ::close(fd);
  if (r != 0 && e != EINVAL && e != EROFS)
    throw fusor::io_error("cannot flush " + path.string() + " to the disk: " + errno_text(e));
}

/// For tests of the folder's atomicity: FUSOR_MATCH_TEST_KILL_AT=POINT kills the process at POINT
/// (after a part is staged: its name; "swapped": after the swap, before the old result is removed).
inline void fault_point(const char* point) {
  const char* at = std::getenv("FUSOR_MATCH_TEST_KILL_AT");
  if (at && std::strcmp(at, point) == 0) ::raise(SIGKILL);
}

/// The output side of one `match` run: the folder made (when missing) and locked, its stale
/// temporaries removed, a staging folder beside it for the parts, and the swap that publishes
/// them. Without commit(), the destructor removes the staging folder (and the output folder when
/// this run made it and it is still empty): a failed run leaves things as they were.
class result_staging {
 public:
  explicit result_staging(const fs::path& dir) : dir_(fs::absolute(dir).lexically_normal()) {
    if (dir_.filename().empty()) dir_ = dir_.parent_path();  // "out/" names "out"
    std::error_code ec;
    if (fs::exists(dir_, ec) && !fs::is_directory(dir_, ec))
      throw fusor::io_error("the output " + dir.string() + " exists and is not a folder");
    made_ = !fs::exists(dir_, ec);
    prepare_folder(dir_);
    try {
      lock_.emplace(dir_, "writing a match result");
      if (const auto foreign = foreign_files(dir_); !foreign.empty()) {
        std::string list;
        for (std::size_t i = 0; i < foreign.size() && i < 5; ++i) list += (i ? ", " : "") + foreign[i];
        if (foreign.size() > 5) list += " and " + std::to_string(foreign.size() - 5) + " more";
        throw fusor::io_error("the output folder " + dir.string() + " holds files fusor-match did not write (" + list +
                              "); a new result replaces the folder whole, so give a new or empty folder, or a "
                              "previous result's");
      }
      remove_stale_temporaries(dir_);
      staging_ = dir_.parent_path() /
                 ("." + dir_.filename().string() + ".fusor-partial-" + host_name() + "-" + std::to_string(::getpid()));
      fs::remove_all(staging_, ec);
      fs::create_directory(staging_, ec);
      if (ec)
        throw fusor::io_error("cannot make the staging folder " + staging_.string() + " beside the output: " +
                              ec.message());
    } catch (...) {
      undo();
      throw;
    }
  }
  result_staging(const result_staging&) = delete;
  result_staging& operator=(const result_staging&) = delete;
  ~result_staging() { undo(); }

  /// Where a part is written before the swap.
  fs::path part(const char* name) const { return staging_ / name; }

  /// Records the staged parts in `meta` ("parts": bytes and CRC-32 each), writes metadata.json,
  /// flushes everything and swaps the staging folder in; the previous result is then removed.
  void commit(nlohmann::ordered_json& meta) {
    nlohmann::ordered_json parts;
    const auto record = [&](const char* p) {
      const file_digest d = digest_of(part(p));
      parts[p] = {{"bytes", d.bytes}, {"crc32", hex32(d.crc)}};
      sync_path(part(p), false);
    };
    for (const char* p : result_parts) {
      record(p);
      fault_point(p);
    }
    for (const char* p : optional_parts) {
      std::error_code ec;
      if (fs::exists(part(p), ec)) record(p);
    }
    meta["parts"] = parts;
    write_text(part(metadata_name), meta.dump(2) + "\n");
    sync_path(part(metadata_name), false);
    sync_path(staging_, true);
    fault_point(metadata_name);
    // one rename exchanges the two folders: readers see the old result or the new one
    if (::renameat2(AT_FDCWD, staging_.c_str(), AT_FDCWD, dir_.c_str(), RENAME_EXCHANGE) != 0) {
      const int e = errno;
      if (e != EINVAL && e != ENOSYS && e != EOPNOTSUPP)
        throw fusor::io_error("cannot move the result into place as " + dir_.string() + ": " + errno_text(e));
      // a file system without the exchange (NFS, some FUSE): two renames, the folder briefly absent
      const fs::path old = staging_.string() + "-old";
      std::error_code ec;
      fs::rename(dir_, old, ec);
      if (!ec) fs::rename(staging_, dir_, ec);
      if (ec) throw fusor::io_error("cannot move the result into place as " + dir_.string() + ": " + ec.message());
      staging_ = old;
    }
    committed_ = true;
    sync_path(dir_.parent_path(), true);
    fault_point("swapped");
    lock_->detach();  // its file went with the previous folder: what the path names now is not ours
    std::error_code ec;
    fs::remove_all(staging_, ec);  // the previous result and what was derived from it
    lock_.reset();
  }

 private:
  void undo() noexcept {
    std::error_code ec;
    if (!committed_ && !staging_.empty()) fs::remove_all(staging_, ec);
    lock_.reset();
    if (made_ && !committed_) fs::remove(dir_, ec);  // only when still empty
  }

  fs::path dir_, staging_;
  std::optional<folder_lock> lock_;
  bool made_ = false, committed_ = false;
};

// ---- reading a result ------------------------------------------------------------------------

/// A field of metadata.json by its path ("statistics", "mean"), as T, or an io_error in words.
template <class T>
T metadata_field(const nlohmann::json& meta, std::initializer_list<const char*> keys, const fs::path& file) {
  std::string name;
  const nlohmann::json* j = &meta;
  for (const char* k : keys) {
    name += (name.empty() ? "" : ".") + std::string(k);
    if (!j->is_object() || !j->contains(k))
      throw fusor::io_error(file.string() + ": the field " + name + " is missing; expected a match result's metadata");
    j = &(*j)[k];
  }
  const auto kind = [&] { return j->is_null() ? std::string("null") : std::string(j->type_name()) + " " + j->dump(); };
  if constexpr (std::is_same_v<T, std::string>) {
    if (!j->is_string()) throw fusor::io_error(file.string() + ": " + name + " is " + kind() + "; expected a string");
    return j->get<std::string>();
  } else if constexpr (std::is_floating_point_v<T>) {
    if (!j->is_number() || !std::isfinite(j->get<double>()))
      throw fusor::io_error(file.string() + ": " + name + " is " + kind() + "; expected a finite number");
    return j->get<T>();
  } else if constexpr (std::is_integral_v<T>) {
    if (!j->is_number_integer() || (std::is_unsigned_v<T> && j->get<long long>() < 0))
      throw fusor::io_error(file.string() + ": " + name + " is " + kind() + "; expected " +
                            (std::is_unsigned_v<T> ? "a count (an integer >= 0)" : "an integer"));
    return j->get<T>();
  } else if constexpr (std::is_same_v<T, std::array<double, 3>>) {  // a point: three finite numbers
    const auto finite = [](const nlohmann::json& x) { return x.is_number() && std::isfinite(x.get<double>()); };
    if (!j->is_array() || j->size() != 3 || !finite((*j)[0]) || !finite((*j)[1]) || !finite((*j)[2]))
      throw fusor::io_error(file.string() + ": " + name + " is " + kind() + "; expected three finite numbers");
    return T{(*j)[0].get<double>(), (*j)[1].get<double>(), (*j)[2].get<double>()};
  } else {  // a list of three voxel counts
    if (!j->is_array() || j->size() != 3 || !(*j)[0].is_number_integer() || !(*j)[1].is_number_integer() ||
        !(*j)[2].is_number_integer() || (*j)[0].get<long long>() < 1 || (*j)[1].get<long long>() < 1 ||
        (*j)[2].get<long long>() < 1)
      throw fusor::io_error(file.string() + ": " + name + " is " + kind() + "; expected three voxel counts >= 1");
    return T{(*j)[0].get<fusor::index_t>(), (*j)[1].get<fusor::index_t>(), (*j)[2].get<fusor::index_t>()};
  }
}

/// Checks that the parts in `dir` are the ones its metadata.json recorded (size and CRC-32): a
/// folder mixing two results, or a part changed since, is an io_error naming the part.
inline void check_result_parts(const fs::path& dir, const nlohmann::json& meta,
                               std::initializer_list<const char*> which) {
  const fs::path file = dir / metadata_name;
  if (!meta.contains("parts"))
    throw fusor::io_error(file.string() + " records no parts (written by a fusor-match before 0.1.0's result "
                          "folders); run match again");
  for (const char* p : which) {
    const auto bytes = metadata_field<std::uintmax_t>(meta, {"parts", p, "bytes"}, file);
    const auto crc = metadata_field<std::string>(meta, {"parts", p, "crc32"}, file);
    const file_digest d = digest_of(dir / p);
    if (d.bytes != bytes || hex32(d.crc) != crc)
      throw fusor::io_error(dir.string() + ": " + p + " is not the part metadata.json records (" + std::to_string(bytes) +
                            " bytes, CRC-32 " + crc + "; the file has " + std::to_string(d.bytes) + " bytes, CRC-32 " +
                            hex32(d.crc) + "): the folder mixes two results or was changed; run match again");
  }
}

}  // namespace fusor_match
