// NVMe-oF: discover, connect (the subsystem's namespaces become drives),
// disconnect. Every field is checked before anything is touched; a failed
// connect leaves no controller and no drive behind.
#include <arpa/inet.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "daemon/control_plane.h"
#include "daemon/fabrics_reconnect.h"
#include "daemon/logging.h"
#include "daemon/validate.h"

namespace gpuraid::daemon {

namespace {

constexpr uint32_t kMaxTimeoutS = 86400;
constexpr size_t kMaxNqnLen = 223;  // NVMe base spec
constexpr auto kNamespaceWait = std::chrono::seconds(15);

grpc::Status check_address(const v1::FabricsAddress& a, FabricsPath* out) {
  if (a.transport().empty()) return invalid("the transport is missing (--transport tcp)");
  if (a.transport() != "tcp")
    return invalid("transport " + quote(a.transport()) + " is not supported: gpuraid connects NVMe/TCP (tcp)");
  if (a.traddr().empty()) return invalid("the target address is missing (--traddr)");
  unsigned char buf[16];
  if (a.traddr().size() > 64 || (inet_pton(AF_INET, a.traddr().c_str(), buf) != 1 &&
                                 inet_pton(AF_INET6, a.traddr().c_str(), buf) != 1))
    return invalid("target address " + quote(a.traddr()) + " is not an IPv4 or IPv6 address");
  if (a.trsvcid().empty()) return invalid("the port is missing (--trsvcid, e.g. 4420)");
  if (a.trsvcid().size() > 5 || a.trsvcid().find_first_not_of("0123456789") != std::string::npos ||
      std::stoul(a.trsvcid()) == 0 || std::stoul(a.trsvcid()) > 65535)
    return invalid("port " + quote(a.trsvcid()) + " is not a number from 1 to 65535");
  *out = FabricsPath{a.transport(), a.traddr(), std::to_string(std::stoul(a.trsvcid())), ""};
  return grpc::Status::OK;
}


grpc::Status check_timeouts(const v1::FabricsConnectRequest& q, ConnectTimeouts* t) {
  if (q.ctrl_loss_tmo_s()) t->ctrl_loss_tmo_s = int(std::min(q.ctrl_loss_tmo_s(), kMaxTimeoutS + 1));
  if (q.ctrl_loss_tmo_s() > kMaxTimeoutS) return invalid("--ctrl-loss-tmo is over a day (86400 s)");
  if (q.reconnect_delay_s() > kMaxTimeoutS) return invalid("--reconnect-delay is over a day (86400 s)");
  if (q.fast_io_fail_tmo_s() > kMaxTimeoutS) return invalid("--fast-io-fail-tmo is over a day (86400 s)");
  t->reconnect_delay_s = q.reconnect_delay_s() ? int(q.reconnect_delay_s()) : std::min(10, t->ctrl_loss_tmo_s);
  if (t->reconnect_delay_s > t->ctrl_loss_tmo_s)
    return invalid("--reconnect-delay (" + std::to_string(t->reconnect_delay_s) + " s) is longer than --ctrl-loss-tmo (" +
                   std::to_string(t->ctrl_loss_tmo_s) + " s): it would never reconnect");
  t->fast_io_fail_tmo_s = q.fast_io_fail_tmo_s() ? int(q.fast_io_fail_tmo_s())
                                                 : std::max(1, std::min(5, t->ctrl_loss_tmo_s / 2));
  if (t->fast_io_fail_tmo_s >= t->ctrl_loss_tmo_s)
    return invalid("--fast-io-fail-tmo must be shorter than --ctrl-loss-tmo");
  return grpc::Status::OK;
}

std::string at(const FabricsPath& p) { return p.transport + " " + p.traddr + ":" + p.trsvcid; }

bool is_block(const std::string& p) {
  struct stat sb;
  return stat(p.c_str(), &sb) == 0 && S_ISBLK(sb.st_mode);
}

// The namespaces of `nqn` once they are block devices (they show up
// asynchronously after a connect); none when they do not within kNamespaceWait.
std::vector<std::string> wait_namespaces(const std::string& nqn) {
  for (auto until = std::chrono::steady_clock::now() + kNamespaceWait; std::chrono::steady_clock::now() < until;
       std::this_thread::sleep_for(std::chrono::milliseconds(100))) {
    std::vector<std::string> ns = subsystem_namespaces(nqn);
    if (!ns.empty() && std::all_of(ns.begin(), ns.end(), is_block)) return ns;
  }
  return {};
}

}  // namespace

grpc::Status check_nqn(const std::string& nqn) {
  if (nqn.empty()) return invalid("the subsystem NQN is missing (--nqn)");
  if (nqn.size() > kMaxNqnLen) return invalid("NQN " + quote(nqn) + " is longer than 223 bytes");
  if (nqn.compare(0, 4, "nqn.") != 0) return invalid("NQN " + quote(nqn) + " does not start with 'nqn.'");
  for (char c : nqn)
    if (static_cast<unsigned char>(c) <= 0x20 || static_cast<unsigned char>(c) >= 0x7f)
      return invalid("NQN " + quote(nqn) + " holds spaces or characters outside printable ASCII");
  if (nqn == kDiscoveryNqn) return invalid("that is the discovery NQN: give a subsystem's NQN");
  return grpc::Status::OK;
}

grpc::Status ControlPlane::host_identity(HostIdentity* out) {
  if (host_id_.hostnqn.empty()) {
    std::string err;
    if (!load_host_identity(store_.dir(), &host_id_, &err)) {
      host_id_ = HostIdentity{};
      return precondition("no host NQN: " + err);
    }
  }
  *out = host_id_;
  return grpc::Status::OK;
}

grpc::Status ControlPlane::discover_fabrics(const v1::FabricsDiscoverRequest& q, v1::FabricsDiscoverResponse* out) {
  FabricsPath p;
  if (auto s = check_address(q.address(), &p); !s.ok()) return s;
  HostIdentity host;
  {
    std::lock_guard<std::mutex> g(mu_);
    if (auto s = host_identity(&host); !s.ok()) return s;
  }
  std::vector<DiscoveryEntry> entries;
  std::string err;
  if (!fabrics_discover(host, p, &entries, &err)) return precondition(err);
  for (const DiscoveryEntry& e : entries) {
    v1::DiscoveryEntry* o = out->add_entries();
    o->set_subtype(e.subtype);
    o->set_transport(e.transport);
    o->set_traddr(e.traddr);
    o->set_trsvcid(e.trsvcid);
    o->set_subnqn(e.subnqn);
    o->set_portid(e.portid);
  }
  out->set_host_nqn(host.hostnqn);
  return grpc::Status::OK;
}

grpc::Status ControlPlane::connect_fabrics(const v1::FabricsConnectRequest& q, v1::FabricsConnectResponse* out) {
  FabricsPath p;
  ConnectTimeouts t;
  if (auto s = check_address(q.address(), &p); !s.ok()) return s;
  if (auto s = check_nqn(q.nqn()); !s.ok()) return s;
  if (auto s = check_timeouts(q, &t); !s.ok()) return s;
  p.nqn = q.nqn();
  std::lock_guard<std::mutex> g(mu_);
  HostIdentity host;
  if (auto s = host_identity(&host); !s.ok()) return s;
  for (const NvmeCtrl& c : nvme_controllers())
    if (ctrl_serves(c, p)) return exists(p.nqn + " at " + at(p) + " is already connected (" + c.name + ")");
  for (auto& [id, d] : drives_)
    if (d.r.has_fabrics() && d.r.fabrics().nqn() == p.nqn)
      return exists(p.nqn + " is already connected: its namespace is drive " + id + " (" + d.r.path() + ")");
  // The target's own list first: a wrong NQN is named as such, and nothing is connected.
  std::vector<DiscoveryEntry> entries;
  std::string err;
  if (!fabrics_discover(host, p, &entries, &err)) return precondition(err);
  std::string offered;
  bool found = false;
  for (const DiscoveryEntry& e : entries) {
    if (e.subtype != "nvme") continue;
    found |= e.subnqn == p.nqn;
    offered += (offered.empty() ? "" : ", ") + e.subnqn;
  }
  if (!found)
    return not_found("the target at " + at(p) + " offers no subsystem " + quote(p.nqn) +
                     (offered.empty() ? " (it offers none to this host)" : " (it offers: " + offered + ")"));
  std::string ctrl;
  if (!fabrics_connect(host, p, t, &ctrl, &err)) return precondition(err);
  auto undo = [&](const std::string& why) {
    std::vector<std::string> names;
    std::string e2;
    if (!fabrics_disconnect(p, &names, &e2)) spdlog::warn("undoing the connect of {}: {}", p.nqn, e2);
    return precondition(why);
  };
  const std::vector<std::string> ns = wait_namespaces(p.nqn);
  if (ns.empty()) return undo(p.nqn + " connected as " + ctrl + " but no namespace appeared within 15 s: disconnected again");
  std::vector<std::string> added;
  for (const std::string& dev : ns) {
    v1::AddDriveRequest aq;
    aq.set_path(dev);
    aq.set_type(v1::DRIVE_TYPE_BLOCK);
    v1::Drive* dout = out->add_drives();
    grpc::Status s = add_drive_locked(aq, dout);
    if (!s.ok()) {
      for (const std::string& id : added) drives_.erase(id);
      return undo("adding namespace " + dev + " failed: " + s.error_message() + "; disconnected again");
    }
    added.push_back(dout->id());
    st::FabricsRecord* f = drives_[dout->id()].r.mutable_fabrics();
    f->set_transport(p.transport);
    f->set_traddr(p.traddr);
    f->set_trsvcid(p.trsvcid);
    f->set_nqn(p.nqn);
    f->set_ctrl_loss_tmo_s(uint32_t(t.ctrl_loss_tmo_s));
  }
  out->set_controller(ctrl);
  out->set_host_nqn(host.hostnqn);
  publish(v1::EVENT_KIND_FABRICS_CONNECTED,
          p.nqn + " at " + at(p) + " as " + ctrl + ": " + std::to_string(added.size()) + " namespace(s)");
  return persist_status();
}

grpc::Status ControlPlane::disconnect_fabrics(const v1::FabricsDisconnectRequest& q,
                                              v1::FabricsDisconnectResponse* out) {
  FabricsPath p;
  if (auto s = check_address(q.address(), &p); !s.ok()) return s;
  if (auto s = check_nqn(q.nqn()); !s.ok()) return s;
  p.nqn = q.nqn();
  std::lock_guard<std::mutex> g(mu_);
  std::vector<std::string> ids;
  for (auto& [id, d] : drives_) {
    if (!d.r.has_fabrics() || d.r.fabrics().nqn() != p.nqn || d.r.fabrics().traddr() != p.traddr ||
        d.r.fabrics().trsvcid() != p.trsvcid)
      continue;
    if (d.r.role() == v1::DRIVE_ROLE_MEMBER)
      return precondition(id + " (" + d.r.path() + ") is member " + std::to_string(d.r.member_index()) + " of " +
                          d.r.group() + ": replace it first");
    if (d.r.role() == v1::DRIVE_ROLE_SPARE) return precondition(id + " is a spare: unspare it first");
    ids.push_back(id);
  }
  bool connected = false;
  for (const NvmeCtrl& c : nvme_controllers()) connected |= ctrl_serves(c, p);
  if (!connected && ids.empty()) return not_found(p.nqn + " is not connected at " + at(p));
  for (const std::string& id : ids) drives_[id].drive.reset();  // closed before the device goes
  std::vector<std::string> names;
  std::string err;
  if (connected && !fabrics_disconnect(p, &names, &err)) {
    for (const std::string& id : ids) drives_[id].drive = reopen(drives_[id], &err);
    return precondition(err);
  }
  for (const std::string& id : ids) {
    drives_.erase(id);
    out->add_removed_drives(id);
  }
  for (const std::string& n : names) out->add_controllers(n);
  publish(v1::EVENT_KIND_FABRICS_DISCONNECTED, p.nqn + " at " + at(p) + ": " + std::to_string(ids.size()) + " drive(s) removed");
  return persist_status();
}

}  // namespace gpuraid::daemon

namespace gpuraid::daemon {

FabricsReconnect reconnect_fabrics(const std::vector<st::FabricsRecord>& paths, const HostIdentity& host) {
  FabricsReconnect out;
  const std::vector<NvmeCtrl> ctrls = nvme_controllers();
  for (const auto& f : paths) {
    const FabricsPath p{f.transport(), f.traddr(), f.trsvcid(), f.nqn()};
    if (std::any_of(ctrls.begin(), ctrls.end(), [&](const NvmeCtrl& c) { return ctrl_serves(c, p); })) continue;
    v1::FabricsConnectRequest q;  // as pd connect with the recorded ctrl-loss-tmo: the same defaults apply
    q.set_ctrl_loss_tmo_s(f.ctrl_loss_tmo_s());
    ConnectTimeouts t;
    std::string ctrl, err;
    if (auto s = check_timeouts(q, &t); !s.ok()) err = "its recorded timeout: " + s.error_message();
    else if (fabrics_connect(host, p, t, &ctrl, &err) && wait_namespaces(p.nqn).empty())
      err = "connected as " + ctrl + " but no namespace appeared within 15 s";
    if (!err.empty()) {
      out.failed[p.nqn] = "its NVMe-oF path " + p.nqn + " at " + at(p) + " was not reconnected at start: " + err;
      spdlog::warn("{}", out.failed[p.nqn]);
      continue;
    }
    spdlog::info("NVMe-oF path {} at {} reconnected at start as {}", p.nqn, at(p), ctrl);
    out.reconnected.push_back(p.nqn + " at " + at(p) + " as " + ctrl + ": reconnected at start");
  }
  return out;
}

}  // namespace gpuraid::daemon
