// The parity kernels run on the CPU through the host shim, behind the same
// batching backend, descriptors and launch geometry as the CUDA backend.
// Always built: it is how CI proves the kernel source without a GPU.
#pragma once
#include <cstdint>
#include <memory>

#include "engine/parity/parity_backend.h"
#include "kernels/batching_backend.h"

namespace gpuraid {

struct KernelCpuOptions {
  kern::BatchOptions batch;
  // Grid cap, standing in for a device's resident blocks: small values make
  // every block walk many tiles and jobs, as on a loaded GPU.
  uint32_t max_blocks = 64;
  // Run batches as the CUDA staged path does (buffers copied into an arena
  // and back) instead of in place.
  bool staged = false;
  // Fault injection for tests (launch count, 0-based; -1 never): the launch
  // fails before anything runs, or fails after the kernel ran but before
  // the batch's Update outputs were committed.
  int fail_launch_at = -1;
  int fail_after_kernel_at = -1;
};

std::unique_ptr<ParityBackend> make_kernel_cpu_backend();
std::unique_ptr<kern::BatchingBackend> make_kernel_cpu_backend(const KernelCpuOptions& opts);

}  // namespace gpuraid
