// Drive groups: create, list, show, delete, replace a member, background
// tasks (rebuild, scrub) and their rates.
#include <set>

#include "daemon/control_plane.h"
#include "daemon/convert.h"
#include "daemon/logging.h"
#include "daemon/validate.h"
#include "engine/levels/level.h"
#include "engine/ppl/ppl_log.h"
#include "engine/units.h"

namespace gpuraid::daemon {

namespace {
constexpr uint64_t kMaxRate = 1ull << 50;
}

grpc::Status ControlPlane::find_group(const std::string& name, GroupRec** out) {
  if (auto s = check_ref("group", name); !s.ok()) return s;
  auto it = groups_.find(name);
  if (it == groups_.end()) return not_found("no drive group " + quote(name) + " (see: gpuraid dg list)");
  *out = &it->second;
  return grpc::Status::OK;
}

grpc::Status ControlPlane::online_group(const std::string& name, GroupRec** out) {
  if (auto s = find_group(name, out); !s.ok()) return s;
  if (!(*out)->g)
    return precondition("drive group " + name + " is offline: " + (*out)->note + " (gpuraid dg start " + name +
                        " tries again)");
  return grpc::Status::OK;
}

uint64_t ControlPlane::group_used_bytes(const std::string& name) const {
  uint64_t used = 0;
  for (auto& [id, v] : volumes_)
    if (v.r.group() == name) used += v.r.size_bytes();
  return used;
}

void ControlPlane::group_to_api(const GroupRec& gr, v1::Group* out) const {
  const auto& r = gr.r;
  out->set_name(r.name());
  out->set_uuid(r.uuid());
  out->set_level(r.level());
  out->set_parity(r.parity());
  out->set_subgroups(r.subgroups());
  out->set_declustered_data(r.declustered_data());
  out->set_declustered_spares(r.declustered_spares());
  out->set_strip_bytes(r.strip_bytes());
  // What the start said is history once the group is whole again (cleared
  // at the next group event too; the finished event of the recovery may be
  // handled a moment before the group reads as optimal).
  if (!gr.g || gr.g->state() != GroupState::Optimal) out->set_note(gr.note);
  out->set_rebuild_rate_bytes_s(r.rebuild_rate_bytes_s());
  out->set_rebuild_held(r.rebuild_held());
  out->set_scrub_rate_bytes_s(r.scrub_rate_bytes_s());
  out->set_rebuild_min_rate_bytes_s(r.rebuild_min_rate_bytes_s());
  for (auto& s : r.spares()) out->add_spares(s);
  for (auto& [id, v] : volumes_)
    if (v.r.group() == r.name()) out->add_volumes(id);
  if (!gr.g) {
    out->set_state(v1::GROUP_STATE_OFFLINE);
    out->set_redundancy(v1::REDUNDANCY_UNKNOWN);
    for (int i = 0; i < r.members_size(); i++) {
      auto* m = out->add_members();
      m->set_index(uint32_t(i));
      m->set_drive(r.members(i));
      auto d = drives_.find(r.members(i));
      if (d != drives_.end()) {
        m->set_path(d->second.r.path());
        m->set_uuid(d->second.r.uuid());
        m->set_size_bytes(d->second.r.size_bytes());
      }
      m->set_state(offline_member_state(d == drives_.end() ? nullptr : &d->second));
    }
    return;
  }
  DriveGroup& g = *gr.g;
  const Geometry& geo = g.volume().geometry();
  out->set_parity(geo.parity);
  if (geo.subgroups > 1) out->set_subgroups(geo.subgroups);
  out->set_declustered_data(geo.declustered.data);
  out->set_declustered_spares(geo.declustered.spares);
  out->set_distributed_spares_used(uint32_t(__builtin_popcountll(g.volume().room_mask())));
  if (g.volume().copying_back() && g.volume().rebuilding_member() >= 0)
    out->set_distributed_spare_copy_back(uint32_t(g.volume().rebuilding_member()));
  out->set_geometry(geo.describe());
  out->set_capacity_bytes(g.volume().size_bytes());
  out->set_free_bytes(g.volume().size_bytes() - group_used_bytes(r.name()));
  out->set_state(group_state_to_api(g.state()));
  uint32_t tolerated = 0;
  out->set_redundancy(redundancy_to_api(g.redundancy(&tolerated)));
  out->set_failures_tolerated(tolerated);
  // Every member gives the same bytes, the smallest member's, and the write-hole guard's log after
  // them: the rest of a larger one is unused.
  uint64_t used = g.volume().data_offset() + geo.member_data_bytes;
  if (const PplLog* log = g.volume().ppl) used = std::max(used, log->layout().offset + log->layout().bytes());
  out->set_member_data_bytes(geo.member_data_bytes);
  out->set_write_hole_guard(g.volume().ppl != nullptr);
  uint64_t unused = 0;
  for (const auto& mi : g.members()) {
    auto* m = out->add_members();
    m->set_index(mi.index);
    const DriveRec* pd = nullptr;
    if (int(mi.index) < r.members_size()) {
      m->set_drive(r.members(int(mi.index)));
      auto d = drives_.find(m->drive());
      if (d != drives_.end()) pd = &d->second;
    }
    m->set_path(mi.path);
    m->set_uuid(mi.uuid);
    m->set_state(member_state_to_api(mi.state));
    m->set_rebuild_checkpoint_bytes(mi.rebuild_checkpoint_bytes);
    // The registry knows a missing member's size; the engine stands in a null drive for it.
    const uint64_t size = pd ? pd->r.size_bytes() : g.volume().member(mi.index)->size_bytes();
    m->set_size_bytes(size);
    m->set_used_bytes(used);
    m->set_unused_bytes(size > used ? size - used : 0);
    unused += m->unused_bytes();
  }
  out->set_unused_bytes(unused);
  progress_to_api(g.init_progress(), out->mutable_init());
  progress_to_api(g.resync_progress(), out->mutable_resync());
  progress_to_api(g.rebuild_progress(), out->mutable_rebuild());
  progress_to_api(g.scrub_progress(), out->mutable_scrub());
  progress_to_api(g.replace_progress(), out->mutable_replace());
  scrub_to_api(g.last_scrub(), out->mutable_last_scrub());
  out->set_redundancy_claimed(out->redundancy() == v1::REDUNDANCY_FULL);
  out->set_generation(g.generation());
}

// Maps the group's members (by UUID, else path) back to PD records after
// anything that may have changed them: a failure, a spare taken, a replace.
void ControlPlane::sync_members(GroupRec& gr) {
  const std::string& name = gr.r.name();
  auto members = gr.g->members();
  std::vector<std::string> ids(members.size());
  std::set<std::string> placed;
  for (const auto& m : members)
    for (auto& [id, d] : drives_) {
      if (d.r.group() != name || placed.count(id)) continue;
      bool match = (!m.uuid.empty() && d.r.uuid() == m.uuid) || (d.r.uuid().empty() && d.r.path() == m.path);
      if (!match) continue;
      d.r.set_role(v1::DRIVE_ROLE_MEMBER);
      d.r.set_member_index(int(m.index));
      d.r.set_uuid(m.uuid);
      d.r.set_failed(m.state == MemberState::Failed);
      d.drive.reset();
      if (m.index < ids.size()) ids[m.index] = id;
      placed.insert(id);
      break;
    }
  std::vector<std::string> spares;
  for (auto& [id, d] : drives_) {
    if (d.r.group() != name || placed.count(id)) continue;
    if (d.r.role() == v1::DRIVE_ROLE_SPARE) {
      spares.push_back(id);
    } else if (d.r.role() == v1::DRIVE_ROLE_MEMBER) {
      // Replaced: the group closed it. It stays listed, failed, until removed.
      d.r.set_role(v1::DRIVE_ROLE_FREE);
      d.r.set_group("");
      d.r.set_member_index(-1);
      d.r.set_uuid("");
      d.r.set_failed(true);
      d.note = "replaced in " + name + "; remove it with: gpuraid pd remove " + id;
    }
  }
  gr.r.clear_members();
  for (auto& id : ids) gr.r.add_members(id);
  gr.r.clear_spares();
  for (auto& id : spares) gr.r.add_spares(id);
}

ControlPlane::Dissolved ControlPlane::dissolve_group(GroupRec& gr) {
  const std::string name = gr.r.name();
  Dissolved out;
  if (gr.g) {
    std::string err;
    if (!gr.g->stop(&err)) {
      spdlog::warn("group {}: stop: {}", name, err);
      out.stop_error = err;
    }
    gr.g.reset();
  }
  for (auto& [id, d] : drives_) {
    if (d.r.group() != name) continue;
    d.r.set_role(v1::DRIVE_ROLE_FREE);
    d.r.set_group("");
    d.r.set_member_index(-1);
    d.r.set_uuid("");
    std::string err, problem;
    std::unique_ptr<Drive> drive = d.drive ? std::move(d.drive) : reopen(d, &err);
    std::string gu;
    if (!drive) {
      problem = "cannot open it: " + err;
    } else if (DriveGroup::has_metadata(*drive, &gu)) {
      // Only this group's metadata: a drive that now holds another group's is left alone.
      if (!gu.empty() && gu != gr.r.uuid()) problem = "it holds the superblock of another group (" + gu + "): left alone";
      else if (!DriveGroup::erase(*drive, &err)) problem = err;
    }
    d.note = problem.empty() ? "" : "may still hold the metadata of deleted group " + name + ": " + problem;
    if (!problem.empty()) out.not_wiped.push_back(id + " (" + d.r.path() + "): " + problem);
    d.missing = !drive && !d.r.failed();
    if (drive && !d.r.failed()) d.drive = std::move(drive);  // free and held again; a failed one stays failed
  }
  for (const auto& w : out.not_wiped) spdlog::warn("group {}: {}", name, w);
  return out;
}

grpc::Status ControlPlane::create_group(const v1::CreateGroupRequest& q, v1::Group* out) {
  std::lock_guard<std::mutex> lk(mu_);
  std::string name = q.name();
  if (!name.empty()) {
    if (auto s = check_name("group name", name); !s.ok()) return s;
    if (groups_.count(name)) return exists("drive group " + name + " already exists");
  }
  GroupConfig cfg;
  if (!level_from_api(q.level(), &cfg.level))
    return invalid("give a RAID level: " + level_numbers() + " (got " + std::to_string(int(q.level())) + ")");
  const LevelDescription& level = level_description(cfg.level);
  if (level.chosen_parity) {
    if (q.parity() < 1 || q.parity() > kMaxParity)
      return invalid(std::string(level.name) + " needs a parity count of 1.." + std::to_string(kMaxParity) +
                     " (got " + std::to_string(q.parity()) + ")");
  } else if (q.parity() != 0) {
    return invalid("a parity count is only given for level ec");
  }
  cfg.parity = q.parity();
  cfg.subgroups = q.subgroups();  // checked with the members by Geometry::make
  cfg.declustered = {q.declustered_data(), q.declustered_spares()};  // as the sub-groups
  cfg.strip_bytes = q.strip_bytes() ? q.strip_bytes() : 64 * 1024;
  if (cfg.strip_bytes < kMinStrip || cfg.strip_bytes > kMaxStrip || (cfg.strip_bytes & (cfg.strip_bytes - 1)))
    return invalid("the strip size " + std::to_string(q.strip_bytes()) +
                   " must be a power of two from 4KiB to 1MiB");
  if (q.drives_size() == 0) return invalid("give the member drives (PD ids)");
  if (q.drives_size() > int(kMaxMembers))
    return invalid("at most " + std::to_string(kMaxMembers) + " members (got " + std::to_string(q.drives_size()) + ")");
  if (q.spares_size() > 16) return invalid("at most 16 dedicated spares");
  std::set<std::string> seen;
  std::vector<DriveRec*> members, spares;
  if (q.spares_size() && !level.spares)
    return invalid(std::string(level.name) + " has no redundancy: a spare could never take over a member (a failure fails the group)");
  for (int pass = 0; pass < 2; pass++) {
    const auto& list = pass ? q.spares() : q.drives();
    for (const auto& id : list) {
      DriveRec* d;
      if (auto s = find_drive(id, &d); !s.ok()) return s;
      if (!seen.insert(id).second) return invalid(id + " is listed twice");
      if (d->r.role() != v1::DRIVE_ROLE_FREE)
        return precondition(id + " is not free (" + (d->r.group().empty() ? "a pool spare" : "in " + d->r.group()) + ")");
      if (d->r.failed() || !d->drive) return precondition(id + " is failed or missing");
      std::string what;
      if (!q.force() && DriveGroup::holds_data(*d->drive, &what))
        return precondition(id + " (" + d->r.path() + ") holds " + what + ": give --force to overwrite it");
      (pass ? spares : members).push_back(d);
    }
  }
  std::vector<Drive*> ptrs;
  for (auto* d : members) ptrs.push_back(d->drive.get());
  Geometry geo;
  std::string err, note;
  if (!Volume::fit_geometry(cfg.level, cfg.parity, cfg.strip_bytes, ptrs, DriveGroup::metadata_bytes(), &geo, &note,
                            &err, cfg.subgroups, cfg.declustered))
    return invalid(err);
  if (name.empty()) name = next_id("dg", &next_group_, &ControlPlane::group_taken);
  cfg.name = name;
  cfg.force = q.force();
  cfg.assume_zeroed = q.assume_zeroed();
  cfg.write_hole_guard = !q.write_hole_guard_off();
  std::string init;
  if (q.assume_zeroed()) init = "none (the operator said the drives read zeroes)";
  else if (!geo.has_parity() && !geo.is_mirror()) init = "none needed (no redundancy)";
  else init = instant_init(members, &cfg.assume_zeroed);
  std::vector<std::unique_ptr<Drive>> owned;
  for (auto* d : members) owned.push_back(std::move(d->drive));
  auto g = DriveGroup::create(host_.engine(), std::move(owned), cfg, &err);
  if (!g) {
    for (auto* d : members) {
      std::string e2;
      d->drive = reopen(*d, &e2);
    }
    return precondition(err);
  }
  // Before the background work starts (attach_group): the init never runs faster.
  g->set_rebuild_rate(q.rebuild_rate_bytes_s());
  GroupRec& gr = groups_[name];
  gr.r.set_name(name);
  gr.r.set_rebuild_rate_bytes_s(q.rebuild_rate_bytes_s());
  gr.r.set_uuid(g->uuid());
  gr.r.set_level(q.level());
  gr.r.set_parity(geo.parity);
  if (geo.subgroups > 1) gr.r.set_subgroups(geo.subgroups);
  gr.r.set_declustered_data(geo.declustered.data);
  gr.r.set_declustered_spares(geo.declustered.spares);
  gr.r.set_strip_bytes(cfg.strip_bytes);
  gr.g = std::move(g);
  gr.note = note;
  for (size_t i = 0; i < members.size(); i++) {
    members[i]->r.set_role(v1::DRIVE_ROLE_MEMBER);
    members[i]->r.set_group(name);
    members[i]->r.set_member_index(int(i));
    members[i]->r.set_uuid("");  // found by path: a UUID of an earlier group would not match
    gr.r.add_members(members[i]->r.id());
  }
  for (auto* d : spares) {
    if (!gr.g->add_spare(std::move(d->drive), q.force(), &err)) {
      std::string e2;
      d->drive = reopen(*d, &e2);
      const Dissolved dis = dissolve_group(gr);
      groups_.erase(name);
      std::string problems = dis.stop_error.empty() ? "" : "; stop: " + dis.stop_error;
      for (const auto& w : dis.not_wiped) problems += "; not wiped: " + w;
      return precondition("spare " + d->r.id() + ": " + err + "; the group was not created" + problems);
    }
    d->r.set_role(v1::DRIVE_ROLE_SPARE);
    d->r.set_group(name);
  }
  attach_group(gr);
  group_to_api(gr, out);
  spdlog::info("group {}: initialisation: {}", name, init);
  publish(v1::EVENT_KIND_GROUP_CREATED, gr.g->volume().geometry().describe() + "; initialisation: " + init, name);
  return persist_status();
}

grpc::Status ControlPlane::list_groups(v1::ListGroupsResponse* out) {
  std::lock_guard<std::mutex> g(mu_);
  for (auto& [n, gr] : groups_) group_to_api(gr, out->add_groups());
  return grpc::Status::OK;
}

grpc::Status ControlPlane::get_group(const v1::GroupRef& q, v1::Group* out) {
  std::lock_guard<std::mutex> g(mu_);
  GroupRec* gr;
  if (auto s = find_group(q.name(), &gr); !s.ok()) return s;
  group_to_api(*gr, out);
  return grpc::Status::OK;
}

grpc::Status ControlPlane::delete_group(const v1::DeleteGroupRequest& q, v1::DeleteGroupResponse* out) {
  std::unique_lock<std::shared_mutex> td(teardown_mu_);
  std::lock_guard<std::mutex> g(mu_);
  GroupRec* gr;
  if (auto s = find_group(q.name(), &gr); !s.ok()) return s;
  std::vector<std::string> vols, exported;
  for (auto& [id, v] : volumes_)
    if (v.r.group() == q.name()) {
      vols.push_back(id);
      if (v.r.export_kind() != v1::EXPORT_KIND_UNSPECIFIED)
        exported.push_back(id + (v.r.export_kind() == v1::EXPORT_KIND_NBD    ? " (NBD " + v.uri + ")"
                                 : v.r.export_kind() == v1::EXPORT_KIND_NVMF ? " (NVMe-oF " + v.r.nvmf().nqn() + ")"
                                                                              : " (ublk " + v.dev_path + ")"));
    }
  auto list = [](const std::vector<std::string>& v) {
    std::string l;
    for (auto& x : v) l += (l.empty() ? "" : ", ") + x;
    return l;
  };
  if (!vols.empty() && !q.force())
    return precondition(q.name() + " holds virtual drives (" + list(vols) + "): delete them first or give --force");
  // Deleting a volume under a client is never implicit.
  if (!exported.empty() && !q.unexport())
    return precondition(q.name() + "'s virtual drives are exported and may be in use: " + list(exported) +
                        "; give --unexport to stop the exports first (NBD clients are disconnected once their "
                        "requests in flight are answered; ublk devices are deleted once their I/O completes)");
  for (auto& id : vols) {
    VolRec& v = volumes_[id];
    if (v.r.export_kind() == v1::EXPORT_KIND_UNSPECIFIED) continue;
    if (auto s = stop_export(v); !s.ok())
      return precondition("cannot stop the export of " + id + ": " + s.error_message() + "; nothing was deleted" +
                          " (exports stopped before it stay stopped)");
  }
  for (auto& id : vols) {
    volumes_.erase(id);
    publish(v1::EVENT_KIND_VOLUME_DELETED, "with its group", q.name(), id);
  }
  const bool online = gr->g != nullptr;
  const Dissolved dis = dissolve_group(*gr);
  groups_.erase(q.name());
  for (const auto& w : dis.not_wiped) out->add_not_wiped(w);
  std::string msg = online ? "stopped; " : "was offline; ";
  msg += dis.not_wiped.empty() ? "the metadata of its drives was wiped; they are free"
                               : std::to_string(dis.not_wiped.size()) + " drive(s) not wiped (" + list(dis.not_wiped) +
                                     "): wipe them with gpuraid pd wipe once they can be reached";
  if (!dis.stop_error.empty()) msg += "; it did not stop cleanly: " + dis.stop_error;
  out->set_message(msg);
  publish_queued(v1::EVENT_KIND_GROUP_DELETED, msg, q.name());
  return persist_status();
}

grpc::Status ControlPlane::replace_member(const v1::ReplaceMemberRequest& q, v1::Group* out) {
  std::lock_guard<std::mutex> g(mu_);
  GroupRec* gr;
  if (auto s = online_group(q.group(), &gr); !s.ok()) return s;
  uint32_t index;
  if (q.member_case() == v1::ReplaceMemberRequest::kIndex) {
    index = q.index();
    if (index >= uint32_t(gr->r.members_size()))
      return invalid("member index " + std::to_string(index) + " is out of range (" + q.group() + " has " +
                     std::to_string(gr->r.members_size()) + " members)");
  } else if (q.member_case() == v1::ReplaceMemberRequest::kDrive) {
    DriveRec* old;
    if (auto s = find_drive(q.drive(), &old); !s.ok()) return s;
    if (old->r.role() != v1::DRIVE_ROLE_MEMBER || old->r.group() != q.group())
      return invalid(q.drive() + " is not a member of " + q.group());
    index = uint32_t(old->r.member_index());
  } else {
    return invalid("say which member to replace (its index or its drive id)");
  }
  DriveRec* nd;
  if (auto s = find_drive(q.new_drive(), &nd); !s.ok()) return s;
  // The member's own drive: put back (as dg readd).
  if (nd->r.role() == v1::DRIVE_ROLE_MEMBER && nd->r.group() == q.group() && nd->r.member_index() == int(index)) {
    v1::ReaddMemberResponse rr;
    if (auto s = readd_locked(*gr, *nd, q.force(), &rr); !s.ok()) return s;
    *out = rr.group();
    return persist_status();
  }
  if (nd->r.role() != v1::DRIVE_ROLE_FREE || nd->r.failed() || !nd->drive)
    return precondition(q.new_drive() + " is not a free, healthy drive");
  // A working member: copied while it serves, then swapped in (hot replace).
  // One in the distributed spare room is copied back onto the drive, which
  // is its member from now on (the engine's replace_member: copy_back.cpp).
  const bool in_room = gr->g->volume().room_mask() >> index & 1;
  for (const auto& m : gr->g->members())
    if (!in_room && m.index == index && m.state == MemberState::Active && !(gr->g->volume().unusable_mask() >> index & 1))
      return hot_replace(*gr, index, *nd, q.force(), out);
  std::string err;
  auto drive = std::move(nd->drive);
  if (!gr->g->replace_member(index, std::move(drive), q.force(), &err)) {
    std::string e2;
    nd->drive = reopen(*nd, &e2);
    return precondition(err);
  }
  nd->r.set_role(v1::DRIVE_ROLE_MEMBER);
  nd->r.set_group(q.group());
  nd->r.set_member_index(int(index));
  nd->r.set_uuid("");
  sync_members(*gr);
  publish(v1::EVENT_KIND_MEMBER_REPLACED, "member " + std::to_string(index) + " replaced by " + q.new_drive(),
          q.group(), "", q.new_drive(), int(index));
  group_to_api(*gr, out);
  return persist_status();
}

// stop|pause hold the running rebuild at its checkpoint (recorded: it stays
// held across a restart, and a rebuild that begins meanwhile starts held);
// resume|start release it; start also begins a rebuild onto a spare (the
// group's, else the pool's) when a member is failed and none runs, or goes
// on with one that stopped (Group::restart_rebuild). A rebuild already
// running is what start asks for: no error (the housekeeper starts one by
// itself when a spare comes, maybe just before start).
grpc::Status ControlPlane::rebuild_task(GroupRec& gr, v1::TaskAction act) {
  DriveGroup& dg = *gr.g;
  const std::string& name = gr.r.name();
  const bool running = dg.rebuild_progress().running, held = gr.r.rebuild_held();
  if (act == v1::TASK_ACTION_STOP || act == v1::TASK_ACTION_PAUSE) {
    if (held) return precondition("the rebuilds of " + name + " are already held (gpuraid dg rebuild " + name + " start)");
    if (!running) return precondition("no rebuild is running in " + name);
    dg.pause_rebuild(true);
    gr.r.set_rebuild_held(true);
    return grpc::Status::OK;
  }
  if (held) {
    dg.pause_rebuild(false);
    gr.r.set_rebuild_held(false);
    return grpc::Status::OK;
  }
  if (act == v1::TASK_ACTION_RESUME)
    return precondition(running ? "the rebuild of " + name + " is not held: it is running" : "no rebuild is held in " + name);
  if (running) return grpc::Status::OK;
  // Nothing running: onto a spare, if a member is failed.
  int failed = -1;
  bool rebuilding = false;
  for (const auto& m : dg.members()) {
    if (m.state == MemberState::Failed && failed < 0) failed = int(m.index);
    rebuilding |= m.state == MemberState::Rebuilding;
  }
  std::string err;
  // A member rebuilding with no rebuild running: one that stopped (at a
  // block nothing rebuilds, written over since) goes on from where it
  // stopped, before any other member's. (Or the group's housekeeper has
  // just started one with its spare, not yet armed: the engine sees it.)
  if (rebuilding)
    return dg.restart_rebuild(&err) ? grpc::Status::OK
                                    : precondition("cannot start the rebuild of " + name + " again: " + err);
  if (failed < 0) return precondition("nothing to rebuild in " + name + ": no member is failed");
  // Declustered groups: into the distributed spare room first, while it has room.
  if (dg.spare_count() > 0 || dg.volume().room_left()) {
    if (!dg.rebuild_onto_spare(&err) && !dg.rebuild_progress().running)
      return precondition("cannot rebuild onto the spare of " + name + ": " + err);
  } else {
    take_pool_spare(gr, uint32_t(failed));
  }
  if (dg.rebuild_progress().running) return grpc::Status::OK;
  const std::string m = std::to_string(failed), pd = failed < gr.r.members_size() ? gr.r.members(failed) : "PD";
  const std::string room = dg.volume().room() ? " (the distributed spare room is full)" : "";
  return precondition("member " + m + " of " + name + " is failed and there is no spare that fits" + room + ": give it a drive " +
                      "(gpuraid dg replace " + name + " --member " + m + " --with PD), make one a spare (gpuraid pd " +
                      "spare PD), or put its own drive back (gpuraid dg readd " + name + " " + pd + ")");
}

grpc::Status ControlPlane::control_task(const v1::ControlTaskRequest& q, v1::Group* out) {
  std::lock_guard<std::mutex> g(mu_);
  GroupRec* gr;
  if (auto s = online_group(q.group(), &gr); !s.ok()) return s;
  DriveGroup& dg = *gr->g;
  const auto act = q.action();
  if (act < v1::TASK_ACTION_START || act > v1::TASK_ACTION_RESUME)
    return invalid("give an action: start, stop, pause or resume");
  if (q.repair() && !(q.task() == v1::TASK_SCRUB && act == v1::TASK_ACTION_START))
    return invalid("repair only applies when starting a scrub");
  std::string err;
  if (q.task() == v1::TASK_REBUILD) {
    if (auto s = rebuild_task(*gr, act); !s.ok()) return s;
    group_to_api(*gr, out);
    return persist_status();
  } else if (q.task() == v1::TASK_SCRUB) {
    Progress p = dg.scrub_progress();
    switch (act) {
      case v1::TASK_ACTION_START:
        if (p.running) return precondition("a scrub is already running in " + q.group());
        if (!dg.start_scrub(q.repair(), &err)) return precondition(err);
        break;
      case v1::TASK_ACTION_STOP:
        if (!p.running) return precondition("no scrub is running in " + q.group());
        dg.stop_scrub();
        break;
      default:
        if (!p.running) return precondition("no scrub is running in " + q.group());
        if ((act == v1::TASK_ACTION_PAUSE) == p.paused)
          return precondition(std::string("the scrub is already ") + (p.paused ? "paused" : "running"));
        dg.pause_scrub(act == v1::TASK_ACTION_PAUSE);
    }
  } else {
    return invalid("give a task: rebuild or scrub");
  }
  group_to_api(*gr, out);
  return grpc::Status::OK;
}

grpc::Status ControlPlane::set_rates(const v1::SetRatesRequest& q, v1::Group* out) {
  std::lock_guard<std::mutex> g(mu_);
  GroupRec* gr;
  if (auto s = online_group(q.group(), &gr); !s.ok()) return s;
  if (!q.has_rebuild_bytes_s() && !q.has_scrub_bytes_s() && !q.has_rebuild_min_bytes_s())
    return invalid("give a rebuild rate, a rebuild minimum, a scrub rate, or several");
  for (uint64_t r : {q.rebuild_bytes_s(), q.scrub_bytes_s(), q.rebuild_min_bytes_s()})
    if (r > kMaxRate) return invalid("a rate of " + std::to_string(r) + " bytes/s is past 1 PiB/s: use 0 for unlimited");
  const uint64_t max = q.has_rebuild_bytes_s() ? q.rebuild_bytes_s() : gr->r.rebuild_rate_bytes_s();
  const uint64_t min = q.has_rebuild_min_bytes_s() ? q.rebuild_min_bytes_s() : gr->r.rebuild_min_rate_bytes_s();
  if (max && min > max)
    return invalid("the rebuild minimum (" + std::to_string(min) + " bytes/s, kept under foreground I/O) is above its maximum (" +
                   std::to_string(max) + " bytes/s): lower the minimum or raise the maximum");
  if (q.has_rebuild_min_bytes_s()) {
    gr->g->set_rebuild_min_rate(q.rebuild_min_bytes_s());
    gr->r.set_rebuild_min_rate_bytes_s(q.rebuild_min_bytes_s());
  }
  if (q.has_rebuild_bytes_s()) {
    gr->g->set_rebuild_rate(q.rebuild_bytes_s());
    gr->r.set_rebuild_rate_bytes_s(q.rebuild_bytes_s());
  }
  if (q.has_scrub_bytes_s()) {
    gr->g->set_scrub_rate(q.scrub_bytes_s());
    gr->r.set_scrub_rate_bytes_s(q.scrub_bytes_s());
  }
  group_to_api(*gr, out);
  return persist_status();
}

}  // namespace gpuraid::daemon
