// Physical drives: add, list, show, remove, fail, spare/unspare.
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "daemon/control_plane.h"
#include "daemon/created_file.h"
#include "engine/io/nvme_char.h"
#include "daemon/convert.h"
#include "engine/levels/level.h"
#include "daemon/logging.h"
#include "daemon/validate.h"
#include "engine/units.h"

namespace gpuraid::daemon {

namespace {
constexpr uint64_t kMaxCreateBytes = 1ull << 50;  // 1 PiB: a typo guard for file/mem sizes
}

std::unique_ptr<Drive> ControlPlane::reopen(const DriveRec& d, std::string* err) const {
  DriveType t = DriveType::File;
  drive_type_from_api(d.r.type(), &t);
  bool sized = t == DriveType::Mem || t == DriveType::Null;
  return Drive::open(DriveSpec{t, d.r.path(), sized ? d.r.size_bytes() : 0, false}, err);
}

grpc::Status ControlPlane::find_drive(const std::string& id, DriveRec** out) {
  if (auto s = check_ref("drive id", id); !s.ok()) return s;
  auto it = drives_.find(id);
  if (it == drives_.end()) return not_found("no drive " + quote(id) + " (see: gpuraid pd list)");
  *out = &it->second;
  return grpc::Status::OK;
}

void ControlPlane::drive_to_api(const DriveRec& d, v1::Drive* out) const {
  out->set_id(d.r.id());
  out->set_path(d.r.path());
  out->set_type(d.r.type());
  out->set_size_bytes(d.r.size_bytes());
  out->set_role(d.r.role());
  out->set_group(d.r.group());
  out->set_member_index(d.r.role() == v1::DRIVE_ROLE_MEMBER ? d.r.member_index() : -1);
  out->set_uuid(d.r.uuid());
  out->set_note(d.note);
  if (d.r.has_nvme()) *out->mutable_nvme() = d.r.nvme();
  v1::DriveState s = d.r.failed() ? v1::DRIVE_STATE_FAILED : d.missing ? v1::DRIVE_STATE_MISSING : v1::DRIVE_STATE_ONLINE;
  if (d.r.role() == v1::DRIVE_ROLE_MEMBER) {
    auto g = groups_.find(d.r.group());
    if (g == groups_.end() || !g->second.g) {
      s = offline_member_state(&d);
    } else {
      for (const auto& m : g->second.g->members())
        if (int(m.index) == d.r.member_index()) s = member_state_to_api(m.state);
    }
  }
  out->set_state(s);
}

grpc::Status ControlPlane::add_drive(const v1::AddDriveRequest& q, v1::Drive* out) {
  std::lock_guard<std::mutex> g(mu_);
  return add_drive_locked(q, out);
}

grpc::Status ControlPlane::add_drive_locked(const v1::AddDriveRequest& q, v1::Drive* out) {
  DriveType type;
  if (q.type() == v1::DRIVE_TYPE_UNSPECIFIED) {
    type = guess_drive_type(q.path());
  } else if (!drive_type_from_api(q.type(), &type)) {
    return invalid("unknown drive type " + std::to_string(int(q.type())) + " (file, block, mem, null, nvme-char)");
  }
  if (type == DriveType::Null) {
    // A null drive (benchmarks) has no path: it is named null:ID.
    if (!q.path().empty()) return invalid("a null drive takes no path (it is named after its id)");
  } else if (auto s = check_path("drive path", q.path()); !s.ok()) {
    return s;
  }
  uint64_t size = q.create_size_bytes();
  const uint64_t min = DriveGroup::metadata_bytes() + (1u << 20);
  if (size) {
    if (type == DriveType::Block) return invalid("a block device has its own size: do not give one");
    if (size % kBlockSize) return invalid("the size " + std::to_string(size) + " is not a multiple of 4 KiB");
    if (size > kMaxCreateBytes) return invalid("the size " + format_size(size) + " is larger than 1 PiB");
    if (size < min) return invalid("the size " + format_size(size) + " is smaller than the minimum " + format_size(min));
  } else if (type == DriveType::Mem || type == DriveType::Null) {
    return invalid(std::string("a ") + drive_type_name(type) + " drive needs a size");
  }
  std::string id = q.id();
  if (!id.empty()) {
    if (auto s = check_name("drive id", id); !s.ok()) return s;
    if (drives_.count(id)) return exists("drive " + id + " already exists");
  }
  // An id is taken from the counter only if the drive is added.
  const uint64_t counter = next_drive_;
  struct Restore {
    uint64_t* c;
    uint64_t v;
    bool keep = false;
    ~Restore() { if (!keep) *c = v; }
  } restore{&next_drive_, counter};
  if (id.empty()) id = next_id("pd", &next_drive_, &ControlPlane::drive_taken);
  std::string path = type == DriveType::Null ? "null:" + id : q.path();
  for (auto& [oid, d] : drives_)
    if (d.r.path() == path) return exists(path + " is already registered as " + oid);
  // The same file or device under another name (before opening: a block
  // device held exclusively would only say "busy").
  if (type != DriveType::Null)
    if (auto s = refuse_registered(identify_path(path), path); !s.ok()) return s;
  // An NVMe namespace: identified, its format checked, recorded by stable id.
  v1::NvmeIdentity nvme;
  // (A passthrough drive, /dev/ngXnY, through its namespace's block device.)
  if (type == DriveType::Block || type == DriveType::NvmeChar)
    if (auto s = nvme_admit(type == DriveType::Block ? path : nvme_block_twin(path), &nvme); !s.ok()) return s;
  // Creating means "a new drive": never over a file that exists. A file
  // created here is removed again if the add fails from here on.
  CreatedFile created;
  if (size && (type == DriveType::File || type == DriveType::Mem)) {
    const int rc = created.create(path);
    if (rc == -EEXIST && type == DriveType::File)
      return exists(path + " already exists: add it without a size to use it as it is");
    if (rc != 0 && rc != -EEXIST) return precondition("cannot create " + path + ": " + strerror(-rc));
  }
  std::string err;
  auto drive = Drive::open(DriveSpec{type, path, size, size != 0}, &err);
  if (!drive) return precondition(err);
  if (drive->size_bytes() < min) {
    return precondition(path + " holds " + format_size(drive->size_bytes()) + ", less than the minimum " +
                        format_size(min));
  }
  DriveRec& d = drives_[id];
  d.r.set_id(id);
  d.r.set_path(path);
  d.r.set_type(drive_type_to_api(type));
  d.r.set_size_bytes(drive->size_bytes());
  d.r.set_role(v1::DRIVE_ROLE_FREE);
  d.r.set_member_index(-1);
  if (!nvme.stable_id().empty()) *d.r.mutable_nvme() = nvme;
  d.drive = std::move(drive);
  // Nothing else changed yet: a registry that cannot be saved undoes the add.
  if (!persist(&err)) {
    drives_.erase(id);
    spdlog::error("cannot save the registry: {}", err);
    return {grpc::StatusCode::INTERNAL, "the registry could not be saved (" + err + "): " + path + " was not added"};
  }
  restore.keep = true;
  created.keep();
  drive_to_api(d, out);
  publish(v1::EVENT_KIND_DRIVE_ADDED,
          path + " (" + format_size(d.r.size_bytes()) +
              (nvme.stable_id().empty() ? "" : ", NVMe " + nvme.stable_id() + ", " + std::to_string(nvme.lba_bytes()) + " B blocks") + ")",
          "", "", id);
  return grpc::Status::OK;
}

// A member of a group that is not assembled: its drive is there (offline
// with its group), not found at start (missing), or failed before.
v1::DriveState ControlPlane::offline_member_state(const DriveRec* d) {
  if (!d || d->missing) return v1::DRIVE_STATE_MISSING;
  return d->r.failed() ? v1::DRIVE_STATE_FAILED : v1::DRIVE_STATE_OFFLINE;
}

DriveIdentity ControlPlane::identity_of(const DriveRec& d) const {
  if (d.drive) return d.drive->identity();
  // A null drive has no storage; a missing one's recorded path may name
  // another device by now (an NVMe namespace is found by stable id).
  if (d.missing || d.r.type() == v1::DRIVE_TYPE_NULL) return {};
  return identify_path(d.r.path());
}

grpc::Status ControlPlane::refuse_registered(const DriveIdentity& id, const std::string& path) const {
  for (auto& [oid, d] : drives_) {
    const std::string why = shared_storage(id, path, identity_of(d), oid + " (" + d.r.path() + ")");
    if (!why.empty()) return exists(why + ": one drive is one PD, and this one is already registered as " + oid);
  }
  return grpc::Status::OK;
}

grpc::Status ControlPlane::list_drives(v1::ListDrivesResponse* out) {
  std::lock_guard<std::mutex> g(mu_);
  for (auto& [id, d] : drives_) drive_to_api(d, out->add_drives());
  return grpc::Status::OK;
}

grpc::Status ControlPlane::get_drive(const v1::DriveRef& q, v1::Drive* out) {
  std::lock_guard<std::mutex> g(mu_);
  DriveRec* d;
  if (auto s = find_drive(q.id(), &d); !s.ok()) return s;
  drive_to_api(*d, out);
  return grpc::Status::OK;
}

grpc::Status ControlPlane::remove_drive(const v1::DriveRef& q) {
  std::lock_guard<std::mutex> g(mu_);
  DriveRec* d;
  if (auto s = find_drive(q.id(), &d); !s.ok()) return s;
  if (d->r.role() == v1::DRIVE_ROLE_MEMBER)
    return precondition(q.id() + " is member " + std::to_string(d->r.member_index()) + " of " + d->r.group() +
                        ": replace it (gpuraid dg replace) or delete the group first");
  if (d->r.role() == v1::DRIVE_ROLE_SPARE)
    return precondition(q.id() + " is a spare: unspare it first (gpuraid pd unspare " + q.id() + ")");
  std::string path = d->r.path();
  drives_.erase(q.id());
  publish(v1::EVENT_KIND_DRIVE_REMOVED, path, "", "", q.id());
  return persist_status();
}

grpc::Status ControlPlane::fail_drive(const v1::DriveRef& q, v1::Drive* out) {
  std::lock_guard<std::mutex> g(mu_);
  DriveRec* d;
  if (auto s = find_drive(q.id(), &d); !s.ok()) return s;
  if (d->r.role() == v1::DRIVE_ROLE_MEMBER) {
    GroupRec* gr;
    if (auto s = online_group(d->r.group(), &gr); !s.ok()) return s;
    for (const auto& m : gr->g->members())
      if (int(m.index) == d->r.member_index() && m.state == MemberState::Failed)
        return precondition(q.id() + " is already failed");
    std::string err;
    if (!gr->g->fail_member(uint32_t(d->r.member_index()), &err)) return precondition(err);
    d->r.set_failed(true);
    sync_members(*gr);
  } else {
    if (d->r.role() == v1::DRIVE_ROLE_SPARE)
      return precondition(q.id() + " is a spare: unspare it first, then fail it");
    if (d->r.failed()) return precondition(q.id() + " is already failed");
    d->r.set_failed(true);
    d->drive.reset();
    d->note = "failed by the operator";
  }
  drive_to_api(*d, out);
  return persist_status();
}

// A dedicated spare back to the daemon: its group's slot released (and the
// members' superblocks say so), its metadata wiped. An offline group's
// spare just leaves the record (its superblock is wiped here).
grpc::Status ControlPlane::unspare_dedicated(DriveRec& d) {
  const std::string& gname = d.r.group();
  auto it = groups_.find(gname);
  std::string err;
  std::unique_ptr<Drive> drive;
  if (it != groups_.end() && it->second.g) {
    drive = it->second.g->remove_spare(d.r.path(), &err);
    if (!drive) return precondition("cannot take " + d.r.id() + " from " + gname + ": " + err);
    if (!err.empty()) d.note = err;  // out of the group, but not wiped
  } else {
    drive = reopen(d, &err);
    bool wiped;
    if (drive && !wipe_metadata_of(d, *drive, &wiped).ok()) d.note = "may still hold the spare superblock of " + gname;
  }
  if (it != groups_.end()) {
    auto* spares = it->second.r.mutable_spares();
    for (int i = 0; i < spares->size(); i++)
      if (spares->Get(i) == d.r.id()) {
        spares->erase(spares->begin() + i);
        break;
      }
  }
  publish(v1::EVENT_KIND_SPARE_REMOVED, d.r.id() + " is no longer a spare of " + gname, gname, "", d.r.id());
  d.r.set_group("");
  d.drive = std::move(drive);
  d.missing = !d.drive;
  return grpc::Status::OK;
}

grpc::Status ControlPlane::set_drive_spare(const v1::SetDriveSpareRequest& q, v1::Drive* out) {
  std::lock_guard<std::mutex> g(mu_);
  DriveRec* d;
  if (auto s = find_drive(q.id(), &d); !s.ok()) return s;
  if (!q.spare()) {
    if (!q.group().empty()) return invalid("a group is only given when making a spare");
    if (d->r.role() != v1::DRIVE_ROLE_SPARE) return precondition(q.id() + " is not a spare");
    if (!d->r.group().empty()) {
      if (auto s = unspare_dedicated(*d); !s.ok()) return s;
    }
    d->r.set_role(v1::DRIVE_ROLE_FREE);
    drive_to_api(*d, out);
    return persist_status();
  }
  if (d->r.role() == v1::DRIVE_ROLE_SPARE) return precondition(q.id() + " is already a spare");
  if (d->r.role() != v1::DRIVE_ROLE_FREE) return precondition(q.id() + " is a member of " + d->r.group());
  if (d->r.failed() || !d->drive) return precondition(q.id() + " is failed or missing");
  // A null drive stores nothing: a rebuild onto it would only look done.
  if (d->drive->type() == DriveType::Null)
    return precondition(q.id() + " is a null drive (it stores nothing): a spare must be a real drive");
  if (q.group().empty()) {
    std::string what;
    if (!q.force() && DriveGroup::holds_data(*d->drive, &what))
      return precondition(q.id() + " holds " + what + ": give --force to use it anyway");
    d->r.set_role(v1::DRIVE_ROLE_SPARE);
    // A degraded group waiting for a drive (a failed member, no spare of
    // its own, no rebuild) takes it at once, as after a failure (md's add to
    // a degraded array); the others wait for their next failure.
    for (auto& [name, gr] : groups_)
      if (gr.g && d->r.group().empty() && d->r.role() == v1::DRIVE_ROLE_SPARE) take_pool_spare_for_failed(gr);
    drive_to_api(*d, out);
    return persist_status();
  }
  GroupRec* gr;
  if (auto s = online_group(q.group(), &gr); !s.ok()) return s;
  Level level;
  if (level_from_api(gr->r.level(), &level) && !level_description(level).spares)
    return precondition(q.group() + " is " + level_description(level).name + ": it has no redundancy, so a spare could never take over a member "
                         "(a failure fails the group)");
  std::string err;
  auto drive = std::move(d->drive);
  if (!gr->g->add_spare(std::move(drive), q.force(), &err)) {
    std::string e2;
    d->drive = reopen(*d, &e2);
    return precondition(err);
  }
  d->r.set_role(v1::DRIVE_ROLE_SPARE);
  d->r.set_group(gr->r.name());
  gr->r.add_spares(q.id());
  drive_to_api(*d, out);
  return persist_status();
}

}  // namespace gpuraid::daemon
