#pragma once
// The white top-hat of a score map: the map minus its grey opening (an erosion, then a dilation,
// by a small cross or cube). What is left are peaks narrower than the element: a true copy's
// sharp maximum stays, broad ridges of the background go (pytom-match-pick's --tophat-filter,
// after Chaillet et al. 2025, which calls peaks where the top-hat passes a cut-off fitted to its
// own histogram: score_histogram.hpp).
#include <algorithm>
#include <array>
#include <string>
#include <vector>

#include "interpolation.hpp"

namespace fusor::match {

namespace detail {

/// out = the minimum (or maximum) of `in` over the offsets, indices clamped at the faces (for an
/// element of radius 1, scipy.ndimage's default 'reflect' mode repeats the face voxel: the same).
inline void grey_filter(const float* in, float* out, const extents& n, const std::vector<std::array<int, 3>>& offsets, bool minimum) {
  for (index_t i = 0; i < n[0]; ++i)
    for (index_t j = 0; j < n[1]; ++j)
      for (index_t k = 0; k < n[2]; ++k) {
        float v = in[(i * n[1] + j) * n[2] + k];
        for (const auto& d : offsets) {
          const index_t a = std::clamp<index_t>(i + d[0], 0, n[0] - 1), b = std::clamp<index_t>(j + d[1], 0, n[1] - 1),
                        c = std::clamp<index_t>(k + d[2], 0, n[2] - 1);
          const float x = in[(a * n[1] + b) * n[2] + c];
          v = minimum ? std::min(v, x) : std::max(v, x);
        }
        out[(i * n[1] + j) * n[2] + k] = v;
      }
}

}  // namespace detail

/// map - opening(map), the element scipy.ndimage.generate_binary_structure(3, connectivity) makes:
/// the offsets d in {-1, 0, 1}^3 with |d|^2 <= connectivity (1: the centre and its 6 faces, 2: and
/// 12 edges, 3: the 27-voxel cube). Computed on the host, returned on B.
template <class B>
array<float, B> white_tophat(const array<float, B>& map, int connectivity = 1) {
  detail::require_volume(map.shape(), "white_tophat");
  if (connectivity < 1 || connectivity > 3)
    throw value_error("fusor::match::white_tophat: expected a connectivity of 1, 2 or 3, got " + std::to_string(connectivity));
  std::vector<std::array<int, 3>> offsets;
  for (int a = -1; a <= 1; ++a)
    for (int b = -1; b <= 1; ++b)
      for (int c = -1; c <= 1; ++c)
        if (a * a + b * b + c * c <= connectivity) offsets.push_back({a, b, c});
  const extents n = map.shape();
  using H = detail::host_of_t<B>;
  const array<float, H> v = to<H>(map);
  array<float, H> eroded(n), opened(n);
  if (v.size() == 0) return to<B>(v);
  detail::grey_filter(v.data(), eroded.data(), n, offsets, true);
  detail::grey_filter(eroded.data(), opened.data(), n, offsets, false);
  for (index_t q = 0; q < v.size(); ++q) opened.data()[q] = v.data()[q] - opened.data()[q];
  return to<B>(opened);
}

}  // namespace fusor::match
