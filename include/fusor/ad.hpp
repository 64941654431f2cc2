#pragma once
// Automatic differentiation (namespace fusor::ad): dual numbers as an element type, forward-mode
// transforms (jvp, derivative, jacfwd), central differences and gradcheck; reverse mode (tape,
// variables, grad, value_and_grad, vjp, jacrev, hessian, hvp; reductions, softmax, views, matmul,
// joins, gathers, custom_vjp); optimizers over parameter trees, learning-rate schedules and
// gradient clipping and loss scaling (ad/optim); mixed precision (ad/autocast.hpp); layers, losses, initialisers and sequential models (ad/nn).
// Included by fusor.hpp.
#include "base.hpp"  // the engine and the cpu backend: this header alone is a whole include
#include "ad/dual.hpp"
#include "ad/dual_planes.hpp"
#include "ad/forward.hpp"
#include "ad/check.hpp"
#include "ad/tape.hpp"
#include "ad/var.hpp"
#include "ad/adjoint.hpp"
#include "ad/record.hpp"
#include "ad/ops.hpp"
#include "ad/custom_vjp.hpp"
#include "ad/views.hpp"
#include "ad/reductions.hpp"
#include "ad/softmax.hpp"
#include "ad/products.hpp"
#include "ad/join.hpp"
#include "ad/gather.hpp"
#include "ad/einsum.hpp"
#include "ad/convolve.hpp"
#include "ad/fft.hpp"
#include "ad/params.hpp"
#include "ad/transforms.hpp"
#include "ad/checkpoint.hpp"
#include "ad/compile.hpp"
#include "ad/autocast.hpp"
#include "ad/optim/optimizers.hpp"
#include "ad/optim/clip.hpp"
#include "ad/optim/grad_scaler.hpp"
#include "ad/nn.hpp"
