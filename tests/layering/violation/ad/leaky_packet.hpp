#pragma once
// An autodiff header naming the cpu backend for its packets: check_layers.py must reject this.
#include "../backend/cpu/loops.hpp"
