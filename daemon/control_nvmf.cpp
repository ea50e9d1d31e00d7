// NVMe-oF exports (vd export --nvmf): the VD's ublk device served by the
// kernel's target (nvmet, configured through configfs: nvmet_config.*).
// Every field is checked and every refusal made before anything is
// created; what the daemon creates is recorded (NvmfRecord) and is all that
// unexport removes. At start the recorded export is brought back over the
// recovered ublk device: what is still in configfs is taken over as it is.
// A DH-HMAC-CHAP key lives in a secret file of the state dir (never in the
// registry, answers or log); without it the export is not restored.
#include <arpa/inet.h>

#include "daemon/control_plane.h"
#include "daemon/dhchap_key.h"
#include "daemon/logging.h"
#include "daemon/secret_files.h"
#include "daemon/validate.h"

namespace gpuraid::daemon {

namespace {

struct Listen {
  std::string trtype, adrfam, traddr, trsvcid;
};

// tcp://ADDR:PORT, IPv6 as tcp://[ADDR]:PORT.
grpc::Status parse_nvmf_listen(const std::string& l, Listen* out) {
  const std::string form = " (give tcp://ADDR:PORT, e.g. tcp://192.0.2.10:4420)";
  if (l.empty()) return invalid("the NVMe-oF address is missing" + form);
  if (l.size() > 128) return invalid("the NVMe-oF address is too long" + form);
  size_t s = l.find("://");
  if (s == std::string::npos) return invalid("NVMe-oF address " + quote(l) + " has no transport" + form);
  out->trtype = l.substr(0, s);
  if (out->trtype != "tcp")
    return invalid("transport " + quote(out->trtype) + " is not supported for exports yet: gpuraid serves NVMe/TCP (tcp://)");
  std::string hp = l.substr(s + 3);
  size_t c = hp.rfind(':');
  if (c == std::string::npos || c == 0) return invalid("NVMe-oF address " + quote(l) + " has no port" + form);
  std::string host = hp.substr(0, c), port = hp.substr(c + 1);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  unsigned char buf[16];
  if (inet_pton(AF_INET, host.c_str(), buf) == 1) out->adrfam = "ipv4";
  else if (inet_pton(AF_INET6, host.c_str(), buf) == 1) out->adrfam = "ipv6";
  else return invalid("NVMe-oF address " + quote(host) + " is not an IPv4 or IPv6 address" + form);
  if (port.empty() || port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos ||
      std::stoul(port) == 0 || std::stoul(port) > 65535)
    return invalid("port " + quote(port) + " is not a number from 1 to 65535");
  out->traddr = host;
  out->trsvcid = std::to_string(std::stoul(port));
  return grpc::Status::OK;
}

bool loopback(const std::string& adrfam, const std::string& traddr) {
  if (adrfam == "ipv6") return traddr == "::1";
  in_addr a;
  return inet_pton(AF_INET, traddr.c_str(), &a) == 1 && (ntohl(a.s_addr) >> 24) == 127;
}

// Where an export's DH-HMAC-CHAP key is kept.
SecretFiles nvmf_secrets(const RegistryStore& store) { return SecretFiles(store.dir() + "/secrets"); }
std::string dhchap_file(const std::string& vd) { return "nvmf-" + vd + ".dhchap"; }

std::string where(const st::NvmfRecord& n) {
  return n.transport() + "://" + (n.adrfam() == "ipv6" ? "[" + n.traddr() + "]" : n.traddr()) + ":" + n.trsvcid();
}

}  // namespace

NvmetExport ControlPlane::nvmet_spec(const VolRec& v) const {
  NvmetExport x;
  auto g = groups_.find(v.r.group());
  nvmet_identity(g == groups_.end() ? "" : g->second.r.uuid(), v.r.id(), &x);
  const auto& n = v.r.nvmf();
  x.nqn = n.nqn();
  x.device_path = "/dev/ublkb" + std::to_string(v.r.ublk_dev_id());
  x.trtype = n.transport();
  x.adrfam = n.adrfam();
  x.traddr = n.traddr();
  x.trsvcid = n.trsvcid();
  x.hosts.assign(n.allowed_hosts().begin(), n.allowed_hosts().end());
  x.allow_any_host = n.allow_any_host();
  return x;
}

grpc::Status ControlPlane::start_nvmf(VolRec& v) {
  st::NvmfRecord& n = *v.r.mutable_nvmf();
  NvmetExport x = nvmet_spec(v);
  if (n.dhchap()) {  // never served without the key it was exported with
    std::string err;
    if (!nvmf_secrets(store_).load(dhchap_file(v.r.id()), &x.dhchap_key, &err))
      return precondition("its DH-HMAC-CHAP key is missing: " + err);
    if (std::string why = dhchap_key_problem(x.dhchap_key); !why.empty())
      return precondition(nvmf_secrets(store_).path(dhchap_file(v.r.id())) + ": " + why);
  }
  NvmetOwned owned{n.port_id(), n.port_created(), {n.hosts_created().begin(), n.hosts_created().end()}};
  std::vector<NvmetOp> ops;
  std::string err;
  if (!nvmet_.plan_create(x, &owned, &ops, &err)) return precondition(err);
  if (!Nvmet::apply(ops, &err)) {
    const std::string mod = Nvmet::transport_missing(x.trtype);
    return precondition("the NVMe target refused: " + err + (mod.empty() ? "" : " (" + mod + ")") +
                        "; nothing was changed");
  }
  n.set_port_id(owned.port_id);
  n.set_port_created(owned.port_created);
  n.clear_hosts_created();
  for (const auto& h : owned.hosts_created) n.add_hosts_created(h);
  if (!ops.empty()) spdlog::info("volume {}: nvmet {} ({} configfs changes)", v.r.id(), n.nqn(), ops.size());
  return grpc::Status::OK;
}

void ControlPlane::undo_ublk_export(VolRec& v, bool made_ublk) {
  if (!made_ublk) return;
  std::string err;
  if (!exporter_->unexport(v.r.id(), &err)) spdlog::error("volume {}: undoing the ublk export: {}", v.r.id(), err);
  v.r.set_export_kind(v1::EXPORT_KIND_UNSPECIFIED);
  v.r.set_ublk_dev_id(-1);
  v.export_active = false;
  v.dev_path.clear();
}

void ControlPlane::forget_nvmf_secret(const VolRec& v) {
  std::string err;
  if (v.r.nvmf().dhchap() && !nvmf_secrets(store_).remove(dhchap_file(v.r.id()), &err))
    spdlog::error("volume {}: {}", v.r.id(), err);
}

grpc::Status ControlPlane::stop_nvmf(VolRec& v) {
  const auto& n = v.r.nvmf();
  NvmetOwned owned{n.port_id(), n.port_created(), {n.hosts_created().begin(), n.hosts_created().end()}};
  std::string err;
  if (!Nvmet::apply(nvmet_.plan_remove(n.nqn(), owned), &err))
    return precondition("cannot remove NVMe-oF subsystem " + n.nqn() + ": " + err);
  return grpc::Status::OK;
}

grpc::Status ControlPlane::export_nvmf(VolRec& v, const v1::ExportVolumeRequest& q) {
  const auto& r = q.nvmf();
  Listen l;
  if (auto s = parse_nvmf_listen(q.listen(), &l); !s.ok()) return s;
  std::vector<std::string> hosts;
  for (const auto& h : r.allowed_hosts()) {
    if (auto s = check_nqn(h); !s.ok()) return invalid("--allow-host: " + s.error_message());
    if (std::find(hosts.begin(), hosts.end(), h) == hosts.end()) hosts.push_back(h);
  }
  if (r.allow_any_host() && !hosts.empty()) return invalid("give --allow-host or --allow-any-host, not both");
  const std::string key = dhchap_trim(r.dhchap_secret());
  if (!r.dhchap_secret().empty()) {
    if (r.allow_any_host())
      return invalid("a DH-HMAC-CHAP key is for the hosts named with --allow-host, not with --allow-any-host");
    if (std::string why = dhchap_key_problem(key); !why.empty()) return invalid(why);
  }
  if (!r.allow_any_host() && hosts.empty())
    return invalid("say which hosts may connect: --allow-host HOSTNQN (the host's /etc/nvme/hostnqn), or --allow-any-host");
  if (r.allow_any_host() && !loopback(l.adrfam, l.traddr) && !r.force())
    return precondition("with --allow-any-host every host that reaches " + l.traddr +
                        " could read and write " + v.r.id() + "; give --allow-host HOSTNQN, or --force");
  // The VD: an existing ublk export is served as it is; any other export is in the way.
  if (v.r.export_kind() == v1::EXPORT_KIND_NVMF)
    return exists(v.r.id() + " is already exported over NVMe-oF as " + v.r.nvmf().nqn() + " at " + where(v.r.nvmf()));
  if (v.r.export_kind() == v1::EXPORT_KIND_NBD)
    return precondition(v.r.id() + " is exported over NBD: unexport it first");
  if (!v.target) return precondition(v.r.id() + " is offline: " + v.export_note);
  if (v.r.export_kind() == v1::EXPORT_KIND_UBLK && !v.export_active)
    return precondition(v.r.id() + "'s ublk export is not active: " + v.export_note);
  if (!exporter_)
    return {grpc::StatusCode::UNIMPLEMENTED,
            "this gpuraidd was built without the ublk/NBD frontends (daemon/frontends): exports are unavailable"};
  // The subsystem.
  NvmetExport id;
  auto g = groups_.find(v.r.group());
  nvmet_identity(g == groups_.end() ? "" : g->second.r.uuid(), v.r.id(), &id);
  const std::string nqn = r.nqn().empty() ? "nqn.2026-11.io.gpuraid:vd:" + id.uuid : r.nqn();
  if (auto s = check_nqn(nqn); !s.ok()) return s;
  for (auto& [oid, o] : volumes_)
    if (o.r.export_kind() == v1::EXPORT_KIND_NVMF && o.r.nvmf().nqn() == nqn)
      return exists(nqn + " is already the NVMe-oF subsystem of " + oid);
  // The kernel's target.
  if (std::string why = nvmet_.unavailable(); !why.empty()) return precondition(why);
  if (std::string mod = Nvmet::transport_missing(l.trtype); !mod.empty())
    return precondition("the kernel's NVMe/" + l.trtype + " target transport is not loaded: " + mod);
  if (nvmet_.subsystem_exists(nqn))
    return exists("subsystem " + nqn + " already exists on this host's NVMe target: give another --nqn");
  if (nvmet_.find_port(l.trtype, l.traddr, l.trsvcid).empty())
    if (std::string why = nvmet_probe_listen(l.adrfam, l.traddr, l.trsvcid); !why.empty()) return precondition(why);

  // Everything checked: the ublk device (unless there), then the target.
  const bool made_ublk = v.r.export_kind() == v1::EXPORT_KIND_UNSPECIFIED;
  if (made_ublk)
    if (auto s = do_export(v, v1::EXPORT_KIND_UBLK, "", v1::NbdSecurity(), -1); !s.ok()) return s;
  st::NvmfRecord& n = *v.r.mutable_nvmf();
  n.set_nqn(nqn);
  n.set_transport(l.trtype);
  n.set_adrfam(l.adrfam);
  n.set_traddr(l.traddr);
  n.set_trsvcid(l.trsvcid);
  for (const auto& h : hosts) n.add_allowed_hosts(h);
  n.set_allow_any_host(r.allow_any_host());
  const SecretFiles secrets = nvmf_secrets(store_);
  std::string err;
  if (!key.empty()) {
    if (!secrets.save(dhchap_file(v.r.id()), key, &err)) {
      v.r.clear_nvmf();
      undo_ublk_export(v, made_ublk);
      return precondition("cannot keep the DH-HMAC-CHAP key: " + err + "; nothing was changed");
    }
    n.set_dhchap(true);
  }
  if (auto s = start_nvmf(v); !s.ok()) {
    if (!key.empty() && !secrets.remove(dhchap_file(v.r.id()), &err)) spdlog::error("volume {}: {}", v.r.id(), err);
    v.r.clear_nvmf();
    undo_ublk_export(v, made_ublk);
    return s;
  }
  v.r.set_export_kind(v1::EXPORT_KIND_NVMF);
  if (r.allow_any_host())
    spdlog::warn("volume {}: NVMe-oF {} at {} allows ANY host to connect", v.r.id(), nqn, where(n));
  spdlog::info("volume {}: exported over NVMe-oF as {} at {} ({} over nvmet port {}{}{})", v.r.id(), nqn, where(n),
               v.dev_path, n.port_id(), n.port_created() ? ", created" : ", shared",
               n.dhchap() ? ", hosts authenticate with DH-HMAC-CHAP" : "");
  return grpc::Status::OK;
}

void ControlPlane::restore_nvmf(VolRec& v) {
  if (std::string why = nvmet_.unavailable(); !why.empty()) {
    v.export_note = "NVMe-oF " + v.r.nvmf().nqn() + " not restored: " + why;
  } else if (auto s = start_nvmf(v); !s.ok()) {
    v.export_note = "NVMe-oF " + v.r.nvmf().nqn() + " not restored: " + s.error_message();
  } else {
    return;
  }
  spdlog::error("volume {}: {}", v.r.id(), v.export_note);
}

void ControlPlane::nvmf_to_api(const VolRec& v, v1::Export* e) const {
  const auto& n = v.r.nvmf();
  auto* o = e->mutable_nvmf();
  o->set_nqn(n.nqn());
  o->set_transport(n.transport());
  o->set_traddr(n.traddr());
  o->set_trsvcid(n.trsvcid());
  for (const auto& h : n.allowed_hosts()) o->add_allowed_hosts(h);
  o->set_allow_any_host(n.allow_any_host());
  o->set_dhchap(n.dhchap());
  o->set_port_id(n.port_id());
  const NvmetExport x = nvmet_spec(v);
  o->set_port_shared(!n.port_created() || nvmet_.port_subsystems(n.port_id()).size() > 1);
  o->set_ns_uuid(x.uuid);
  o->set_ns_nguid(x.nguid);
  o->set_nsid(kNvmetNsid);
  if (!v.export_active) return;
  for (const auto& h : nvmet_.connected(n.nqn(), x)) {
    auto* c = o->add_connected_hosts();
    c->set_host_nqn(h.host_nqn);
    c->set_address(h.address);
    c->set_state(h.state);
  }
}

}  // namespace gpuraid::daemon
