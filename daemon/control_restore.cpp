// Start-up: the registry's drives are opened again, every group is
// reassembled from its members (found by UUID: at their recorded paths or,
// when renamed, among the configured scan paths), and VDs and their
// exports come back.
#include <set>

#include "daemon/control_plane.h"
#include "daemon/convert.h"
#include "daemon/fabrics_reconnect.h"
#include "daemon/logging.h"

namespace gpuraid::daemon {

void ControlPlane::restore_drives(const st::Registry& reg) {
  for (const auto& r : reg.drives()) drives_[r.id()].r = r;
  // pd connect's paths that a host reboot took away (fabrics_reconnect.h).
  std::map<std::string, st::FabricsRecord> paths;  // by NQN: pd connect refuses a second path
  for (const auto& [id, d] : drives_)
    if (d.r.has_fabrics()) paths.emplace(d.r.fabrics().nqn(), d.r.fabrics());
  FabricsReconnect rc;
  HostIdentity host;
  if (!paths.empty()) {
    if (auto s = host_identity(&host); !s.ok()) {
      for (const auto& [nqn, f] : paths) rc.failed[nqn] = "its NVMe-oF path was not reconnected at start: " + s.error_message();
    } else {
      std::vector<st::FabricsRecord> list;
      for (const auto& [nqn, f] : paths) list.push_back(f);
      rc = reconnect_fabrics(list, host);
      for (const auto& m : rc.reconnected) publish(v1::EVENT_KIND_FABRICS_CONNECTED, m);
    }
  }
  // NVMe namespaces by stable id: /dev/nvme* numbers may have changed.
  resolve_nvme_paths();
  for (auto& [id, d] : drives_)
    if (d.missing && d.r.has_fabrics() && rc.failed.count(d.r.fabrics().nqn()))
      d.note = rc.failed.at(d.r.fabrics().nqn());
  for (auto& [id, d] : drives_) {
    const auto& r = d.r;
    if (!held_here(d) || r.failed() || d.missing) continue;
    std::string err;
    d.drive = reopen(d, &err);
    if (!d.drive) {
      d.missing = true;
      d.note = err;
      spdlog::warn("drive {} ({}) is missing: {}", r.id(), r.path(), err);
    }
  }
  set_aside_duplicates();
}

// Members and dedicated spares belong to their group (opened there); the
// daemon holds free drives and the global spare pool.
bool ControlPlane::held_here(const DriveRec& d) {
  return d.r.role() == v1::DRIVE_ROLE_FREE || (d.r.role() == v1::DRIVE_ROLE_SPARE && d.r.group().empty());
}

// One drive is one PD, but a registry written before that was checked may
// name one file twice. A free drive or pool spare that is a group's drive
// (or an earlier PD) under another name is not used: it shows missing,
// saying which PD it is. Group members among themselves are refused by
// assembly (the group stays offline, saying why).
void ControlPlane::set_aside_duplicates() {
  std::vector<std::pair<std::string, DriveIdentity>> kept;  // "pdN (path)", identity
  auto label = [](const DriveRec& d) { return d.r.id() + " (" + d.r.path() + ")"; };
  for (auto& [id, d] : drives_)
    if (!held_here(d)) kept.emplace_back(label(d), identity_of(d));
  for (auto& [id, d] : drives_) {
    if (!d.drive) continue;
    for (const auto& [other, oid] : kept) {
      const std::string why = shared_storage(d.drive->identity(), label(d), oid, other);
      if (why.empty()) continue;
      d.drive.reset();
      d.missing = true;
      d.note = why + ": not used (one drive is one PD; remove " + id + ")";
      spdlog::error("drive {}: {}", id, d.note);
      break;
    }
    if (d.drive) kept.emplace_back(label(d), d.drive->identity());
  }
}

void ControlPlane::restore_group(GroupRec& gr, bool force) {
  const std::string& name = gr.r.name();
  std::vector<std::unique_ptr<Drive>> drives;
  std::set<std::string> found;  // PD ids whose drive is in `drives`
  std::map<std::string, std::string> notes;  // PD id -> why it was not taken
  // Member UUIDs we look for, so a drive at a recorded path that now holds
  // something else is not taken, and a renamed member is found by scanning.
  std::map<std::string, std::string> by_uuid;  // member uuid -> PD id
  for (const auto& id : gr.r.members()) {
    auto it = drives_.find(id);
    if (it != drives_.end() && !it->second.r.uuid().empty()) by_uuid[it->second.r.uuid()] = id;
  }
  for (const auto& id : gr.r.members()) {
    auto it = drives_.find(id);
    if (it == drives_.end()) continue;
    if (it->second.missing && it->second.r.has_nvme()) {  // an NVMe namespace not on the host (by identity)
      notes[id] = id + ": " + it->second.note;
      continue;
    }
    // A file or device missing at an earlier try (daemon start) is tried again: it may be back (dg start).
    std::string err, gu, mu;
    auto d = reopen(it->second, &err);
    if (!d) {
      notes[id] = id + " missing at " + it->second.r.path();
      it->second.missing = true;
      it->second.note = "not found at start: " + err;
      continue;
    }
    if (DriveGroup::resilient() && (!DriveGroup::probe(*d, &gu, &mu) || gu != gr.r.uuid())) {
      notes[id] = id + " at " + it->second.r.path() + " no longer holds this group's superblock";
      it->second.missing = true;
      it->second.note = it->second.r.path() + " no longer holds this member's superblock";
      continue;
    }
    it->second.missing = false;
    it->second.note.clear();
    found.insert(id);
    drives.push_back(std::move(d));
  }
  // Renamed members: look through the scan paths by member UUID.
  if (DriveGroup::resilient() && found.size() < size_t(gr.r.members_size()))
    for (const auto& path : opt_.scan) {
      std::string err, gu, mu;
      auto d = Drive::open(DriveSpec{guess_drive_type(path), path, 0, false}, &err);
      if (!d || !DriveGroup::probe(*d, &gu, &mu) || gu != gr.r.uuid()) continue;
      auto u = by_uuid.find(mu);
      if (u == by_uuid.end() || found.count(u->second)) continue;
      DriveRec& pd = drives_[u->second];
      spdlog::info("group {}: member {} found at {} (was {})", name, u->second, path, pd.r.path());
      pd.r.set_path(path);
      pd.missing = false;  // its namespace was not found by identity, but its superblock was
      pd.note.clear();
      notes.erase(u->second);
      found.insert(u->second);
      drives.push_back(std::move(d));
    }
  // A free drive or pool spare the group took just before a crash: the
  // members' superblocks name it, the registry (saved after them) not yet;
  // and the member it replaced, still in the registry's list, is no longer
  // in the group's (it went offline over that). Assembly places the first
  // and hands back the drives it no longer lists (adopt_offered).
  std::vector<std::string> offered;
  if (DriveGroup::resilient())
    for (auto& [id, d] : drives_) {
      std::string gu, mu;
      if (!d.drive || !d.r.group().empty() || d.r.role() == v1::DRIVE_ROLE_MEMBER || d.r.failed()) continue;
      // (Not a copy of a member the registry knows: assembly refuses two drives of one member.)
      if (!DriveGroup::probe(*d.drive, &gu, &mu) || gu != gr.r.uuid() || by_uuid.count(mu)) continue;
      offered.push_back(id);
      drives.push_back(std::move(d.drive));
    }
  AssembleHint hint;
  level_from_api(gr.r.level(), &hint.cfg.level);
  hint.cfg.name = name;
  hint.cfg.parity = gr.r.parity();
  hint.cfg.subgroups = gr.r.subgroups();
  hint.cfg.declustered = {gr.r.declustered_data(), gr.r.declustered_spares()};
  hint.cfg.strip_bytes = gr.r.strip_bytes();
  hint.uuid = gr.r.uuid();
  hint.force = force;
  std::vector<std::unique_ptr<Drive>> unlisted;
  hint.unlisted = &unlisted;
  std::string note, err;
  gr.g = DriveGroup::assemble(host_.engine(), std::move(drives), hint, &note, &err);
  adopt_offered(gr, offered, unlisted);
  if (!gr.g) {
    gr.note = "could not be assembled: " + err;
    for (auto& [id, n] : notes) gr.note += "; " + n;
    // The way out, in the operator's words (the engine's refusal of stale parity says "start with force").
    if (err.find("start with force") != std::string::npos) gr.note += " [gpuraid dg start " + name + " --force]";
    spdlog::error("group {} is offline: {}", name, gr.note);
    return;
  }
  gr.note = note;
  for (auto& [id, n] : notes) gr.note += (gr.note.empty() ? "" : "; ") + n;
  // The plain backend keeps no member states on disk: re-fail failed members.
  if (!DriveGroup::resilient())
    for (int i = 0; i < gr.r.members_size(); i++) {
      auto it = drives_.find(gr.r.members(i));
      std::string e;
      if (it != drives_.end() && it->second.r.failed() && !gr.g->fail_member(uint32_t(i), &e)) {
        gr.note += (gr.note.empty() ? "" : "; ") + ("member " + std::to_string(i) + " not failed again: " + e);
        spdlog::warn("group {}: member {} not failed again: {}", name, i, e);
      }
    }
  // Dedicated spares go back to the group.
  for (const auto& id : gr.r.spares()) {
    auto it = drives_.find(id);
    if (it == drives_.end() || it->second.missing) continue;  // missing: an NVMe namespace not on the host
    std::string e;
    auto d = reopen(it->second, &e);
    if (!d || !gr.g->add_spare(std::move(d), true, &e)) {
      it->second.missing = !d;
      it->second.note = e;
      spdlog::warn("group {}: spare {} not restored: {}", name, id, e);
    }
  }
  attach_group(gr);
  spdlog::info("group {} assembled ({}){}", name, gr.g->volume().geometry().describe(),
               gr.note.empty() ? "" : ": " + gr.note);
  take_pool_spare_for_failed(gr);
}

// Drives offered to the assembly of gr (restore_group): those it made
// members become its members in the registry (sync_members places them);
// the others are free drives or pool spares as before, their drive handed
// back (unlisted) or, the assembly having failed, opened again. Registry
// members it no longer lists are left to sync_members (replaced).
void ControlPlane::adopt_offered(GroupRec& gr, const std::vector<std::string>& offered,
                                 std::vector<std::unique_ptr<Drive>>& unlisted) {
  for (const auto& id : offered) {
    DriveRec& d = drives_[id];
    for (auto& u : unlisted)
      if (u && u->path() == d.r.path()) d.drive = std::move(u);
    if (d.drive) continue;
    if (gr.g) {
      spdlog::warn("group {}: {} is one of its members (taken just before a stop the registry did not see)",
                   gr.r.name(), id);
      d.r.set_role(v1::DRIVE_ROLE_MEMBER);
      d.r.set_group(gr.r.name());
      d.note.clear();
      continue;
    }
    std::string err;
    d.drive = reopen(d, &err);
    if (!d.drive) d.note = "could not be opened again: " + err;
  }
}

void ControlPlane::take_pool_spare_for_failed(GroupRec& gr) {
  if (gr.g->spare_count() > 0 || gr.g->rebuild_progress().running) return;
  for (const auto& m : gr.g->members())
    if (m.state == MemberState::Failed) return take_pool_spare(gr, m.index);
}

// Wires a live group into the daemon: events, background work, rates.
void ControlPlane::attach_group(GroupRec& gr) {
  std::string name = gr.r.name();
  gr.g->set_event_handler([this, name](const GroupEvent& ev) { on_group_event(name, ev); });
  gr.g->set_rebuild_rate(gr.r.rebuild_rate_bytes_s());
  gr.g->set_rebuild_min_rate(gr.r.rebuild_min_rate_bytes_s());
  gr.g->set_scrub_rate(gr.r.scrub_rate_bytes_s());
  gr.g->pause_rebuild(gr.r.rebuild_held());  // dg rebuild stop: held across restarts
  gr.g->start_background(host_.engine().reactor(0));
  sync_members(gr);
  install_path_policy(gr);
}

void ControlPlane::restore_volume(VolRec& vr) {
  auto it = groups_.find(vr.r.group());
  if (it == groups_.end() || !it->second.g) {
    vr.export_note = "group " + vr.r.group() + " is offline";
    return;
  }
  make_target(vr, it->second);
  if (vr.r.export_kind() == v1::EXPORT_KIND_UNSPECIFIED) return;
  grpc::Status s = do_export(vr, vr.r.export_kind(), vr.r.export_listen(), vr.r.nbd_security(),
                             vr.r.ublk_dev_id());
  if (!s.ok()) {
    vr.export_note = "not restored: " + s.error_message();
    spdlog::error("volume {}: export {}", vr.r.id(), vr.export_note);
  } else if (vr.r.export_kind() == v1::EXPORT_KIND_NVMF) {
    restore_nvmf(vr);  // over the recovered (or re-created) ublk device
  }
}

}  // namespace gpuraid::daemon
