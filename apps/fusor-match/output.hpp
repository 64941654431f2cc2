#pragma once
// Where fusor-match's results go: text files written whole or not at all (beside the target, then
// renamed, as write_mrc does), an output folder checked before any work, and Ctrl-C turned into a
// request to stop that the scan's progress callback passes on, so a run never dies mid-write.
#include <atomic>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <fusor/fusor.hpp>

namespace fusor_match {

namespace fs = std::filesystem;

/// Set by the first SIGINT or SIGTERM; the second one ends the process as usual.
inline volatile std::sig_atomic_t interrupted = 0;
extern "C" inline void on_interrupt(int sig) {
  interrupted = 1;
  std::signal(sig, SIG_DFL);
}
inline void catch_interrupts() {
  std::signal(SIGINT, on_interrupt);
  std::signal(SIGTERM, on_interrupt);
}

/// A hidden temporary name beside `path`, for a file renamed to `path` once complete.
inline fs::path temporary_beside(const fs::path& path) {
  return path.parent_path() / ("." + path.filename().string() + ".part-" + std::to_string(::getpid()));
}

/// Writes `text` to `path` through a temporary file in the same folder, renamed when complete.
inline void write_text(const fs::path& path, const std::string& text) {
  const fs::path tmp = temporary_beside(path);
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << text;
    out.flush();
    if (!out) {
      std::error_code ignore;
      fs::remove(tmp, ignore);
      throw fusor::io_error("cannot write " + path.string());
    }
  }
  fs::rename(tmp, path);
}

/// RELION's Euler angles (rlnAngleRot, rlnAngleTilt, rlnAnglePsi, degrees) of an orientation q,
/// the active rotation that turns the template into the particle. RELION's matrix A of the angles
/// (Euler_angles2matrix) is the rotation that turns the reference into the particle, and A is the
/// transpose of the ZYZ composition Rz(rot) Ry(tilt) Rz(psi): so the angles are those of q's
/// inverse in fusor's zyz_intrinsic convention (pyTME's STAR files hold the same numbers).
inline fusor::match::euler_angles relion_angles(const fusor::match::quaternion& q) {
  return fusor::match::to_euler(fusor::match::inverse(q), fusor::match::euler_convention::zyz_intrinsic);
}
/// The orientation whose RELION angles are `e` (relion_angles' inverse).
inline fusor::match::quaternion from_relion_angles(const fusor::match::euler_angles& e) {
  return fusor::match::inverse(fusor::match::from_euler(e, fusor::match::euler_convention::zyz_intrinsic));
}

/// The orientation of pytom-match-pick's ZXZ Euler angles (Z1, X, Z2, radians, its angle lists'
/// rows). pytom writes RELION's angles of a row as the ZYZ angles of Rz(-Z1) Rx(-X) Rz(-Z2)
/// (pytom_tm/extract.py), which relion_angles says is the orientation's inverse: so the
/// orientation is Rz(Z2) Rx(X) Rz(Z1), turning the template about its own z by Z1 first.
inline fusor::match::quaternion from_pytom_angles(const std::array<double, 3>& zxz) {
  constexpr double degrees = 180.0 / 3.14159265358979323846;
  return fusor::match::inverse(fusor::match::from_euler({-zxz[0] * degrees, -zxz[1] * degrees, -zxz[2] * degrees},
                                                        fusor::match::euler_convention::zxz_intrinsic));
}

/// Reads a whole text file, or an io_error naming it.
inline std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw fusor::io_error("cannot read " + path.string() + ": no such file or not readable");
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

/// A match output folder's metadata.json, or an io_error naming it.
inline nlohmann::json read_metadata(const fs::path& dir) {
  try {
    return nlohmann::json::parse(read_text(dir / "metadata.json"));
  } catch (const nlohmann::json::exception& e) {
    throw fusor::io_error((dir / "metadata.json").string() + " is not valid JSON: " + e.what());
  }
}

/// The output folder, made if missing; an io_error when it cannot be, or when it is a file.
inline void prepare_folder(const fs::path& dir) {
  std::error_code ec;
  if (fs::exists(dir, ec) && !fs::is_directory(dir, ec))
    throw fusor::io_error("the output " + dir.string() + " exists and is not a folder");
  fs::create_directories(dir, ec);
  if (ec) throw fusor::io_error("cannot make the output folder " + dir.string() + ": " + ec.message());
  if (::access(dir.c_str(), W_OK) != 0)
    throw fusor::io_error("the output folder " + dir.string() + " is not writable");
}

/// An input file that must exist and be readable, checked before any work.
inline void require_file(const fs::path& path, const char* what) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec) || ::access(path.c_str(), R_OK) != 0)
    throw fusor::io_error(std::string("the ") + what + " " + path.string() +
                          " is missing or not readable");
}

/// The output file can be written: it is no folder, and its folder exists and is writable or can
/// be made (the nearest existing folder above it is writable). Checked before any work; nothing
/// is created until the file is written (make_output_folder).
inline void require_output_file(const fs::path& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) throw fusor::io_error("the output " + path.string() + " is a folder; expected an MRC file name");
  fs::path dir = fs::absolute(path).parent_path();
  while (!fs::exists(dir, ec) && dir.has_parent_path() && dir != dir.parent_path()) dir = dir.parent_path();
  if (!fs::is_directory(dir, ec))
    throw fusor::io_error("the output " + path.string() + " cannot be written: " + dir.string() + " is not a folder");
  if (::access(dir.c_str(), W_OK) != 0) throw fusor::io_error("the output's folder " + dir.string() + " is not writable");
}

/// The output file's folder, made when missing (after every check).
inline void make_output_folder(const fs::path& path) {
  const fs::path dir = fs::absolute(path).parent_path();
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw fusor::io_error("cannot make the output's folder " + dir.string() + ": " + ec.message());
}

}  // namespace fusor_match
