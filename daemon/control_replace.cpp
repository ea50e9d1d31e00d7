// Hot replace (gpuraid dg replace of a working member, as mdadm --replace):
// the engine copies the member onto the new drive while it serves, then
// swaps it in (engine/group/hot_replace.cpp). Here: the PD records. During
// the copy the new PD is the group's (listed as a dedicated spare, so that
// a restart meanwhile leaves it one); when the replace ends, the PD the
// member moved off is a free drive again (its metadata wiped), or, when the
// replace stopped, the new PD is.
#include "daemon/control_plane.h"
#include "daemon/logging.h"
#include "daemon/validate.h"

namespace gpuraid::daemon {

grpc::Status ControlPlane::hot_replace(GroupRec& gr, uint32_t index, DriveRec& nd, bool force, v1::Group* out) {
  const std::string& name = gr.r.name();
  if (gr.g->replacing_member() >= 0)
    return precondition("member " + std::to_string(gr.g->replacing_member()) + " of " + name +
                        " is being replaced: one at a time (gpuraid dg show " + name + " --watch)");
  std::string err;
  auto drive = std::move(nd.drive);
  if (!gr.g->hot_replace(index, std::move(drive), force, &err)) {
    std::string e2;
    nd.drive = reopen(nd, &e2);
    return precondition(err);
  }
  gr.hot_old_pd = index < uint32_t(gr.r.members_size()) ? gr.r.members(int(index)) : "";
  gr.hot_new_pd = nd.r.id();
  nd.r.set_role(v1::DRIVE_ROLE_SPARE);
  nd.r.set_group(name);
  nd.r.set_uuid("");
  nd.note = "member " + std::to_string(index) + " of " + name + " is being copied onto it (hot replace)";
  sync_members(gr);
  spdlog::info("group {}: hot replace of member {} ({}) onto {}", name, index, gr.hot_old_pd, nd.r.id());
  group_to_api(gr, out);
  return persist_status();
}

void ControlPlane::hot_replace_ended(GroupRec& gr) {
  if (gr.hot_new_pd.empty()) return;  // started before a restart: the registry made it a spare
  const std::string name = gr.r.name();
  auto oldp = drives_.find(gr.hot_old_pd), newp = drives_.find(gr.hot_new_pd);
  gr.hot_old_pd.clear();
  gr.hot_new_pd.clear();
  // sync_members ran: a PD is a member by the engine's word.
  auto free_again = [&](DriveRec& d, const std::string& note) {
    d.r.set_role(v1::DRIVE_ROLE_FREE);
    d.r.set_group("");
    d.r.set_member_index(-1);
    d.r.set_uuid("");
    d.r.set_failed(false);
    std::string err;
    d.drive = reopen(d, &err);
    d.note = d.drive ? note : note + "; it cannot be opened again until the daemon restarts: " + err;
  };
  const bool moved = newp != drives_.end() && newp->second.r.role() == v1::DRIVE_ROLE_MEMBER;
  if (newp != drives_.end() && !moved)
    free_again(newp->second, "the replace onto it ended without it (see gpuraid events)");
  if (moved) newp->second.note.clear();
  // The old drive left healthy only when the member moved by the swap; a
  // member that failed during the copy leaves it failed (sync_members said so).
  const std::string left = gr.g->hot_replace_left();
  if (moved && oldp != drives_.end() && !left.empty() && oldp->second.r.path() == left &&
      oldp->second.r.role() != v1::DRIVE_ROLE_MEMBER)
    free_again(oldp->second, "moved out of " + name + " by a hot replace (its metadata wiped): a free drive");
  sync_members(gr);
}

}  // namespace gpuraid::daemon
