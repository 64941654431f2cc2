#pragma once
// Score and rotation maps as HDF5 files (`match --hdf5`), through the HDF5 C library (Debian's
// libhdf5-dev), in pyTME's Density layout so that pyTME reads them as it reads its own
// (`Density.from_file("scores.h5")`): a dataset "data" of the volume indexed [x, y, z] (z
// fastest, as fusor's arrays and pyTME's densities are), datasets "origin" and "sampling_rate"
// (Å, three doubles each), and the volume's mean, std, min and max as attributes of the file's
// root. The declarations use the standard library only, so that the HDF5 headers stay in
// hdf5_volumes.cpp.
#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace fusor_match {

/// A volume as an HDF5 file holds it.
struct hdf5_volume {
  std::array<long long, 3> shape{};
  std::array<double, 3> origin{}, sampling_rate{};
  std::vector<float> values;          // float32 data, [x][y][z]
  std::vector<std::int32_t> indices;  // or int32 data (the rotation map)
  std::vector<std::pair<std::string, std::string>> attributes;  // extra string attributes of the root
};

/// Writes `v` (its `values` or its `indices`, whichever is filled) to `path`, replacing the file.
/// A failure of the library is a std::runtime_error naming the file and the step.
void write_hdf5_volume(const std::string& path, const hdf5_volume& v);

}  // namespace fusor_match
