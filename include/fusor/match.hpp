#pragma once
// FFT template matching (namespace fusor::match). So far: rotations (quaternions, matrices, Euler
// conventions, near-uniform rotation sets with their covering radius, symmetry reduction, cones),
// rigid transforms of volumes (trilinear and cubic B-spline interpolation), masks, pyTME's scores
// and the exhaustive scan.
#include "match/rotations.hpp"
#include "match/interpolation.hpp"
#include "match/transform.hpp"
#include "match/masks.hpp"
#include "match/scores.hpp"
#include "match/filters.hpp"
#include "match/scan.hpp"
