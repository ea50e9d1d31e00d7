// What the machine offers: kernel features (io_uring, ublk, nbd) and GPUs
// (from the NVIDIA driver's /proc files, memory from nvidia-smi when it
// exists). Read once per GetInfo; nothing here is on the data path.
#pragma once
#include "gpuraid/v1/gpuraid.pb.h"

namespace gpuraid::daemon {

void kernel_features(gpuraid::v1::KernelFeatures* out);
void gpu_info(gpuraid::v1::DaemonInfo* out);

}  // namespace gpuraid::daemon
