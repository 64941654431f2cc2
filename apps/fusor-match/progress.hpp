#pragma once
// The progress line of a long scan: rotations done, rate and time left, redrawn in place at most
// a few times a second on a terminal, and nothing when stderr is not one (a log, a pipe, mpirun's
// collected output).
#include <chrono>
#include <cstdio>
#include <string>
#include <sys/resource.h>
#include <unistd.h>

namespace fusor_match {

class progress_line {
 public:
  explicit progress_line(bool enabled) : on_(enabled && ::isatty(2)), start_(clock::now()), last_(start_) {}
  /// Called with rotations done of all; draws when a quarter second has passed, or at the end.
  void update(std::size_t done, std::size_t total) {
    if (!on_) return;
    const auto now = clock::now();
    if (done < total && now - last_ < std::chrono::milliseconds(250)) return;
    last_ = now;
    const double t = seconds(now), rate = t > 0 ? double(done) / t : 0.0;
    const double left = rate > 0 ? double(total - done) / rate : 0.0;
    std::fprintf(stderr, "\r  rotations %zu / %zu (%.1f%%), %.1f per s, %s left   ", done, total,
                 total ? 100.0 * double(done) / double(total) : 100.0, rate, duration(left).c_str());
    if (done == total) std::fprintf(stderr, "\n");
    std::fflush(stderr);
  }
  /// Seconds since the line was made.
  double elapsed() const { return seconds(clock::now()); }
  /// "1 h 02 min", "3 min 05 s", "12.3 s".
  static std::string duration(double s) {
    char b[64];
    if (s >= 3600) std::snprintf(b, sizeof b, "%d h %02d min", int(s / 3600), int(s / 60) % 60);
    else if (s >= 60) std::snprintf(b, sizeof b, "%d min %02d s", int(s / 60), int(s) % 60);
    else std::snprintf(b, sizeof b, "%.1f s", s);
    return b;
  }

 private:
  using clock = std::chrono::steady_clock;
  double seconds(clock::time_point t) const { return std::chrono::duration<double>(t - start_).count(); }
  bool on_;
  clock::time_point start_, last_;
};

/// The process's peak resident memory in bytes (getrusage's maximum resident set).
inline double peak_memory_bytes() {
  rusage u{};
  ::getrusage(RUSAGE_SELF, &u);
  return double(u.ru_maxrss) * 1024.0;
}

}  // namespace fusor_match
