// A consumer's own module unit that imports fusor. Its target has module units, so fusor::module
// does not force-include xsimd there (a module unit must begin with `module;`); with clang 19 the
// unit includes xsimd itself, in its global module fragment, as docs/packaging.md says.
module;
#include <xsimd/xsimd.hpp>
export module consumer_unit;
import fusor;

/// The sum of 2 i + 1 for i < n, evaluated by fusor inside this module: n^2.
export double odd_sum(long n) {
  const fusor::array<double> i = fusor::arange<double>(0, double(n));
  return fusor::sum(2.0 * i + 1.0);
}
