#pragma once
// pytom-match-pick's angle lists (`match --angle-set healpix`), built as pytom builds them: the
// first two Euler angles from the centres of HEALPix pixels (Górski et al. 2005, ring ordering) of
// the least resolution whose pixels are no larger than the step squared, the third every step
// (rounded to divide 360) — computed by Debian's libchealpix. The declarations use the standard
// library only, so that chealpix.h stays in healpix_angles.cpp.
#include <array>
#include <vector>

namespace fusor_match {

struct healpix_angle_list {
  /// pytom's ZXZ Euler angles (Z1, X, Z2) in radians, one triple per rotation, sorted as pytom
  /// sorts them (by Z1, then X, then Z2), so that an index names the same rotation in both.
  std::vector<std::array<double, 3>> zxz;
  long nside = 0;
  double pixel_step = 0, inplane_step = 0;  // degrees: sqrt(4 pi / pixels), and 360 / the Z2 count
};

/// The list for a maximum angle difference `step` in degrees (0 < step <= 180), as
/// pytom_tm.angles.angle_to_angle_list makes it: nside the least with 12 nside^2 >= 4 pi / step^2
/// (radians), Z2 = 2 pi k / ceil(360 / step).
healpix_angle_list healpix_angles(double step);

}  // namespace fusor_match
