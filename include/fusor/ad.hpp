#pragma once
// Automatic differentiation (namespace fusor::ad): dual numbers as an element type, forward-mode
// transforms (jvp, derivative, jacfwd), central differences and gradcheck. Included by fusor.hpp.
#include "ad/dual.hpp"
#include "ad/dual_packet.hpp"
#include "ad/forward.hpp"
#include "ad/check.hpp"
