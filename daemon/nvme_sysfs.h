// What the kernel says about NVMe controllers and subsystems, read from
// sysfs (/sys/class/nvme, /sys/class/nvme-subsystem): which controllers
// serve an NVMe-oF path, in which state, and the block devices of a
// subsystem's namespaces. Reads only; no libnvme (safe on reactor threads:
// a few small file reads).
#pragma once
#include <string>
#include <vector>

namespace gpuraid::daemon {

// One NVMe-oF path as gpuraid connected it.
struct FabricsPath {
  std::string transport, traddr, trsvcid, nqn;
};

struct NvmeCtrl {
  std::string name;        // nvme3
  std::string state;       // live, connecting, resetting, deleting, ...
  std::string transport;   // tcp, rdma, pcie, loop
  std::string address;     // traddr=127.0.0.1,trsvcid=4420[,...]
  std::string subsysnqn;
};

// What the path looks like now.
enum class PathState {
  Live,          // a controller of the path is live
  Reconnecting,  // its controllers are connecting or resetting: the path may come back
  Gone,          // no controller left (ctrl-loss-tmo expired, or disconnected)
};
const char* path_state_name(PathState s);

std::vector<NvmeCtrl> nvme_controllers(const std::string& sys = "/sys");
// Whether a controller serves this path (transport, subsystem, address).
bool ctrl_serves(const NvmeCtrl& c, const FabricsPath& p);
PathState path_state(const FabricsPath& p, const std::string& sys = "/sys");
// /dev paths of the namespaces of the subsystem `nqn` (multipath heads, or
// the controllers' own namespaces without multipath), sorted.
std::vector<std::string> subsystem_namespaces(const std::string& nqn, const std::string& sys = "/sys");

}  // namespace gpuraid::daemon
