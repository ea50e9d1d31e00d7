// NVMe namespaces in the control plane: identity checks when a drive is
// added, the host scan (gpuraid pd scan), finding recorded namespaces again
// by stable id at start (renumbered /dev/nvme*), and instant
// initialisation of new groups whose members read zeroes once deallocated.
#include <map>

#include "daemon/control_plane.h"
#include "engine/io/nvme_char.h"
#include "daemon/logging.h"
#include "daemon/nvme_convert.h"
#include "daemon/validate.h"
#include "nvme/deallocate.h"
#include "nvme/probe.h"

namespace gpuraid::daemon {

grpc::Status ControlPlane::nvme_admit(const std::string& path, v1::NvmeIdentity* out) {
  nvme::Identity id;
  std::string err;
  switch (nvme::probe(path, &id, &err)) {
    case nvme::Probe::NotNvme:
      out->Clear();
      return grpc::Status::OK;
    case nvme::Probe::Error:
      return precondition(path + " is an NVMe namespace that could not be identified (" + err +
                          "); nothing was changed");
    case nvme::Probe::Ok:
      break;
  }
  std::string why;
  if (!nvme::usable_format(id, &why)) return precondition(path + ": " + why + "; nothing was changed");
  const std::string sid = nvme::stable_id(id);
  for (auto& [oid, d] : drives_)
    if (d.r.has_nvme() && d.r.nvme().stable_id() == sid)
      return exists(path + " is the NVMe namespace " + sid + ", already registered as " + oid + " (at " +
                    d.r.path() + ")");
  nvme_to_api(id, out);
  return grpc::Status::OK;
}

void ControlPlane::resolve_nvme_paths() {
  bool any = false;
  for (auto& [id, d] : drives_) any |= d.r.has_nvme();
  if (!any) return;
  nvme::ScanResult scan = nvme::scan();
  for (const auto& e : scan.errors) spdlog::warn("NVMe scan: {}", e);
  std::map<std::string, const nvme::Identity*> by_id;
  for (const auto& n : scan.namespaces) by_id[nvme::stable_id(n)] = &n;
  for (auto& [id, d] : drives_) {
    if (!d.r.has_nvme()) continue;
    const std::string sid = d.r.nvme().stable_id();
    auto it = by_id.find(sid);
    if (it == by_id.end()) {
      d.missing = true;
      d.note = "the NVMe namespace " + sid + " (serial " + d.r.nvme().serial() + ", nsid " +
               std::to_string(d.r.nvme().nsid()) + ") is not on this host";
      spdlog::warn("drive {}: {}", id, d.note);
      continue;
    }
    const nvme::Identity& now = *it->second;
    // The recorded path stays when it still names this namespace (e.g. a
    // /dev/disk/by-id link); otherwise the namespace's current node (its
    // generic char device /dev/ngXnY for a passthrough drive).
    const bool passthru = d.r.type() == v1::DRIVE_TYPE_NVME_CHAR;
    const std::string recorded = passthru ? nvme_block_twin(d.r.path()) : d.r.path();
    if (nvme::block_name(recorded) != now.block_path.substr(5)) {
      const std::string now_path = passthru ? nvme_char_twin(now.block_path) : now.block_path;
      spdlog::info("drive {}: NVMe namespace {} is now at {} (was {})", id, sid, now_path, d.r.path());
      d.r.set_path(now_path);
    }
    nvme_to_api(now, d.r.mutable_nvme());
  }
}

grpc::Status ControlPlane::scan_drives(v1::ScanDrivesResponse* out) {
  nvme::ScanResult scan = nvme::scan();  // identify commands: outside the registry lock
  std::lock_guard<std::mutex> g(mu_);
  for (const auto& e : scan.errors) out->add_errors(e);
  for (const auto& id : scan.namespaces) {
    auto* s = out->add_namespaces();
    nvme_to_api(id, s->mutable_nvme());
    std::string why;
    s->set_usable(nvme::usable_format(id, &why));
    if (!s->usable()) s->set_note(why);
    const DriveRec* reg = nullptr;
    for (auto& [oid, d] : drives_)
      if ((d.r.has_nvme() && d.r.nvme().stable_id() == s->nvme().stable_id()) ||
          (!d.r.has_nvme() && nvme::block_name(d.r.path()) == id.block_path.substr(5)))
        reg = &d;
    if (reg) {
      s->set_drive(reg->r.id());
      s->set_role(reg->r.role());
      s->set_group(reg->r.group());
      continue;
    }
    // Not ours: say what it holds (a short exclusive open; a busy device says so).
    std::string err, gu, mu, what;
    auto d = Drive::open(DriveSpec{DriveType::Block, id.block_path, 0, false}, &err);
    if (!d) {
      if (s->note().empty()) s->set_note("cannot be opened exclusively: " + err);
    } else if (DriveGroup::probe(*d, &gu, &mu)) {
      s->set_superblock_group(gu);
      if (s->note().empty()) s->set_note("holds gpuraid metadata of group " + gu + " (not registered here)");
    } else if (DriveGroup::holds_data(*d, &what)) {
      if (s->note().empty()) s->set_note("holds " + what);
    }
  }
  return grpc::Status::OK;
}

std::string ControlPlane::instant_init(const std::vector<DriveRec*>& members, bool* zeroed) {
  *zeroed = false;
  // Fresh identity (the namespace may have been reformatted since it was added).
  for (DriveRec* d : members) {
    if (!d->r.has_nvme()) return "background (" + d->r.id() + " is not an NVMe namespace)";
    nvme::Identity id;
    std::string err;
    if (nvme::probe(d->r.path(), &id, &err) != nvme::Probe::Ok)
      return "background (" + d->r.id() + " could not be identified: " + err + ")";
    if (nvme::stable_id(id) != d->r.nvme().stable_id())
      return "background (" + d->r.id() + " at " + d->r.path() + " is no longer namespace " + d->r.nvme().stable_id() + ")";
    if (!id.deallocated_reads_zeroes) {
      char dl[8];
      snprintf(dl, sizeof(dl), "0x%02x", id.dlfeat);
      return "background (" + d->r.id() + ": DLFEAT " + dl + " does not promise zeroes from deallocated blocks)";
    }
  }
  const uint64_t meta = DriveGroup::metadata_bytes();
  for (DriveRec* d : members) {
    std::string err;
    uint64_t size = d->drive->size_bytes();
    if (!nvme::zero_deallocate(d->drive->fd(), meta, size > meta ? size - meta : 0, &err))
      return "background (" + d->r.id() + ": " + err + ")";
  }
  *zeroed = true;
  return "instant (" + std::to_string(members.size()) +
         " NVMe members deallocated with Write Zeroes; DLFEAT: deallocated blocks read zeroes)";
}

}  // namespace gpuraid::daemon
