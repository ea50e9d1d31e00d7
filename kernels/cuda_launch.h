// Launching the parity kernels on a CUDA stream. For .cu files only (needs
// cuda_runtime.h); used by the CUDA backend, the GPU test and the benchmark.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/parity_desc.h"

namespace gpuraid::kern {

// One launch of grid_blocks blocks over the batch b (device addresses).
cudaError_t cuda_launch_parity_kernel(const KBatch& b, uint32_t grid_blocks, cudaStream_t s);
// A batch's last launch: results to host memory, then the completion marker.
cudaError_t cuda_launch_signal_kernel(const KSignal& sig, cudaStream_t s);
// Blocks of the parity kernel the device holds resident at once (0 on error).
uint32_t cuda_parity_max_blocks(int device, cudaError_t* err);

}  // namespace gpuraid::kern
