// At daemon start, before the drives are opened: the NVMe-oF paths that
// `pd connect` recorded and no controller serves any more (the host
// rebooted, someone ran nvme disconnect) are connected again, with the
// recorded ctrl-loss-tmo (other timeouts: pd connect's defaults), so their
// namespaces are found by identity like any NVMe drive. nvme-tcp tries one
// SYN retry, so an unreachable target costs seconds, not minutes. A path
// that cannot be connected is only reported: its drives show missing,
// saying why. (Defined in control_fabrics.cpp.)
#pragma once
#include <map>
#include <string>
#include <vector>

#include "daemon/fabrics.h"
#include "gpuraid/v1/state.pb.h"

namespace gpuraid::daemon {

struct FabricsReconnect {
  std::map<std::string, std::string> failed;  // NQN -> why (for its drives' notes)
  std::vector<std::string> reconnected;       // "NQN at ADDR as nvmeN: ..." (for the event)
};
FabricsReconnect reconnect_fabrics(const std::vector<gpuraid::state::v1::FabricsRecord>& paths,
                                   const HostIdentity& host);

}  // namespace gpuraid::daemon
