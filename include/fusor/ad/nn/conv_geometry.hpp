#pragma once
// The shape rules of a convolution (PyTorch's torch.nn.functional.conv1d/2d/3d): an input
// (N, C, *in) or unbatched (C, *in), a weight (O, C / groups, *kernel), one to three spatial axes,
// and per spatial axis a stride, a zero padding on both sides (or PyTorch's padding='same') and a
// dilation. Every check is made here, before any work, and names what was expected and given.
//
//   out_i = floor((in_i + 2 pad_i - dilation_i (kernel_i - 1) - 1) / stride_i) + 1
#include <string>

#include "../../core/array.hpp"
#include "../../core/error.hpp"
#include "../../linalg/conv_fwd.hpp"

namespace fusor::ad::nn {

/// How a convolution steps over its input (PyTorch's Conv arguments). stride, padding and dilation
/// hold one value for every spatial axis or one per axis.
struct conv_options {
  extents stride{1};
  /// Zeros added before and after each spatial axis.
  extents padding{0};
  extents dilation{1};
  /// Input and output channels are split into this many groups, each convolved with its own
  /// out_channels / groups filters (groups = in_channels: a depthwise convolution).
  index_t groups = 1;
  /// PyTorch's padding='same': the output has the input's spatial shape (stride 1 only); the
  /// dilated kernel's extent minus one is padded, half before (rounded down) and the rest after.
  /// Replaces `padding`.
  bool same = false;
};

namespace detail {

inline constexpr int max_conv_dims = 3;

/// One convolution's sizes, resolved and checked (plain data: a replayed step carries it).
struct conv_geometry {
  int dims = 0;         // spatial axes
  bool batched = true;  // the input has a batch axis (else N = 1, and the output has none either)
  index_t batch = 0, in_channels = 0, out_channels = 0, groups = 1;
  index_t taps = 1;  // kernel positions, the product of the kernel's extents
  index_t in[max_conv_dims] = {}, out[max_conv_dims] = {}, kernel[max_conv_dims] = {};
  index_t stride[max_conv_dims] = {}, dilation[max_conv_dims] = {}, before[max_conv_dims] = {};
  index_t after[max_conv_dims] = {};  // the padding after each axis (before's, or 'same''s rest)

  index_t in_points() const { return product(in); }
  index_t out_points() const { return product(out); }
  /// Rows of one group's column matrix: its input channels times the taps.
  index_t group_rows() const { return in_channels / groups * taps; }
  /// (N, O, *out), or (O, *out) for an unbatched input
  extents output_shape() const {
    extents s = batched ? extents{batch, out_channels} : extents{out_channels};
    for (int i = 0; i < dims; ++i) s.push_back(out[i]);
    return s;
  }
  /// The column buffer: (C, taps, N, *out), i.e. per group a (C / groups * taps, N * out) matrix.
  extents columns_shape() const {
    extents s{in_channels, taps, batch};
    for (int i = 0; i < dims; ++i) s.push_back(out[i]);
    return s;
  }
  /// The problem in the plain numbers a backend's convolution library takes.
  conv_problem problem() const {
    conv_problem p;
    p.dims = dims;
    p.batch = batch;
    p.in_channels = in_channels;
    p.out_channels = out_channels;
    p.groups = groups;
    for (int i = 0; i < dims; ++i) {
      p.in[i] = in[i];
      p.out[i] = out[i];
      p.kernel[i] = kernel[i];
      p.stride[i] = stride[i];
      p.dilation[i] = dilation[i];
      p.pad_before[i] = before[i];
      p.pad_after[i] = after[i];
    }
    return p;
  }
  /// Tap k's kernel position along each axis (C order over the kernel's extents).
  void tap_position(index_t k, index_t* pos) const {
    for (int i = dims - 1; i >= 0; --i) {
      pos[i] = k % kernel[i];
      k /= kernel[i];
    }
  }

 private:
  index_t product(const index_t* v) const {
    index_t n = 1;
    for (int i = 0; i < dims; ++i) n *= v[i];
    return n;
  }
};

inline std::string spatial_text(const index_t* v, int dims) {
  std::string s;
  for (int i = 0; i < dims; ++i) s += (i ? " x " : "") + std::to_string(v[i]);
  return s;
}

/// An option's value on each of `dims` axes: one value for all, or one per axis.
inline void per_axis(const char* fn, const char* name, const extents& v, int dims, index_t least, index_t* out) {
  if (v.size() != 1 && v.size() != dims)
    throw value_error(std::string("fusor: ") + fn + ": expected " + name + " as one value or " + std::to_string(dims) +
                      " (one per spatial axis), got " + to_string(v));
  for (int i = 0; i < dims; ++i) {
    out[i] = v.size() == 1 ? v[0] : v[i];
    if (out[i] < least)
      throw value_error(std::string("fusor: ") + fn + ": expected " + name + " >= " + std::to_string(least) + ", got " +
                        to_string(v));
  }
}

/// The geometry of fn(x, w, o) for an input of shape x (batched: (N, C, *in); else (C, *in)) and
/// a weight of shape w; `dims` the spatial axes fn takes (0: those of the weight).
inline conv_geometry plan_conv(const char* fn, const extents& x, const extents& w, const conv_options& o, int dims) {
  const int wd = w.size() - 2;
  if (wd < 1 || wd > max_conv_dims || (dims != 0 && wd != dims))
    throw shape_error(std::string("fusor: ") + fn + ": expected a weight of shape (out_channels, in_channels / groups, " +
                      (dims == 1 ? "k" : dims == 2 ? "kh, kw" : dims == 3 ? "kd, kh, kw" : "k1, ..., kd with 1 <= d <= 3") +
                      "), got shape " + to_string(w));
  conv_geometry g;
  g.dims = wd;
  if (x.size() != wd + 2 && x.size() != wd + 1)
    throw shape_error(std::string("fusor: ") + fn + ": expected an input of shape (batch, channels, " + std::to_string(wd) +
                      " spatial axes) or, unbatched, (channels, " + std::to_string(wd) + " spatial axes), got shape " +
                      to_string(x));
  if (o.groups < 1) throw value_error(std::string("fusor: ") + fn + ": expected groups >= 1, got " + std::to_string(o.groups));
  g.batched = x.size() == wd + 2;
  const int c = g.batched ? 1 : 0;  // the channel axis
  g.batch = g.batched ? x[0] : 1;
  g.in_channels = x[c];
  g.out_channels = w[0];
  g.groups = o.groups;
  if (g.out_channels % g.groups != 0)
    throw value_error(std::string("fusor: ") + fn + ": expected out_channels divisible by groups, got " +
                      std::to_string(g.out_channels) + " out channels (axis 0 of the weight " + to_string(w) + ") and " +
                      std::to_string(g.groups) + " groups");
  if (g.in_channels != w[1] * g.groups)
    throw shape_error(std::string("fusor: ") + fn + ": the input has " + std::to_string(g.in_channels) +
                      " channels (axis " + std::to_string(c) + " of shape " + to_string(x) + "), but the weight " + to_string(w) + " with " +
                      std::to_string(g.groups) + " group(s) expects groups x in_channels / groups = " +
                      std::to_string(g.groups) + " x " + std::to_string(w[1]) + " = " + std::to_string(w[1] * g.groups));
  per_axis(fn, "stride", o.stride, wd, 1, g.stride);
  per_axis(fn, "dilation", o.dilation, wd, 1, g.dilation);
  index_t pad[max_conv_dims] = {};
  if (!o.same) per_axis(fn, "padding", o.padding, wd, 0, pad);
  for (int i = 0; i < wd; ++i) {
    g.in[i] = x[c + 1 + i];
    g.kernel[i] = w[2 + i];
    if (g.kernel[i] < 1)
      throw shape_error(std::string("fusor: ") + fn + ": expected a kernel of at least one element per spatial axis, got weight shape " +
                        to_string(w));
    g.taps *= g.kernel[i];
  }
  index_t reach[max_conv_dims] = {}, padded[max_conv_dims] = {};
  for (int i = 0; i < wd; ++i) {
    reach[i] = g.dilation[i] * (g.kernel[i] - 1) + 1;
    if (o.same) {
      if (g.stride[i] != 1)
        throw value_error(std::string("fusor: ") + fn + ": padding 'same' needs stride 1 on every axis (as PyTorch), got stride " +
                          to_string(o.stride));
      g.before[i] = (reach[i] - 1) / 2;
      g.after[i] = reach[i] - 1 - g.before[i];
    } else {
      g.before[i] = g.after[i] = pad[i];
    }
    padded[i] = g.in[i] + g.before[i] + g.after[i];
  }
  for (int i = 0; i < wd; ++i)
    if (padded[i] < reach[i])
      throw shape_error(std::string("fusor: ") + fn + ": the padded input (" + spatial_text(padded, wd) +
                        " on the spatial axes) is smaller than the dilated kernel (" + spatial_text(reach, wd) + ")");
  for (int i = 0; i < wd; ++i) g.out[i] = (padded[i] - reach[i]) / g.stride[i] + 1;
  return g;
}

}  // namespace detail
}  // namespace fusor::ad::nn
