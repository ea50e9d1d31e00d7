// gpuraid dg import (issue 33, item 16; mdadm --assemble --scan): the drives
// of a group this daemon does not know (moved from another host, or its
// registry lost) are registered and the group assembled from their
// superblocks; its virtual drives come back from the volume table the
// daemon keeps on every member (engine/group/volume_table.h). Nothing is
// written to the drives before the group assembles; a refusal leaves
// nothing registered.
#include <algorithm>
#include <map>
#include <set>

#include "daemon/control_plane.h"
#include "daemon/convert.h"
#include "daemon/logging.h"
#include "daemon/validate.h"

namespace gpuraid::daemon {

namespace {
struct Found {
  std::string path;
  DriveType type = DriveType::File;
  MemberOnDisk m;
  VolumeTable vt;  // vt_ok: its newest valid volume table
  bool vt_ok = false;
};
}  // namespace

grpc::Status ControlPlane::import_group(const v1::ImportGroupRequest& q, v1::ImportGroupResponse* out) {
  std::lock_guard<std::mutex> lk(mu_);
  if (q.paths_size() == 0) return invalid("give the drives of the group to import (their paths)");
  if (q.paths_size() > int(kMaxMembers) + 16) return invalid("too many drives for one group");
  // Read every superblock first: nothing is registered unless all are one group's.
  std::vector<Found> found;
  std::set<std::string> seen;
  for (const auto& p : q.paths()) {
    if (auto s = check_path("drive path", p); !s.ok()) return s;
    if (!seen.insert(p).second) return invalid(p + " is listed twice");
    for (auto& [id, d] : drives_)
      if (d.r.path() == p) return exists(p + " is already registered as " + id + (d.r.group().empty() ? "" : " (in " + d.r.group() + ")"));
    Found f;
    f.path = p;
    f.type = guess_drive_type(p);
    std::string err, why;
    auto d = Drive::open(DriveSpec{f.type, p, 0, false}, &err);
    if (!d) return precondition("cannot open " + p + ": " + err);
    if (!DriveGroup::read_member(*d, &f.m, &why)) return precondition(p + " holds no gpuraid group member: " + why);
    // Read now: once the group holds it, a block device is open exclusively.
    f.vt_ok = DriveGroup::read_volumes(*d, &f.vt);
    found.push_back(f);
  }
  const std::string uuid = found[0].m.group_uuid;
  for (const Found& f : found)
    if (f.m.group_uuid != uuid)
      return precondition(f.path + " is of another group (" + f.m.group_uuid + ", " + f.m.name + ") than " +
                          found[0].path + " (" + uuid + ", " + found[0].m.name + "): import one group at a time");
  for (auto& [n, g] : groups_)
    if (g.r.uuid() == uuid) return exists("this group is here already, as " + n + " (gpuraid dg show " + n + ")");
  // The newest superblock speaks for the group (members that missed changes are stale).
  const Found& top = *std::max_element(found.begin(), found.end(),
                                       [](const Found& a, const Found& b) { return a.m.generation < b.m.generation; });
  const std::string name = q.name().empty() ? top.m.name : q.name();
  if (auto s = check_name("group name", name); !s.ok()) return s;
  if (groups_.count(name))
    return exists("a group named " + name + " is here already: import it under another name (--name)");
  std::set<uint32_t> slots;
  for (const Found& f : found)
    if (!slots.insert(f.m.slot).second) return precondition("two of the drives are slot " + std::to_string(f.m.slot) + " of the group");

  // Register the drives (as pd add does: identity and NVMe checks), then the group.
  std::vector<std::string> ids;
  auto undo = [&] {
    for (const auto& id : ids) {
      drives_.erase(id);
      publish(v1::EVENT_KIND_DRIVE_REMOVED, "the import it was added for was refused", "", "", id);
    }
    groups_.erase(name);
    std::string e;
    if (!persist(&e)) spdlog::error("cannot save the registry: {}", e);
  };
  for (const Found& f : found) {
    v1::AddDriveRequest a;
    a.set_path(f.path);
    v1::Drive d;
    if (auto s = add_drive_locked(a, &d); !s.ok()) {
      undo();
      return {s.error_code(), f.path + ": " + s.error_message() + "; nothing was imported"};
    }
    ids.push_back(d.id());
  }
  GroupRec& gr = groups_[name];
  gr.r.set_name(name);
  gr.r.set_uuid(uuid);
  gr.r.set_level(level_to_api(top.m.cfg.level));
  gr.r.set_parity(top.m.cfg.parity);
  if (top.m.cfg.subgroups > 1) gr.r.set_subgroups(top.m.cfg.subgroups);
  gr.r.set_declustered_data(top.m.cfg.declustered.data);
  gr.r.set_declustered_spares(top.m.cfg.declustered.spares);
  gr.r.set_strip_bytes(top.m.cfg.strip_bytes);
  std::vector<std::string> members(top.m.members);
  for (size_t i = 0; i < found.size(); i++) {
    DriveRec& d = drives_[ids[i]];
    const MemberOnDisk& m = found[i].m;
    d.drive.reset();  // the group opens its drives
    d.r.set_group(name);
    d.r.set_uuid(m.member_uuid);
    if (m.slot < top.m.members) {
      d.r.set_role(v1::DRIVE_ROLE_MEMBER);
      d.r.set_member_index(int(m.slot));
      members[m.slot] = ids[i];
    } else {
      d.r.set_role(v1::DRIVE_ROLE_SPARE);
      gr.r.add_spares(ids[i]);
    }
  }
  for (const auto& id : members) gr.r.add_members(id);
  restore_group(gr, q.force());
  if (!gr.g) {
    const std::string why = gr.note;
    undo();
    return precondition("the group could not be assembled: " + why + "; nothing was imported");
  }
  // Its virtual drives: the newest volume table of its drives.
  VolumeTable vt;
  bool have = false;
  for (const Found& f : found)
    if (f.vt_ok && uuid_str(f.vt.group_uuid) == uuid && (!have || f.vt.generation > vt.generation)) vt = f.vt, have = true;
  std::string msg = "imported " + name + " (" + gr.g->volume().geometry().describe() + ") from " +
                    std::to_string(found.size()) + " drive(s)";
  if (!have) msg += "; its drives hold no volume table (a group of a gpuraid before 2026-11-27): no virtual drives";
  std::vector<std::string> renamed;
  for (const VolumeEntry& v : vt.volumes) {
    std::string id = v.id;
    if (volumes_.count(id)) {
      id = v.id + "-" + name;
      for (int k = 2; volumes_.count(id); k++) id = v.id + "-" + name + "-" + std::to_string(k);
      renamed.push_back(v.id + " as " + id);
    }
    if (v.offset_bytes + v.size_bytes > gr.g->volume().size_bytes()) {
      msg += "; " + v.id + " left out: it ends past the group's capacity";
      continue;
    }
    VolRec& vr = volumes_[id];
    vr.r.set_id(id);
    vr.r.set_group(name);
    vr.r.set_offset_bytes(v.offset_bytes);
    vr.r.set_size_bytes(v.size_bytes);
    vr.r.set_ublk_dev_id(-1);
    make_target(vr, gr);
    volume_to_api(vr, out->add_volumes());
  }
  if (have) msg += "; " + std::to_string(out->volumes_size()) + " virtual drive(s)";
  for (const auto& r : renamed) msg += "; " + r + " (the name was taken here)";
  if (!renamed.empty()) write_volume_table(gr);
  if (!gr.note.empty()) msg += "; " + gr.note;
  for (const auto& id : ids) drive_to_api(drives_[id], out->add_drives());
  group_to_api(gr, out->mutable_group());
  out->set_message(msg);
  spdlog::info("{}", msg);
  publish(v1::EVENT_KIND_GROUP_STARTED, msg, name);
  return persist_status();
}

void ControlPlane::write_volume_table(GroupRec& gr) {
  if (!gr.g) return;
  std::vector<VolumeEntry> v;
  for (auto& [id, vr] : volumes_)
    if (vr.r.group() == gr.r.name()) v.push_back({id, vr.r.offset_bytes(), vr.r.size_bytes()});
  std::sort(v.begin(), v.end(), [](const VolumeEntry& a, const VolumeEntry& b) { return a.offset_bytes < b.offset_bytes; });
  std::string err;
  if (!gr.g->write_volume_table(v, &err))
    spdlog::warn("group {}: the volume table (for dg import) was not written everywhere: {}", gr.r.name(), err);
}

}  // namespace gpuraid::daemon
