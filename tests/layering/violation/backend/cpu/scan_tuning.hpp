#pragma once
// A backend tuning the scan by including the scan itself, where it may include only the hook
// (match/scan_strategy.hpp): check_layers.py must reject it.
#include "../../match/exhaustive_scan.hpp"
