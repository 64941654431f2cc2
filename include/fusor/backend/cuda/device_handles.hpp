#pragma once
// One handle of a CUDA library (cuBLAS, cuSOLVER) per thread and device. A handle belongs to the
// device current when it was created and must not be used by two threads at once, so each thread
// keeps its own per device, created on first use and destroyed when the thread ends. The library
// binds it to the current stream before each call.
#include <string>

#include "../../core/error.hpp"
#include "memory.hpp"

namespace fusor::detail {

inline constexpr int max_handle_devices = 64;

template <class Handle, class Destroy>
struct device_handle_table {
  Handle h[max_handle_devices] = {};
  ~device_handle_table() {
    for (auto x : h)
      if (x) Destroy{}(x);
  }
};

/// This thread's handle of `library` for the current device: create(&h) makes one on first use,
/// Destroy{}(h) releases it at thread exit.
template <class Handle, class Destroy, class Create>
Handle device_handle(const char* library, Create create) {
  thread_local device_handle_table<Handle, Destroy> table;
  const int dev = cuda_device();
  if (dev >= max_handle_devices)
    throw backend_error(std::string("fusor: ") + library + " handles are kept for devices 0.." +
                        std::to_string(max_handle_devices - 1) + ", got device " + std::to_string(dev));
  if (!table.h[dev]) create(&table.h[dev]);
  return table.h[dev];
}

}  // namespace fusor::detail
