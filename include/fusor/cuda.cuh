#pragma once
// Umbrella for CUDA translation units (.cu, compiled by nvcc): everything <fusor/fusor.hpp> has,
// plus the cuda backend's memory, streams and one-kernel executor. Host-compiled code that only
// creates, moves and transfers cuda arrays needs <fusor/backend/cuda/memory.hpp> instead.
#include "fusor.hpp"
#include "backend/cuda/error.hpp"
#include "backend/cuda/memory.hpp"
#include "backend/cuda/executor.cuh"
#include "backend/cuda/fft.cuh"
#include "backend/cuda/blas.cuh"
#include "backend/cuda/solver.cuh"
#include "backend/cuda/algorithms.cuh"
