// Runs the parity kernels on the CPU through the host shim (same source and
// grid as on a GPU). Kept in its own translation unit: it is the only one
// compiled with host_shim.h.
#pragma once
#include <cstdint>

#include "kernels/parity_desc.h"

namespace gpuraid::kern {

void shim_run_parity_kernel(const KBatch& b, uint32_t grid_blocks);
void shim_run_signal_kernel(const KSignal& s);

}  // namespace gpuraid::kern
