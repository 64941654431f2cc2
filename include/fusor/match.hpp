#pragma once
// FFT template matching (namespace fusor::match). So far: rotations (quaternions, matrices, Euler
// conventions, near-uniform sets with their covering radius, symmetry reduction, cones).
#include "match/rotations.hpp"
