// Identity of NVMe namespaces on this host, through libnvme (Identify
// Controller / Identify Namespace on the namespace's block device) and
// sysfs (which controller, which transport). Needs CAP_SYS_ADMIN.
#pragma once
#include <string>
#include <vector>

#include "nvme/identity.h"

namespace gpuraid::nvme {

enum class Probe { Ok, NotNvme, Error };

// The namespace behind a block device path (/dev/nvmeXnY or a link to it).
// NotNvme: the path is not an NVMe namespace block device (a file, another
// block device, a partition). Error: it is one, but identify failed (*err).
Probe probe(const std::string& path, Identity* out, std::string* err);

// The sysfs name (nvme0n1) of a block device path; "" when not a block device.
std::string block_name(const std::string& path);
// Whether a block device name is an NVMe namespace (nvmeXnY, not a
// partition nor a hidden per-path device nvmeXcYnZ).
bool is_namespace_name(const std::string& name);

struct ScanResult {
  std::vector<Identity> namespaces;  // in name order (nvme0n1, nvme0n2, nvme1n1, ...)
  std::vector<std::string> errors;   // namespaces that could not be identified
};
// Every NVMe namespace block device on the host.
ScanResult scan();

}  // namespace gpuraid::nvme
