// pd wipe (mdadm --zero-superblock): the gpuraid metadata area of a drive
// (superblocks, bitmap) zeroed, so that it can be used again without force.
// Refused for a drive a running group uses (an active member, a dedicated
// spare); a failed member's drive is wiped through its group; a member of
// an offline group only with force (dg start could still bring it back).
#include "proto/api_words.h"
#include "daemon/control_plane.h"
#include "daemon/convert.h"
#include "daemon/logging.h"
#include "daemon/validate.h"

namespace gpuraid::daemon {

grpc::Status ControlPlane::wipe_metadata_of(DriveRec& d, Drive& drive, bool* wiped) {
  std::string gu, err;
  *wiped = DriveGroup::has_metadata(drive, &gu);
  if (*wiped && !DriveGroup::erase(drive, &err))
    return {grpc::StatusCode::INTERNAL, "cannot wipe " + d.r.id() + " (" + d.r.path() + "): " + err};
  return grpc::Status::OK;
}

grpc::Status ControlPlane::wipe_drive(const v1::WipeDriveRequest& q, v1::WipeDriveResponse* out) {
  std::lock_guard<std::mutex> g(mu_);
  DriveRec* d;
  if (auto s = find_drive(q.id(), &d); !s.ok()) return s;
  const std::string& id = q.id();
  bool wiped = false;
  std::string msg;
  const std::string gname_of_wipe = d->r.group();  // before it may leave the group
  if (d->r.role() == v1::DRIVE_ROLE_MEMBER) {
    auto it = groups_.find(d->r.group());
    const std::string gname = d->r.group();  // a copy: the drive may leave the group below
    const uint32_t index = uint32_t(d->r.member_index());
    if (it != groups_.end() && it->second.g) {
      MemberState st = MemberState::Active;
      for (const auto& m : it->second.g->members())
        if (m.index == index) st = m.state;
      if (st != MemberState::Failed)
        return precondition(id + " is member " + std::to_string(index) + " of running group " + gname + " (" +
                            v1::api_word(member_state_to_api(st)) + "): fail and replace it, or delete the group, first");
      std::string err;
      if (!it->second.g->wipe_failed_member(index, &err))
        return precondition("cannot wipe " + id + ": " + err);
      wiped = true;
      msg = id + " (failed member " + std::to_string(index) + " of " + gname +
            ") wiped: putting it back (gpuraid dg readd) rebuilds it in full";
    } else {
      if (!q.force())
        return precondition(id + " is member " + std::to_string(index) + " of offline group " + gname +
                            ": wiping it loses what it holds for that group (gpuraid dg start " + gname +
                            " may still bring the group back); give --force");
      std::string err;
      auto drive = reopen(*d, &err);
      if (!drive) return precondition("cannot open " + id + " at " + d->r.path() + ": " + err);
      if (auto s = wipe_metadata_of(*d, *drive, &wiped); !s.ok()) return s;
      // Nothing of the group is left on it: it leaves the group's record
      // (its slot names no drive; dg start treats the member as missing)
      // and is a free drive, as `pd list` must then say.
      if (it != groups_.end()) {
        auto* members = it->second.r.mutable_members();
        for (auto& m : *members)
          if (m == id) m.clear();
      }
      d->drive = std::move(drive);
      d->r.set_role(v1::DRIVE_ROLE_FREE);
      d->r.set_group("");
      d->r.set_member_index(0);
      d->r.set_uuid("");
      d->r.set_failed(false);
      d->missing = false;
      d->note.clear();
      msg = id + " (member " + std::to_string(index) + " of offline group " + gname + ") " +
            (wiped ? "wiped" : "held no gpuraid metadata") + ": a free drive now, no longer in " + gname;
    }
  } else if (d->r.role() == v1::DRIVE_ROLE_SPARE && !d->r.group().empty()) {
    return precondition(id + " is a dedicated spare of " + d->r.group() + ": unspare it first (gpuraid pd unspare " +
                        id + "), which wipes it");
  } else {
    // A free drive (failed or not) or a pool spare: the daemon's own.
    std::string err;
    std::unique_ptr<Drive> opened;
    Drive* drive = d->drive.get();
    if (!drive) {
      if (!(opened = reopen(*d, &err))) return precondition("cannot open " + id + " at " + d->r.path() + ": " + err);
      drive = opened.get();
    }
    if (auto s = wipe_metadata_of(*d, *drive, &wiped); !s.ok()) return s;
    // Written to and read back: usable again, whatever failed it before.
    if (opened) d->drive = std::move(opened);
    d->r.set_failed(false);
    d->r.set_uuid("");  // no member of anything any more
    d->missing = false;
    d->note.clear();
    msg = id + (wiped ? " wiped" : " held no gpuraid metadata (nothing written)") +
          (d->r.role() == v1::DRIVE_ROLE_SPARE ? ": still a pool spare" : ": a free drive");
  }
  if (wiped) publish(v1::EVENT_KIND_DRIVE_WIPED, msg, gname_of_wipe, "", id);
  spdlog::info("{}", msg);
  out->set_wiped(wiped);
  out->set_message(msg);
  drive_to_api(*d, out->mutable_drive());
  return persist_status();
}

}  // namespace gpuraid::daemon
