#pragma once
// The non-elementwise kernels behind indexing, sorting and scans (gather, scatter, sort rows,
// top-k, unique, scans, histograms): declared here, specialised per backend
// (backend/host/algorithms.hpp for cpu; the cuda backend adds its own). The front ends in core/ check
// arguments, allocate and lay data out (the axis of interest last and contiguous), then call one
// of these on plain pointers.
namespace fusor {
template <class B>
struct algorithms;
}  // namespace fusor
