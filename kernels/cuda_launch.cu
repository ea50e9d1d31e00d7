// The only translation unit that compiles the parity kernels for the GPU.
#include "kernels/cuda_launch.h"
#include "kernels/parity_kernels.cuh"

namespace gpuraid::kern {

cudaError_t cuda_launch_parity_kernel(const KBatch& b, uint32_t grid_blocks, cudaStream_t s) {
  // cudaLaunchKernel returns this launch's error, not a stale one.
  void* args[] = {const_cast<KBatch*>(&b)};
  return cudaLaunchKernel(reinterpret_cast<const void*>(&parity_batch_kernel), dim3(grid_blocks),
                          dim3(kBlockThreads), args, 0, s);
}

cudaError_t cuda_launch_signal_kernel(const KSignal& sig, cudaStream_t s) {
  void* args[] = {const_cast<KSignal*>(&sig)};
  return cudaLaunchKernel(reinterpret_cast<const void*>(&signal_kernel), dim3(1), dim3(1), args, 0, s);
}

uint32_t cuda_parity_max_blocks(int device, cudaError_t* err) {
  int sms = 0, per_sm = 0;
  cudaError_t e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
  if (e == cudaSuccess)
    e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, parity_batch_kernel,
                                                      int(kBlockThreads), 0);
  if (err) *err = e;
  if (e != cudaSuccess) return 0;
  return uint32_t(sms) * uint32_t(per_sm > 0 ? per_sm : 1);
}

}  // namespace gpuraid::kern
