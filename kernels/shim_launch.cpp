#include "kernels/shim_launch.h"

#include "kernels/host_shim.h"
#include "kernels/parity_kernels.cuh"

namespace gpuraid::kern {

void shim_run_parity_kernel(const KBatch& b, uint32_t grid_blocks) {
  shim::launch(dim3(grid_blocks), dim3(kBlockThreads), [&] { parity_batch_kernel(b); });
}

void shim_run_signal_kernel(const KSignal& s) {
  shim::launch(dim3(1), dim3(1), [&] { signal_kernel(s); });
}

}  // namespace gpuraid::kern
