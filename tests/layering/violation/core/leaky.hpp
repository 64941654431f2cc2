#pragma once
// A core header reaching into a backend: check_layers.py must reject this tree.
#include "../backend/cpu/loops.hpp"
