// Prometheus series of the NVMe-oF exports (issue 16): which VD is served
// under which NQN where, and the hosts connected to it now (as vd show
// lists them: from nvmet's debugfs, or the port's TCP peers).
#pragma once
#include <vector>

#include "daemon/prom_text.h"
#include "gpuraid/v1/gpuraid.pb.h"

namespace gpuraid::daemon {

// gpuraid_vd_nvmf_info, gpuraid_vd_nvmf_connected_hosts and
// gpuraid_vd_nvmf_host_state for every volume exported over NVMe-oF.
void nvmf_metrics(PromText& p, const std::vector<v1::Volume>& vols);

}  // namespace gpuraid::daemon
