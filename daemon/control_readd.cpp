// dg readd (and dg replace --with the member's own drive): a failed or
// missing member's drive back into its slot (mdadm --re-add). The engine
// decides between a partial rebuild (the regions written since it left) and
// a full one, and says which and why.
#include "proto/api_words.h"
#include "daemon/control_plane.h"
#include "daemon/convert.h"
#include "daemon/logging.h"
#include "daemon/validate.h"

namespace gpuraid::daemon {

grpc::Status ControlPlane::readd_member(const v1::ReaddMemberRequest& q, v1::ReaddMemberResponse* out) {
  std::lock_guard<std::mutex> g(mu_);
  GroupRec* gr;
  if (auto s = online_group(q.group(), &gr); !s.ok()) return s;
  DriveRec* d;
  if (auto s = find_drive(q.drive(), &d); !s.ok()) return s;
  if (d->r.role() != v1::DRIVE_ROLE_MEMBER || d->r.group() != q.group())
    return precondition(q.drive() + " is not a member of " + q.group() +
                        (d->note.empty() ? "" : " (" + d->note + ")") +
                        ": only a member's own drive can be put back; a free drive replaces a member (gpuraid dg replace)");
  if (auto s = readd_locked(*gr, *d, q.force(), out); !s.ok()) return s;
  return persist_status();
}

grpc::Status ControlPlane::readd_locked(GroupRec& gr, DriveRec& d, bool force, v1::ReaddMemberResponse* out) {
  const uint32_t index = uint32_t(d.r.member_index());
  const std::string& name = gr.r.name();
  bool held = false;  // the group holds a drive for the slot (else: absent at assembly)
  MemberState st = MemberState::Active;
  for (const auto& m : gr.g->members())
    if (m.index == index) {
      held = !m.path.empty();
      st = m.state;
    }
  if (st != MemberState::Failed && st != MemberState::Missing)
    return precondition(d.r.id() + " is member " + std::to_string(index) + " of " + name + " and " +
                        v1::api_word(member_state_to_api(st)) + ": nothing to re-add");
  std::unique_ptr<Drive> fresh;
  std::string err;
  if (!held && !(fresh = reopen(d, &err)))
    return precondition("cannot open " + d.r.id() + " at " + d.r.path() + ": " + err);
  ReaddResult rr;
  if (!gr.g->readd_member(index, std::move(fresh), force, &rr, &err)) return precondition(err);
  d.r.set_failed(false);
  d.missing = false;
  d.note.clear();
  d.r.set_uuid("");  // a full rebuild makes it a new member: found again by path
  sync_members(gr);
  spdlog::info("group {}: {} re-added as member {}: {}", name, d.r.id(), index, rr.how);
  out->set_partial(rr.partial);
  out->set_regions(rr.regions);
  out->set_rebuild_bytes(rr.bytes);
  out->set_message(rr.how);
  group_to_api(gr, out->mutable_group());
  return grpc::Status::OK;
}

}  // namespace gpuraid::daemon
