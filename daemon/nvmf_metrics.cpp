#include "daemon/nvmf_metrics.h"

#include <map>
#include <tuple>

namespace gpuraid::daemon {

void nvmf_metrics(PromText& p, const std::vector<v1::Volume>& vols) {
  std::vector<const v1::Volume*> nvmf;
  for (auto& v : vols)
    if (v.has_export_() && v.export_().kind() == v1::EXPORT_KIND_NVMF) nvmf.push_back(&v);
  auto base = [](const v1::Volume& v) -> Labels {
    return {{"vd", v.id()}, {"dg", v.group()}, {"nqn", v.export_().nvmf().nqn()}};
  };
  p.family("vd_nvmf_info", "gauge",
           "NVMe-oF export of a virtual drive (always 1): subsystem NQN, transport, listen address, nvmet port.");
  for (const v1::Volume* v : nvmf) {
    const auto& n = v->export_().nvmf();
    const bool v6 = n.traddr().find(':') != std::string::npos;
    Labels l = base(*v);
    l.push_back({"transport", n.transport()});
    l.push_back({"address", (v6 ? "[" + n.traddr() + "]" : n.traddr()) + ":" + n.trsvcid()});
    l.push_back({"port", n.port_id()});
    l.push_back({"dhchap", n.dhchap() ? "1" : "0"});
    l.push_back({"allow_any_host", n.allow_any_host() ? "1" : "0"});
    p.sample("vd_nvmf_info", l, uint64_t(1));
  }
  p.family("vd_nvmf_connected_hosts", "gauge", "Hosts (controllers, or TCP peers) connected to the export now.");
  for (const v1::Volume* v : nvmf)
    p.sample("vd_nvmf_connected_hosts", base(*v), uint64_t(v->export_().nvmf().connected_hosts_size()));
  p.family("vd_nvmf_host_state", "gauge",
           "Connected hosts by host NQN (empty when only the TCP peer is known), address and state as the "
           "kernel's target shows it (controller status, or the number of TCP connections): how many.");
  for (const v1::Volume* v : nvmf) {
    std::map<std::tuple<std::string, std::string, std::string>, uint64_t> hosts;  // one series per distinct triple
    for (const auto& h : v->export_().nvmf().connected_hosts()) hosts[{h.host_nqn(), h.address(), h.state()}]++;
    for (const auto& [h, n] : hosts) {
      Labels l = base(*v);
      l.push_back({"host", std::get<0>(h)});
      l.push_back({"address", std::get<1>(h)});
      l.push_back({"state", std::get<2>(h)});
      p.sample("vd_nvmf_host_state", l, n);
    }
  }
}

}  // namespace gpuraid::daemon
