#include "kernels/shim_launch.h"

#include "kernels/host_shim.h"
#include "kernels/parity_kernels.cuh"

namespace gpuraid::kern {

void shim_run_parity_kernel(const KBatch& b, uint32_t grid_blocks) {
  shim::launch(dim3(grid_blocks), dim3(kBlockThreads), [&] { parity_batch_kernel(b); });
}

}  // namespace gpuraid::kern
