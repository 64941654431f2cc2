// HDF5 volumes in pyTME's Density layout (hdf5_volumes.hpp), through the HDF5 C library.
#include "hdf5_volumes.hpp"

#include <hdf5.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace fusor_match {

namespace {

/// Closes an HDF5 identifier with its own function when it leaves scope.
class handle {
 public:
  handle(hid_t id, herr_t (*close)(hid_t), const std::string& what) : id_(id), close_(close) {
    if (id_ < 0) throw std::runtime_error(what);
  }
  ~handle() {
    if (id_ >= 0) close_(id_);
  }
  handle(const handle&) = delete;
  handle& operator=(const handle&) = delete;
  operator hid_t() const { return id_; }

 private:
  hid_t id_;
  herr_t (*close_)(hid_t);
};

void check(herr_t status, const std::string& what) {
  if (status < 0) throw std::runtime_error(what);
}

/// HDF5 prints its own error stack to stderr by default; the messages here say what failed.
void quiet() { H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr); }

void write_doubles(hid_t file, const char* name, const std::array<double, 3>& v, const std::string& path) {
  const hsize_t n = 3;
  const handle space(H5Screate_simple(1, &n, nullptr), H5Sclose, path + ": cannot describe " + name);
  const handle set(H5Dcreate2(file, name, H5T_IEEE_F64LE, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Dclose,
                   path + ": cannot create the dataset " + name);
  check(H5Dwrite(set, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()), path + ": cannot write " + name);
}

void write_attribute(hid_t file, const char* name, double value, const std::string& path) {
  const handle space(H5Screate(H5S_SCALAR), H5Sclose, path + ": cannot describe the attribute " + name);
  const handle a(H5Acreate2(file, name, H5T_IEEE_F64LE, space, H5P_DEFAULT, H5P_DEFAULT), H5Aclose,
                 path + ": cannot create the attribute " + name);
  check(H5Awrite(a, H5T_NATIVE_DOUBLE, &value), path + ": cannot write the attribute " + name);
}

void write_attribute(hid_t file, const std::string& name, const std::string& value, const std::string& path) {
  const handle type(H5Tcopy(H5T_C_S1), H5Tclose, path + ": cannot make a string type");
  check(H5Tset_size(type, value.empty() ? 1 : value.size()), path + ": cannot size a string type");
  const handle space(H5Screate(H5S_SCALAR), H5Sclose, path + ": cannot describe the attribute " + name);
  const handle a(H5Acreate2(file, name.c_str(), type, space, H5P_DEFAULT, H5P_DEFAULT), H5Aclose,
                 path + ": cannot create the attribute " + name);
  check(H5Awrite(a, type, value.empty() ? "" : value.data()), path + ": cannot write the attribute " + name);
}

}  // namespace

void write_hdf5_volume(const std::string& path, const hdf5_volume& v) {
  quiet();
  const bool floats = !v.values.empty() || v.indices.empty();
  const std::size_t count = std::size_t(v.shape[0] * v.shape[1] * v.shape[2]);
  if ((floats ? v.values.size() : v.indices.size()) != count)
    throw std::runtime_error(path + ": the volume holds " + std::to_string(floats ? v.values.size() : v.indices.size()) +
                             " values for a shape of " + std::to_string(count));
  const handle file(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), H5Fclose, "cannot create the HDF5 file " + path);
  const hsize_t dims[3] = {hsize_t(v.shape[0]), hsize_t(v.shape[1]), hsize_t(v.shape[2])};
  {
    const handle space(H5Screate_simple(3, dims, nullptr), H5Sclose, path + ": cannot describe the volume");
    const handle set(H5Dcreate2(file, "data", floats ? H5T_IEEE_F32LE : H5T_STD_I32LE, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                     H5Dclose, path + ": cannot create the dataset data");
    check(floats ? H5Dwrite(set, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.values.data())
                 : H5Dwrite(set, H5T_NATIVE_INT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.indices.data()),
          path + ": cannot write the volume");
  }
  write_doubles(file, "origin", v.origin, path);
  write_doubles(file, "sampling_rate", v.sampling_rate, path);
  // pyTME's metadata: the finite values' statistics (a seeded search's maps hold NaN)
  double sum = 0, sum2 = 0, lo = std::numeric_limits<double>::infinity(), hi = -lo, n = 0;
  for (std::size_t i = 0; i < count; ++i) {
    const double x = floats ? double(v.values[i]) : double(v.indices[i]);
    if (!std::isfinite(x)) continue;
    sum += x, sum2 += x * x, n += 1;
    lo = std::min(lo, x), hi = std::max(hi, x);
  }
  const double mean = n > 0 ? sum / n : 0, var = n > 0 ? sum2 / n - mean * mean : 0;
  write_attribute(file, "mean", mean, path);
  write_attribute(file, "std", var > 0 ? std::sqrt(var) : 0.0, path);
  write_attribute(file, "min", n > 0 ? lo : 0.0, path);
  write_attribute(file, "max", n > 0 ? hi : 0.0, path);
  for (const auto& [name, value] : v.attributes) write_attribute(file, name, value, path);
  check(H5Fflush(file, H5F_SCOPE_GLOBAL), path + ": cannot flush the file");
}

}  // namespace fusor_match
