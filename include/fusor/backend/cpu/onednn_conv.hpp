#pragma once
// conv_library<cpu>: float32 convolutions through oneDNN (Debian: libdnnl-dev, version 2), in
// fusor's builds where CMake found it (FUSOR_HAS_ONEDNN; see linalg/conv_fwd.hpp for the hook).
//
// Why a library and not fusor's im2col GEMMs: oneDNN's direct kernels work on channel-blocked
// layouts (nChw16c) with the kernel taps inside the micro-kernel, so they never write the column
// matrix (9 times the input for a 3 x 3 kernel) and run near the FMA peak. Measured on one Zen 4
// core (bench_learn, batch 32, 32 -> 64 channels, 32 x 32, 3 x 3): the forward pass and both
// adjoints 38 ms with oneDNN (its reorders included; 35 ms without) against 61 ms through im2col
// and OpenBLAS, whose GEMMs alone take 56 ms; the same FLOPs as one square sgemm take 36 ms.
// PyTorch's CPU convolutions are the same library.
//
// fusor's arrays stay NCHW: each call reorders its operands into the layouts the chosen kernels
// want and the result back (a pass over each, small beside the convolution). Primitives (the
// convolution's three passes and their reorders) are made once per problem, thread count and
// thread (a thread_local cache), as cuDNN's algorithm is chosen once per shape. oneDNN's OpenMP
// runtime is the team fusor's loops use; it runs on fusor::num_threads() threads (the current
// context's cap).
//
// oneDNN's C interface (dnnl.h), not its C++ one: nvcc's front end stops with an internal error
// on dnnl.hpp, and a .cu file of a program built with oneDNN must see this definition too (the
// hook's declaration promises it to every translation unit).
#include <cstddef>
#include <cstring>
#include <map>
#include <memory>
#include <new>
#include <string>
#include <type_traits>

#include <omp.h>
#include <oneapi/dnnl/dnnl.h>

#include "../../core/config.hpp"
#include "../../core/error.hpp"
#include "../../linalg/conv_fwd.hpp"
#include "parallel.hpp"

namespace fusor {

namespace detail::onednn {

inline void check(dnnl_status_t status, const char* what) {
  if (status != dnnl_success)
    throw backend_error(std::string("fusor: oneDNN's ") + what + " failed (dnnl_status_t " + std::to_string(int(status)) + ")");
}

struct destroy_primitive_desc {
  void operator()(dnnl_primitive_desc_t p) const { dnnl_primitive_desc_destroy(p); }
};
struct destroy_primitive {
  void operator()(dnnl_primitive_t p) const { dnnl_primitive_destroy(p); }
};
struct destroy_memory {
  void operator()(dnnl_memory_t p) const { dnnl_memory_destroy(p); }
};
using primitive_desc = std::unique_ptr<std::remove_pointer_t<dnnl_primitive_desc_t>, destroy_primitive_desc>;
using primitive = std::unique_ptr<std::remove_pointer_t<dnnl_primitive_t>, destroy_primitive>;
using memory = std::unique_ptr<std::remove_pointer_t<dnnl_memory_t>, destroy_memory>;

/// A buffer that only grows (64-byte aligned), reused by every call on its thread: a reordered
/// operand lives only during one call, so one buffer per role serves every problem, and its pages
/// are touched once, not at each call (8 MB of fresh pages cost about a millisecond).
class scratch {
 public:
  void* get(std::size_t bytes) {
    if (bytes > size_) {
      data_.reset(static_cast<std::byte*>(::operator new(bytes, std::align_val_t(64))));
      size_ = bytes;
    }
    return data_.get();
  }

 private:
  struct release {
    void operator()(std::byte* p) const { ::operator delete(p, std::align_val_t(64)); }
  };
  std::unique_ptr<std::byte[], release> data_;
  std::size_t size_ = 0;
};

/// The operands a call reorders, each with its own buffer (the output's adjoint keeps its
/// reordered copy for both backward passes).
enum role : int { input_role, weight_role, output_role, weight_adjoint_role, roles };

/// This thread's engine and stream.
struct runtime {
  dnnl_engine_t engine = nullptr;
  dnnl_stream_t stream = nullptr;
  runtime() {
    check(dnnl_engine_create(&engine, dnnl_cpu, 0), "engine");
    check(dnnl_stream_create(&stream, engine, dnnl_stream_default_flags), "stream");
  }
  ~runtime() {
    dnnl_stream_destroy(stream);
    dnnl_engine_destroy(engine);
  }
  runtime(const runtime&) = delete;
  runtime& operator=(const runtime&) = delete;
};

inline void execute(const dnnl_primitive_t p, dnnl_stream_t s, std::initializer_list<dnnl_exec_arg_t> args) {
  check(dnnl_primitive_execute(p, s, int(args.size()), args.begin()), "execution");
}

/// One operand of a pass: fusor's layout (plain), the kernel's, and the reorder between them
/// (plain to kernel for an input, back for an output; none where they agree).
struct port {
  memory user, inner;  // in fusor's layout (data set per call); in the kernel's, on a role's buffer
  dnnl_memory_desc_t kernel{};
  std::size_t bytes = 0;
  primitive reorder;

  port(const dnnl_memory_desc_t& plain, const dnnl_memory_desc_t& want, bool input, dnnl_engine_t engine) : kernel(want) {
    dnnl_memory_t m = nullptr;
    check(dnnl_memory_create(&m, &plain, engine, DNNL_MEMORY_NONE), "memory");
    user.reset(m);
    if (dnnl_memory_desc_equal(&plain, &want)) return;
    check(dnnl_memory_create(&m, &want, engine, DNNL_MEMORY_NONE), "memory");
    inner.reset(m);
    bytes = dnnl_memory_desc_get_size(&want);
    dnnl_primitive_desc_t rpd = nullptr;
    check(input ? dnnl_reorder_primitive_desc_create(&rpd, &plain, engine, &want, engine, nullptr)
                : dnnl_reorder_primitive_desc_create(&rpd, &want, engine, &plain, engine, nullptr),
          "reorder");
    const primitive_desc owned(rpd);
    dnnl_primitive_t r = nullptr;
    check(dnnl_primitive_create(&r, rpd), "reorder");
    reorder.reset(r);
  }

  /// The input `data` in the kernel's layout: itself, or reordered into `buffer`.
  dnnl_memory_t in(const void* data, scratch& buffer, runtime& rt) {
    check(dnnl_memory_set_data_handle(user.get(), const_cast<void*>(data)), "memory");
    if (!reorder) return user.get();
    check(dnnl_memory_set_data_handle(inner.get(), buffer.get(bytes)), "memory");
    execute(reorder.get(), rt.stream, {{DNNL_ARG_FROM, user.get()}, {DNNL_ARG_TO, inner.get()}});
    return inner.get();
  }
  /// Where the kernel writes the output `data`: itself, or `buffer`, copied back by `finish`.
  dnnl_memory_t out(void* data, scratch& buffer) {
    check(dnnl_memory_set_data_handle(user.get(), data), "memory");
    if (!reorder) return user.get();
    check(dnnl_memory_set_data_handle(inner.get(), buffer.get(bytes)), "memory");
    return inner.get();
  }
  void finish(runtime& rt) {
    if (reorder) execute(reorder.get(), rt.stream, {{DNNL_ARG_FROM, inner.get()}, {DNNL_ARG_TO, user.get()}});
  }
};

/// One pass (forward, input adjoint or weight adjoint): its primitive and its three operands in
/// the order it reads and writes them (forward: input, weight -> output; input adjoint: output
/// adjoint, weight -> input adjoint; weight adjoint: output adjoint, input -> weight adjoint).
struct pass {
  primitive_desc pd;
  primitive kernel;
  std::unique_ptr<port> a, b, c;
};

/// The problem's memory descriptors in fusor's layouts (C order) or left to the kernels.
struct descriptors {
  dnnl_memory_desc_t input{}, weight{}, output{};
};
inline descriptors describe(const conv_problem& p, bool plain) {
  dnnl_dims_t in{p.batch, p.in_channels}, out{p.batch, p.out_channels}, w{};
  const bool grouped = p.groups > 1;
  int wn = 0;
  if (grouped) w[wn++] = p.groups;
  w[wn++] = p.out_channels / p.groups;
  w[wn++] = p.in_channels / p.groups;
  for (int i = 0; i < p.dims; ++i) {
    in[2 + i] = p.in[i];
    out[2 + i] = p.out[i];
    w[wn++] = p.kernel[i];
  }
  const dnnl_format_tag_t data = !plain ? dnnl_format_tag_any : p.dims == 1 ? dnnl_ncw : p.dims == 2 ? dnnl_nchw : dnnl_ncdhw;
  const dnnl_format_tag_t weight = !plain ? dnnl_format_tag_any
                                   : grouped ? (p.dims == 1 ? dnnl_goiw : p.dims == 2 ? dnnl_goihw : dnnl_goidhw)
                                             : (p.dims == 1 ? dnnl_oiw : p.dims == 2 ? dnnl_oihw : dnnl_oidhw);
  descriptors d;
  check(dnnl_memory_desc_init_by_tag(&d.input, p.dims + 2, in, dnnl_f32, data), "memory descriptor");
  check(dnnl_memory_desc_init_by_tag(&d.output, p.dims + 2, out, dnnl_f32, data), "memory descriptor");
  check(dnnl_memory_desc_init_by_tag(&d.weight, wn, w, dnnl_f32, weight), "memory descriptor");
  return d;
}

/// One problem's three passes.
struct entry {
  pass forward, input_adjoint, weight_adjoint;
};

/// This thread's runtime, primitives and buffers.
struct state {
  runtime rt;
  std::map<std::string, std::unique_ptr<entry>> entries;  // by problem and thread count
  scratch buffers[roles];
};
inline state& this_thread() {
  thread_local state s;
  return s;
}

/// oneDNN's OpenMP runtime runs on omp_get_max_threads() threads: fusor's count while a scope
/// lives (and primitives are made for the count current when they are made: it is in the key).
class threads_scope {
 public:
  threads_scope() : saved_(omp_get_max_threads()) { omp_set_num_threads(fusor::num_threads()); }
  ~threads_scope() { omp_set_num_threads(saved_); }
  threads_scope(const threads_scope&) = delete;
  threads_scope& operator=(const threads_scope&) = delete;

 private:
  int saved_;
};

inline std::string key_of(const conv_problem& p) {
  std::string k(sizeof p + sizeof(int), '\0');
  std::memcpy(k.data(), &p, sizeof p);
  const int threads = omp_get_max_threads();
  std::memcpy(k.data() + sizeof p, &threads, sizeof threads);
  return k;
}

/// A pass made from its operation descriptor (the forward pass's primitive descriptor as the hint
/// of the two backward passes), or false where oneDNN has no kernel for it.
inline bool make_pass(pass& out, const dnnl_convolution_desc_t& op, const_dnnl_primitive_desc_t hint, state& s) {
  dnnl_primitive_desc_t pd = nullptr;
  if (dnnl_primitive_desc_create(&pd, &op, nullptr, s.rt.engine, hint) != dnnl_success) return false;
  out.pd.reset(pd);
  dnnl_primitive_t k = nullptr;
  if (dnnl_primitive_create(&k, pd) != dnnl_success) return false;
  out.kernel.reset(k);
  return true;
}
inline std::unique_ptr<port> make_port(const pass& p, const dnnl_memory_desc_t& plain, dnnl_query_t what, bool input, state& s) {
  return std::make_unique<port>(plain, *dnnl_primitive_desc_query_md(p.pd.get(), what, 0), input, s.rt.engine);
}

/// The problem's passes (made on first use), or null where oneDNN has none for it.
inline entry* entry_of(const conv_problem& p) {
  state& s = this_thread();
  const std::string key = key_of(p);
  if (auto it = s.entries.find(key); it != s.entries.end()) return it->second.get();
  dnnl_dims_t strides{}, dilation{}, before{}, after{};
  for (int i = 0; i < p.dims; ++i) {
    strides[i] = p.stride[i];
    dilation[i] = p.dilation[i] - 1;  // oneDNN counts the gaps between taps
    before[i] = p.pad_before[i];
    after[i] = p.pad_after[i];
  }
  const descriptors any = describe(p, false), plain = describe(p, true);
  const dnnl_alg_kind_t alg = dnnl_convolution_direct;
  auto e = std::make_unique<entry>();
  dnnl_convolution_desc_t fd{}, dd{}, wd{};
  bool ok = dnnl_dilated_convolution_forward_desc_init(&fd, dnnl_forward_training, alg, &any.input, &any.weight, nullptr,
                                                       &any.output, strides, dilation, before, after) == dnnl_success &&
            dnnl_dilated_convolution_backward_data_desc_init(&dd, alg, &any.input, &any.weight, &any.output, strides, dilation,
                                                             before, after) == dnnl_success &&
            dnnl_dilated_convolution_backward_weights_desc_init(&wd, alg, &any.input, &any.weight, nullptr, &any.output, strides,
                                                                dilation, before, after) == dnnl_success;
  ok = ok && make_pass(e->forward, fd, nullptr, s) && make_pass(e->input_adjoint, dd, e->forward.pd.get(), s) &&
       make_pass(e->weight_adjoint, wd, e->forward.pd.get(), s);
  if (ok) {
    pass& f = e->forward;
    f.a = make_port(f, plain.input, dnnl_query_src_md, true, s);
    f.b = make_port(f, plain.weight, dnnl_query_weights_md, true, s);
    f.c = make_port(f, plain.output, dnnl_query_dst_md, false, s);
    pass& d = e->input_adjoint;
    d.a = make_port(d, plain.output, dnnl_query_diff_dst_md, true, s);
    d.b = make_port(d, plain.weight, dnnl_query_weights_md, true, s);
    d.c = make_port(d, plain.input, dnnl_query_diff_src_md, false, s);
    pass& w = e->weight_adjoint;
    w.a = make_port(w, plain.output, dnnl_query_diff_dst_md, true, s);
    w.b = make_port(w, plain.input, dnnl_query_src_md, true, s);
    w.c = make_port(w, plain.weight, dnnl_query_diff_weights_md, false, s);
  } else {
    e = nullptr;  // no kernel here (remembered, so the next call does not try again)
  }
  // a bounded cache: a program that convolves ever new shapes does not keep every one's primitives
  if (s.entries.size() >= 256) s.entries.clear();
  return s.entries.emplace(key, std::move(e)).first->second.get();
}

}  // namespace detail::onednn

template <>
struct conv_library<cpu> {
  static constexpr const char* name = "oneDNN";
  template <class T>
  static constexpr bool takes = std::is_same_v<T, float>;

  static bool supports(const conv_problem& p) {
    if (p.dims < 1 || p.dims > 3 || p.batch <= 0 || p.in_channels <= 0 || p.out_channels <= 0) return false;
    for (int i = 0; i < p.dims; ++i)
      if (p.in[i] <= 0 || p.out[i] <= 0) return false;
    const detail::onednn::threads_scope threads;
    return detail::onednn::entry_of(p) != nullptr;
  }

  static void forward(const conv_problem& p, const float* x, const float* w, float* y) {
    using namespace detail::onednn;
    const threads_scope threads;
    state& s = this_thread();
    pass& f = entry_of(p)->forward;
    dnnl_memory_t xk = f.a->in(x, s.buffers[input_role], s.rt), wk = f.b->in(w, s.buffers[weight_role], s.rt),
                  yk = f.c->out(y, s.buffers[output_role]);
    execute(f.kernel.get(), s.rt.stream, {{DNNL_ARG_SRC, xk}, {DNNL_ARG_WEIGHTS, wk}, {DNNL_ARG_DST, yk}});
    f.c->finish(s.rt);
    check(dnnl_stream_wait(s.rt.stream), "stream");
  }

  static void backward(const conv_problem& p, const float* x, const float* w, const float* dy, float* dx, float* dw) {
    using namespace detail::onednn;
    const threads_scope threads;
    state& s = this_thread();
    entry& e = *entry_of(p);
    dnnl_memory_t dyk = nullptr;  // dy in the input adjoint's layout
    if (dx) {
      pass& d = e.input_adjoint;
      dyk = d.a->in(dy, s.buffers[output_role], s.rt);
      dnnl_memory_t wk = d.b->in(w, s.buffers[weight_role], s.rt), dxk = d.c->out(dx, s.buffers[input_role]);
      execute(d.kernel.get(), s.rt.stream, {{DNNL_ARG_DIFF_DST, dyk}, {DNNL_ARG_WEIGHTS, wk}, {DNNL_ARG_DIFF_SRC, dxk}});
      d.c->finish(s.rt);
    }
    if (dw) {
      pass& g = e.weight_adjoint;
      // the reordered dy again where both passes want one layout, else dy reordered anew
      dnnl_memory_t dyw = nullptr;
      if (dyk && g.a->reorder && e.input_adjoint.a->reorder && dnnl_memory_desc_equal(&g.a->kernel, &e.input_adjoint.a->kernel)) {
        check(dnnl_memory_set_data_handle(g.a->inner.get(), s.buffers[output_role].get(g.a->bytes)), "memory");
        dyw = g.a->inner.get();
      } else {
        dyw = g.a->in(dy, s.buffers[output_role], s.rt);
      }
      dnnl_memory_t xk = g.b->in(x, s.buffers[input_role], s.rt), dwk = g.c->out(dw, s.buffers[weight_adjoint_role]);
      execute(g.kernel.get(), s.rt.stream, {{DNNL_ARG_DIFF_DST, dyw}, {DNNL_ARG_SRC, xk}, {DNNL_ARG_DIFF_WEIGHTS, dwk}});
      g.c->finish(s.rt);
    }
    check(dnnl_stream_wait(s.rt.stream), "stream");
  }
};

}  // namespace fusor
