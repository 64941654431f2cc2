#pragma once
// conv_library<B>: a backend's own convolution kernels, which autodiff's convolutions
// (ad/nn/conv.hpp) call in place of their im2col GEMMs where the backend has them: oneDNN on the
// cpu (backend/cpu/onednn_conv.hpp, when fusor is built with it). Declared only here, so the
// layer above never names the library, and a backend without one keeps the GEMMs.
//
// A specialisation provides, for the element types it takes (`takes<T>`), on contiguous memory
// (input (N, C, *in), weight (O, C / groups, *kernel), output (N, O, *out), C order):
//
//   static bool supports(const conv_problem&);   // the library has kernels for this problem
//   static void forward(const conv_problem&, const T* x, const T* w, T* y);      // y overwritten
//   static void backward(const conv_problem&, const T* x, const T* w, const T* dy,
//                        T* dx, T* dw);   // dx = the input's adjoint, dw = the weight's, each
//                                         // overwritten, either may be null (not wanted)
//
// Whether a backend has one is a property of the build, stated here (has_conv_library), not of
// which headers a translation unit happened to include: a conv on that backend then needs the
// specialisation's definition (fusor/base.hpp includes it) and fails to compile without it,
// instead of two translation units silently computing it two ways.
#include <type_traits>

#include "../core/backend.hpp"
#include "../core/config.hpp"

namespace fusor {

/// One convolution in plain numbers (PyTorch's conventions, 1 to 3 spatial axes): the padding
/// before and after each axis may differ (padding='same' with an even kernel).
struct conv_problem {
  int dims = 0;
  index_t batch = 0, in_channels = 0, out_channels = 0, groups = 1;
  index_t in[3] = {}, out[3] = {}, kernel[3] = {}, stride[3] = {}, dilation[3] = {}, pad_before[3] = {}, pad_after[3] = {};
};

template <class B>
struct conv_library;

/// Whether backend B has a convolution library in this build.
template <class B>
struct has_conv_library : std::false_type {};

#if defined(FUSOR_HAS_ONEDNN)
template <>
struct conv_library<cpu>;  // oneDNN: backend/cpu/onednn_conv.hpp
template <>
struct has_conv_library<cpu> : std::true_type {};
#endif

/// Whether B's convolution library takes elements of type T (false where B has none).
template <class T, class B>
constexpr bool conv_library_takes() {
  if constexpr (has_conv_library<B>::value) return conv_library<B>::template takes<T>;
  else return false;
}

}  // namespace fusor
