// NVMe over Fabrics through libnvme: the host identity gpuraid connects
// with, discovery, connect and disconnect. Each call builds its own
// libnvme tree and frees it; nothing is cached.
#pragma once
#include <string>
#include <vector>

#include "daemon/nvme_sysfs.h"

namespace gpuraid::daemon {

constexpr const char* kDiscoveryNqn = "nqn.2014-08.org.nvmexpress.discovery";

// Host NQN and host ID: read from DIR/hostnqn and DIR/hostid, generated
// (nqn.2014-08.org.nvmexpress:uuid:<hostid>) and saved when absent.
struct HostIdentity {
  std::string hostnqn, hostid;
};
bool load_host_identity(const std::string& dir, HostIdentity* out, std::string* err);

struct DiscoveryEntry {
  std::string subtype;  // nvme subsystem, discovery subsystem, ...
  std::string transport, traddr, trsvcid, subnqn;
  uint32_t portid = 0;
};

struct ConnectTimeouts {
  int ctrl_loss_tmo_s = 600;   // the kernel's default
  int reconnect_delay_s = 10;
  int fast_io_fail_tmo_s = 5;  // I/O fails after this while reconnecting (the member goes missing)
};

// The discovery log of the target at `at` (its nqn is ignored).
bool fabrics_discover(const HostIdentity& host, const FabricsPath& at, std::vector<DiscoveryEntry>* out,
                      std::string* err);
// Connects the I/O controller of `p`; *ctrl gets its name (nvme5).
bool fabrics_connect(const HostIdentity& host, const FabricsPath& p, const ConnectTimeouts& t, std::string* ctrl,
                     std::string* err);
// Disconnects every controller that serves `p`; *names lists them.
bool fabrics_disconnect(const FabricsPath& p, std::vector<std::string>* names, std::string* err);

}  // namespace gpuraid::daemon
