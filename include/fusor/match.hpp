#pragma once
// FFT template matching (namespace fusor::match). So far: rotations (quaternions, matrices, Euler
// conventions, near-uniform sets with their covering radius, symmetry reduction, cones), rigid
// transforms of volumes (trilinear and cubic B-spline interpolation) and masks.
#include "match/rotations.hpp"
#include "match/interpolation.hpp"
#include "match/transform.hpp"
#include "match/masks.hpp"
