#pragma once
// Umbrella header: the core, the cpu backend, the host-safe cuda tag, file IO (.npy, .npz, printing),
// linear algebra (CBLAS), FFTs (FFTW), autodiff (fusor::ad), Vector Symbolic Architectures
// (fusor::vsa) and template matching (fusor::match).
#include "base.hpp"
#include "ad.hpp"
#include "vsa.hpp"
#include "match.hpp"
