#pragma once
// FFT template matching (namespace fusor::match). So far: rotations (quaternions, matrices, Euler
// conventions, near-uniform rotation sets with their covering radius, symmetry reduction, cones),
// rigid transforms of volumes (trilinear and cubic B-spline interpolation), masks (tight ones from
// a template too), pyTME's scores, Fourier filters and a tilt series' weight with the readers of
// its metadata files, simulated tilt series, templates from atomic models and from maps (Fourier
// resampling), the exhaustive scan, peak calling (a top-hat filter, the noise's Gaussian fitted to
// the score histogram), the random-phase noise correction and MRC files.
#include "base.hpp"  // the engine and the cpu backend: this header alone is a whole include
#include "match/rotations.hpp"
#include "match/interpolation.hpp"
#include "match/transform.hpp"
#include "match/masks.hpp"
#include "match/scores.hpp"
#include "match/tilt_series.hpp"
#include "match/tilt_weight.hpp"
#include "match/tilt_files.hpp"
#include "match/filters.hpp"
#include "match/resample.hpp"
#include "match/model_density.hpp"
#include "match/map_template.hpp"
#include "match/tight_mask.hpp"
#include "match/tilt_simulation.hpp"
#include "match/exhaustive_scan.hpp"
#include "match/seeded_scan.hpp"
#include "backend/cpu/scan_strategy.hpp"   // the backends' scan strategies: host-safe, both always
#include "backend/cuda/scan_strategy.hpp"  // (a cuda scan still needs <fusor/cuda.cuh>)
#include "match/peaks.hpp"
#include "match/score_histogram.hpp"
#include "match/tophat.hpp"
#include "match/phase_randomize.hpp"
#include "match/mrc.hpp"
