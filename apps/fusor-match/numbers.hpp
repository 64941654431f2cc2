#pragma once
// Numeric options checked in words: every number fusor-match takes is finite and in its range, and
// the messages print bounds as people write them ("0 to 16", not a 309-digit double). CLI11's own
// NonNegativeNumber and Range pass NaN, and print an open bound as the largest double.
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <thread>

#include <CLI/CLI.hpp>

namespace fusor_match {

/// A number as people write it: "0.5", "1e+06", "16".
inline std::string short_number(double v) {
  char t[32];
  std::snprintf(t, sizeof t, "%.6g", v);
  return t;
}

/// The whole of `s` as a double, or false.
inline bool parse_double(const std::string& s, double& v) {
  try {
    std::size_t used = 0;
    v = std::stod(s, &used);
    return used == s.size();
  } catch (const std::exception&) {
    return false;
  }
}

/// A finite number from lo to hi (an infinite bound: no bound on that side); open_lo: above lo.
inline CLI::Validator finite_number(double lo, double hi, bool open_lo = false) {
  std::string range;
  if (std::isinf(hi)) range = (open_lo ? "above " : "at least ") + short_number(lo);
  else if (std::isinf(lo)) range = "at most " + short_number(hi);
  else range = (open_lo ? "above " + short_number(lo) + " and up to " : "from " + short_number(lo) + " to ") + short_number(hi);
  return CLI::Validator(
      [lo, hi, open_lo, range](std::string& s) -> std::string {
        double v = 0;
        if (!parse_double(s, v)) return "expected a number, got \"" + s + "\"";
        if (!std::isfinite(v) || v < lo || v > hi || (open_lo && v == lo))
          return "expected a finite number " + range + ", got " + s;
        return {};
      },
      "NUMBER " + range);
}

/// An integer from lo to hi.
inline CLI::Validator whole_number(long long lo, long long hi) {
  const std::string range = hi == std::numeric_limits<long long>::max() ? "at least " + std::to_string(lo)
                                                                         : "from " + std::to_string(lo) + " to " + std::to_string(hi);
  return CLI::Validator(
      [lo, hi, range](std::string& s) -> std::string {
        try {
          std::size_t used = 0;
          const long long v = std::stoll(s, &used);
          if (used == s.size() && v >= lo && v <= hi) return {};
        } catch (const std::exception&) {
        }
        return "expected a whole number " + range + ", got \"" + s + "\"";
      },
      "INT " + range);
}

/// The most threads a run may ask for: four per hardware thread of this machine (more never
/// helps a scan, and a runtime asked for tens of thousands fails or crashes).
inline long long max_threads() {
  const unsigned h = std::thread::hardware_concurrency();
  return 4 * (h > 0 ? (long long)h : 1);
}

}  // namespace fusor_match
