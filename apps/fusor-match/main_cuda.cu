// fusor-match-cuda: the same program as fusor-match (main.cpp), its scans on the cuda backend.
// Under mpirun each rank takes one GPU of its node (its node-local rank modulo the GPUs it sees).
#define FUSOR_MATCH_CUDA 1
#include <fusor/cuda.cuh>

#include "main.cpp"
