// Drive groups: create, list, show, delete, replace a member, background
// tasks (rebuild, scrub) and their rates.
#include <set>

#include "daemon/control_plane.h"
#include "daemon/convert.h"
#include "daemon/group_health.h"
#include "daemon/logging.h"
#include "daemon/validate.h"
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
  if (!(*out)->g) return precondition("drive group " + name + " is offline: " + (*out)->note);
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
  out->set_strip_bytes(r.strip_bytes());
  out->set_note(gr.note);
  out->set_rebuild_rate_bytes_s(r.rebuild_rate_bytes_s());
  out->set_scrub_rate_bytes_s(r.scrub_rate_bytes_s());
  for (auto& s : r.spares()) out->add_spares(s);
  for (auto& [id, v] : volumes_)
    if (v.r.group() == r.name()) out->add_volumes(id);
  if (!gr.g) {
    out->set_state(v1::GROUP_STATE_OFFLINE);
    for (int i = 0; i < r.members_size(); i++) {
      auto* m = out->add_members();
      m->set_index(uint32_t(i));
      m->set_drive(r.members(i));
      auto d = drives_.find(r.members(i));
      if (d != drives_.end()) m->set_path(d->second.r.path());
      m->set_state(v1::DRIVE_STATE_MISSING);
    }
    return;
  }
  DriveGroup& g = *gr.g;
  const Geometry& geo = g.volume().geometry();
  out->set_parity(geo.parity);
  out->set_geometry(geo.describe());
  out->set_capacity_bytes(g.volume().size_bytes());
  out->set_free_bytes(g.volume().size_bytes() - group_used_bytes(r.name()));
  out->set_state(group_state_to_api(g.state()));
  uint64_t lost = 0;
  for (const auto& mi : g.members()) {
    if (mi.state != MemberState::Active) lost |= 1ull << mi.index;
    auto* m = out->add_members();
    m->set_index(mi.index);
    if (int(mi.index) < r.members_size()) m->set_drive(r.members(int(mi.index)));
    m->set_path(mi.path);
    m->set_uuid(mi.uuid);
    m->set_state(member_state_to_api(mi.state));
    m->set_rebuild_checkpoint_bytes(mi.rebuild_checkpoint_bytes);
  }
  progress_to_api(g.init_progress(), out->mutable_init());
  progress_to_api(g.resync_progress(), out->mutable_resync());
  progress_to_api(g.rebuild_progress(), out->mutable_rebuild());
  progress_to_api(g.scrub_progress(), out->mutable_scrub());
  scrub_to_api(g.last_scrub(), out->mutable_last_scrub());
  out->set_redundancy_claimed(g.redundancy_claimed());
  out->set_generation(g.generation());
  out->set_redundancy_left(redundancy_left(geo, lost, !out->init().running() && !out->resync().running()));
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
      d.r.set_failed(true);
      d.note = "replaced in " + name + "; remove it with: gpuraid pd remove " + id;
    }
  }
  gr.r.clear_members();
  for (auto& id : ids) gr.r.add_members(id);
  gr.r.clear_spares();
  for (auto& id : spares) gr.r.add_spares(id);
}

std::string ControlPlane::dissolve_group(GroupRec& gr, bool wipe) {
  const std::string name = gr.r.name();
  std::string problems;
  if (gr.g) {
    std::string err;
    if (!gr.g->stop(&err)) {
      spdlog::warn("group {}: stop: {}", name, err);
      problems += "; stop: " + err;
    }
    gr.g.reset();
  }
  for (auto& [id, d] : drives_) {
    if (d.r.group() != name) continue;
    d.r.set_role(v1::DRIVE_ROLE_FREE);
    d.r.set_group("");
    d.r.set_member_index(-1);
    d.r.set_uuid("");
    if (d.r.failed()) continue;
    std::string err;
    d.drive = reopen(d, &err);
    if (!d.drive) {
      d.missing = true;
      d.note = err;
    } else if (wipe && !DriveGroup::erase(*d.drive, &err)) {
      spdlog::warn("drive {}: cannot wipe the group metadata: {}", id, err);
      d.note = "still holds the metadata of deleted group " + name + ": " + err;
      problems += "; " + id + " not wiped: " + err;
    }
  }
  return problems;
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
    return invalid("give a RAID level: 0, 1, 10, 5, 6 or ec (got " + std::to_string(int(q.level())) + ")");
  if (cfg.level == Level::EC) {
    if (q.parity() < 1 || q.parity() > kMaxParity)
      return invalid("ec needs a parity count of 1.." + std::to_string(kMaxParity) + " (got " +
                     std::to_string(q.parity()) + ")");
  } else if (q.parity() != 0) {
    return invalid("a parity count is only given for level ec");
  }
  cfg.parity = q.parity();
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
                            &err))
    return invalid(err);
  if (name.empty()) name = next_id("dg", &next_group_, &ControlPlane::group_taken);
  cfg.name = name;
  cfg.force = q.force();
  cfg.assume_zeroed = q.assume_zeroed();
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
  GroupRec& gr = groups_[name];
  gr.r.set_name(name);
  gr.r.set_uuid(g->uuid());
  gr.r.set_level(q.level());
  gr.r.set_parity(geo.parity);
  gr.r.set_strip_bytes(cfg.strip_bytes);
  gr.g = std::move(g);
  gr.note = note;
  for (size_t i = 0; i < members.size(); i++) {
    members[i]->r.set_role(v1::DRIVE_ROLE_MEMBER);
    members[i]->r.set_group(name);
    members[i]->r.set_member_index(int(i));
    gr.r.add_members(members[i]->r.id());
  }
  for (auto* d : spares) {
    if (!gr.g->add_spare(std::move(d->drive), q.force(), &err)) {
      std::string e2;
      d->drive = reopen(*d, &e2);
      const std::string problems = dissolve_group(gr, true);
      groups_.erase(name);
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

grpc::Status ControlPlane::delete_group(const v1::DeleteGroupRequest& q) {
  std::unique_lock<std::shared_mutex> td(teardown_mu_);
  std::lock_guard<std::mutex> g(mu_);
  GroupRec* gr;
  if (auto s = find_group(q.name(), &gr); !s.ok()) return s;
  std::vector<std::string> vols;
  for (auto& [id, v] : volumes_)
    if (v.r.group() == q.name()) vols.push_back(id);
  if (!vols.empty() && !q.force()) {
    std::string list;
    for (auto& v : vols) list += (list.empty() ? "" : ", ") + v;
    return precondition(q.name() + " holds virtual drives (" + list + "): delete them first or give --force");
  }
  for (auto& id : vols) {
    VolRec& v = volumes_[id];
    std::string err;
    if (exporter_ && v.export_active && !exporter_->unexport(id, &err))
      spdlog::warn("volume {}: unexport: {}", id, err);
    volumes_.erase(id);
    publish(v1::EVENT_KIND_VOLUME_DELETED, "with its group", q.name(), id);
  }
  bool online = gr->g != nullptr;
  const std::string problems = dissolve_group(*gr, online);
  groups_.erase(q.name());
  publish(v1::EVENT_KIND_GROUP_DELETED,
          (online ? "members wiped and free" : "was offline; members not wiped") + problems, q.name());
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
  if (nd->r.role() != v1::DRIVE_ROLE_FREE || nd->r.failed() || !nd->drive)
    return precondition(q.new_drive() + " is not a free, healthy drive");
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
    if (act == v1::TASK_ACTION_START || act == v1::TASK_ACTION_STOP)
      return invalid("a rebuild starts by itself when a member is replaced or a spare is taken, and runs to the "
                     "end; it can be paused and resumed");
    Progress p = dg.rebuild_progress();
    if (!p.running) return precondition("no rebuild is running in " + q.group());
    if ((act == v1::TASK_ACTION_PAUSE) == p.paused)
      return precondition(std::string("the rebuild is already ") + (p.paused ? "paused" : "running"));
    dg.pause_rebuild(act == v1::TASK_ACTION_PAUSE);
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
  if (!q.has_rebuild_bytes_s() && !q.has_scrub_bytes_s()) return invalid("give a rebuild rate, a scrub rate or both");
  for (uint64_t r : {q.rebuild_bytes_s(), q.scrub_bytes_s()})
    if (r > kMaxRate) return invalid("a rate of " + std::to_string(r) + " bytes/s is past 1 PiB/s: use 0 for unlimited");
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
