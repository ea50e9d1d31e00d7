// nvme::Identity -> the API's NvmeIdentity.
#pragma once
#include "gpuraid/v1/gpuraid.pb.h"
#include "nvme/identity.h"

namespace gpuraid::daemon {

void nvme_to_api(const nvme::Identity& id, gpuraid::v1::NvmeIdentity* out);

}  // namespace gpuraid::daemon
