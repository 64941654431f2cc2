// pytom's HEALPix angle lists (healpix_angles.hpp), the pixel centres from libchealpix.
#include "healpix_angles.hpp"

extern "C" {
#include <chealpix.h>
}

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numbers>
#include <stdexcept>
#include <string>

namespace fusor_match {

healpix_angle_list healpix_angles(double step) {
  if (!(step > 0 && step <= 180))
    throw std::invalid_argument("a HEALPix angle list needs a step in (0, 180] degrees, got " + std::to_string(step));
  constexpr double pi = std::numbers::pi;
  const double radians = step * pi / 180;
  const double wanted = 4 * pi / (radians * radians);  // pixels of about step^2 each
  healpix_angle_list out;
  // the least nside whose 12 nside^2 pixels reach that many (pytom's loop); below 1e-3 degrees
  // the list would not fit a 32-bit rotation index anyway
  if (step < 1e-3) throw std::invalid_argument("a HEALPix angle list needs a step of at least 0.001 degrees");
  out.nside = 1;
  while (double(nside2npix64(out.nside)) < wanted) ++out.nside;
  const std::int64_t pixels = nside2npix64(out.nside);
  const long turns = long(std::ceil(360.0 / step - 1e-9));
  if (double(pixels) * double(turns) > 4294967295.0)
    throw std::invalid_argument("a HEALPix angle list for a step of " + std::to_string(step) + " degrees holds more than 2^32 rotations");
  out.pixel_step = std::sqrt(4 * pi / double(pixels)) * 180 / pi;
  out.inplane_step = 360.0 / double(turns);
  out.zxz.reserve(std::size_t(pixels * turns));
  for (std::int64_t p = 0; p < pixels; ++p) {
    double theta = 0, phi = 0;
    pix2ang_ring64(out.nside, p, &theta, &phi);
    for (long k = 0; k < turns; ++k) out.zxz.push_back({phi, theta, 2 * pi * double(k) / double(turns)});
  }
  std::sort(out.zxz.begin(), out.zxz.end());  // pytom sorts its lists (Z1, then X, then Z2): the same indices
  return out;
}

}  // namespace fusor_match
