#pragma once
// Vector Symbolic Architectures (namespace fusor::vsa): models as types (MAP-B, MAP-I, MAP-C,
// BSC, BSDC, BSDC-CDT, BSDC-SEG, FHRR, HRR, VTB, MBAT, GHRR, MCR, CGR, BSBC), batched operations on rows (random, bind, unbind, bundle, permute,
// similarity, ...), item memories, and encoders of scalars (level, thermometer, circular codebooks;
// fractional power encoding, residue numbers), structures (n-grams, records, graphs, trees,
// automata), a centroid classifier and a sparse distributed memory, written once
// for every backend.
#include "base.hpp"  // the engine and the cpu backend: this header alone is a whole include
#include "vsa/model.hpp"
#include "vsa/kernels.hpp"
#include "vsa/dense.hpp"
#include "vsa/map.hpp"
#include "vsa/packed.hpp"
#include "vsa/bsc.hpp"
#include "vsa/sparse_kernels.hpp"
#include "vsa/fhrr.hpp"
#include "vsa/hrr.hpp"
#include "vsa/vtb.hpp"
#include "vsa/mbat.hpp"
#include "vsa/ghrr_kernels.hpp"
#include "vsa/ghrr.hpp"
#include "vsa/modular_kernels.hpp"
#include "vsa/modular.hpp"
#include "vsa/operations.hpp"
#include "vsa/bsdc.hpp"
#include "vsa/item_memory.hpp"
#include "vsa/associative.hpp"
#include "vsa/resonator.hpp"
#include "vsa/encode/positions.hpp"
#include "vsa/encode/levels.hpp"
#include "vsa/encode/scalar.hpp"
#include "vsa/encode/fractional_power.hpp"
#include "vsa/encode/structures.hpp"
#include "vsa/encode/graph.hpp"
#include "vsa/encode/tree.hpp"
#include "vsa/encode/automaton.hpp"
#include "vsa/encode/projection.hpp"
#include "vsa/encode/residue.hpp"
#include "vsa/learn/centroid.hpp"
#include "vsa/learn/sdm.hpp"
