#pragma once
// A cuda header reaching into the cpu backend for a host round trip, and into the FFT front end:
// check_layers.py must reject both (and read .cuh files to see them).
#include "../cpu/loops.hpp"
#include "../../fft.hpp"
