#pragma once
// Neural-network building blocks on top of reverse mode (namespace fusor::ad::nn): activation
// function objects, losses (with the fused softmax cross-entropy), the functional forms of linear,
// dropout, layer_norm, the convolutions and attention, initialisers, layers, a sequential model with named parameters, and
// training-loop helpers (shuffled mini-batches, accuracy, progress lines, early stopping), and
// checkpoints (parameters and optimizer state in an .npz archive).
// Included by ad.hpp.
#include "nn/activations.hpp"
#include "nn/attention.hpp"
#include "nn/batch_norm.hpp"
#include "nn/checkpoint.hpp"
#include "nn/checkpointed.hpp"
#include "nn/conv.hpp"
#include "nn/data_parallel.hpp"
#include "nn/conv_transpose.hpp"
#include "nn/flatten.hpp"
#include "nn/normalization.hpp"
#include "nn/pool.hpp"
#include "nn/resample.hpp"
#include "nn/functional.hpp"
#include "nn/init.hpp"
#include "nn/layers.hpp"
#include "nn/losses.hpp"
#include "nn/sequential.hpp"
#include "nn/training.hpp"
