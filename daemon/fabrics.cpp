#include "daemon/fabrics.h"

extern "C" {
#include <nvme/fabrics.h>
#include <nvme/tree.h>
#include <nvme/util.h>
}

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <memory>

#include "engine/group/superblock.h"

namespace gpuraid::daemon {

namespace {

struct Root {
  nvme_root_t r = nvme_create_root(nullptr, 0);  // libnvme's own logging off: errors come back to the caller
  ~Root() {
    if (r) nvme_free_tree(r);
  }
};

std::string connect_error(int e) {
  if (e >= ENVME_CONNECT_RESOLVE) return nvme_errno_to_string(e);
  return strerror(e);
}

bool read_line(const std::string& path, std::string* out) {
  std::ifstream f(path);
  if (!f) return false;
  std::getline(f, *out);
  while (!out->empty() && (out->back() == '\n' || out->back() == ' ')) out->pop_back();
  return !out->empty();
}

bool write_file(const std::string& path, const std::string& data, std::string* err) {
  const std::string tmp = path + ".tmp";
  int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  bool ok = fd >= 0 && write(fd, data.data(), data.size()) == ssize_t(data.size()) && fsync(fd) == 0;
  if (fd >= 0) close(fd);
  ok = ok && rename(tmp.c_str(), path.c_str()) == 0;
  if (!ok) *err = "cannot write " + path + ": " + strerror(errno);
  return ok;
}

std::string subtype_name(uint8_t t) {
  switch (t) {
    case NVME_NQN_DISC: return "discovery";
    case NVME_NQN_NVME: return "nvme";
    case NVME_NQN_CURR: return "current discovery";
  }
  return "type " + std::to_string(t);
}

std::string trim(const char* s, size_t n) {
  std::string out(s, strnlen(s, n));
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

std::string where(const FabricsPath& p) { return p.transport + " " + p.traddr + ":" + p.trsvcid; }

}  // namespace

bool load_host_identity(const std::string& dir, HostIdentity* out, std::string* err) {
  const std::string nqn_file = dir + "/hostnqn", id_file = dir + "/hostid";
  if (read_line(nqn_file, &out->hostnqn) && read_line(id_file, &out->hostid)) return true;
  out->hostid = uuid_str(new_uuid());
  out->hostnqn = "nqn.2014-08.org.nvmexpress:uuid:" + out->hostid;
  return write_file(id_file, out->hostid + "\n", err) && write_file(nqn_file, out->hostnqn + "\n", err);
}

bool fabrics_discover(const HostIdentity& host, const FabricsPath& at, std::vector<DiscoveryEntry>* out,
                      std::string* err) {
  Root root;
  if (!root.r) return *err = "libnvme: cannot create its tree", false;
  nvme_host_t h = nvme_lookup_host(root.r, host.hostnqn.c_str(), host.hostid.c_str());
  nvme_ctrl_t c = nvme_create_ctrl(root.r, NVME_DISC_SUBSYS_NAME, at.transport.c_str(), at.traddr.c_str(), nullptr,
                                   nullptr, at.trsvcid.c_str());
  if (!h || !c) return *err = "libnvme: cannot create a discovery controller", false;
  nvme_fabrics_config cfg;
  nvmf_default_config(&cfg);
  cfg.ctrl_loss_tmo = 0;  // a discovery controller that drops goes away at once
  if (nvmf_add_ctrl(h, c, &cfg) != 0) {
    const int e = errno;
    nvme_free_ctrl(c);
    return *err = "cannot reach an NVMe-oF discovery controller at " + where(at) + ": " + connect_error(e), false;
  }
  nvmf_discovery_log* log = nullptr;
  const int rc = nvmf_get_discovery_log(c, &log, 3);
  const int e = errno;
  nvme_disconnect_ctrl(c);
  nvme_free_ctrl(c);
  if (rc != 0 || !log) return *err = "reading the discovery log from " + where(at) + " failed: " + strerror(e), false;
  std::unique_ptr<nvmf_discovery_log, decltype(&free)> hold(log, free);
  for (uint64_t i = 0; i < le64toh(log->numrec); i++) {
    const nvmf_disc_log_entry& en = log->entries[i];
    DiscoveryEntry d;
    d.subtype = subtype_name(en.subtype);
    d.transport = nvmf_trtype_str(en.trtype);
    d.traddr = trim(en.traddr, sizeof en.traddr);
    d.trsvcid = trim(en.trsvcid, sizeof en.trsvcid);
    d.subnqn = trim(en.subnqn, sizeof en.subnqn);
    d.portid = le16toh(en.portid);
    out->push_back(d);
  }
  return true;
}

bool fabrics_connect(const HostIdentity& host, const FabricsPath& p, const ConnectTimeouts& t, std::string* ctrl,
                     std::string* err) {
  Root root;
  if (!root.r) return *err = "libnvme: cannot create its tree", false;
  nvme_host_t h = nvme_lookup_host(root.r, host.hostnqn.c_str(), host.hostid.c_str());
  nvme_ctrl_t c = nvme_create_ctrl(root.r, p.nqn.c_str(), p.transport.c_str(), p.traddr.c_str(), nullptr, nullptr,
                                   p.trsvcid.c_str());
  if (!h || !c) return *err = "libnvme: cannot create a controller", false;
  nvme_fabrics_config cfg;
  nvmf_default_config(&cfg);
  cfg.ctrl_loss_tmo = t.ctrl_loss_tmo_s;
  cfg.reconnect_delay = t.reconnect_delay_s;
  cfg.fast_io_fail_tmo = t.fast_io_fail_tmo_s;
  if (nvmf_add_ctrl(h, c, &cfg) != 0) {
    const int e = errno;
    nvme_free_ctrl(c);
    return *err = "connecting to " + p.nqn + " at " + where(p) + " failed: " + connect_error(e), false;
  }
  *ctrl = nvme_ctrl_get_name(c);
  return true;
}

bool fabrics_disconnect(const FabricsPath& p, std::vector<std::string>* names, std::string* err) {
  Root root;
  if (!root.r) return *err = "libnvme: cannot create its tree", false;
  for (const NvmeCtrl& k : nvme_controllers()) {
    if (!ctrl_serves(k, p)) continue;
    nvme_ctrl_t c = nvme_scan_ctrl(root.r, k.name.c_str());
    if (!c || nvme_disconnect_ctrl(c) != 0)
      return *err = "disconnecting " + k.name + " failed: " + strerror(errno), false;
    names->push_back(k.name);
  }
  if (names->empty()) return *err = "no controller is connected to " + p.nqn + " at " + where(p), false;
  return true;
}

}  // namespace gpuraid::daemon
