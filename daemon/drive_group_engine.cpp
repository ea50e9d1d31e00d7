// DriveGroup on engine/group's Group: a thin forwarder.
#include "daemon/drive_group.h"
#include "engine/group/metadata_io.h"

namespace gpuraid::daemon {

namespace {
class EngineGroup final : public DriveGroup {
 public:
  explicit EngineGroup(std::unique_ptr<Group> g) : g_(std::move(g)) {}
  Volume& volume() override { return g_->volume(); }
  std::string uuid() const override { return g_->uuid(); }
  GroupState state() const override { return g_->state(); }
  std::vector<MemberInfo> members() const override { return g_->members(); }
  uint64_t generation() const override { return g_->generation(); }
  void set_event_handler(std::function<void(const GroupEvent&)> h) override { g_->set_event_handler(std::move(h)); }
  void start_background(Reactor& r) override { g_->start_background(r); }
  bool fail_member(uint32_t i, std::string* err, int code = -ECANCELED) override { return g_->fail_member(i, err, code); }
  bool replace_member(uint32_t i, std::unique_ptr<Drive> d, bool force, std::string* err) override {
    return g_->replace_member(i, std::move(d), force, err);
  }
  bool add_spare(std::unique_ptr<Drive> d, bool force, std::string* err) override {
    return g_->add_spare(std::move(d), force, err);
  }
  size_t spare_count() const override { return g_->spare_count(); }
  std::unique_ptr<Drive> remove_spare(const std::string& path, std::string* err) override {
    return g_->remove_spare(path, err);
  }
  bool rebuild_onto_spare(std::string* err) override { return g_->rebuild_onto_spare(err); }
  bool restart_rebuild(std::string* err) override { return g_->restart_rebuild(err); }
  bool readd_member(uint32_t i, std::unique_ptr<Drive> d, bool force, ReaddResult* out, std::string* err) override {
    return g_->readd_member(i, std::move(d), force, out, err);
  }
  bool wipe_failed_member(uint32_t i, std::string* err) override { return g_->wipe_failed_member(i, err); }
  StaleParity forced_stale() const override { return g_->forced_stale(); }
  bool start_scrub(bool repair, std::string* err) override { return g_->start_scrub(repair, err); }
  void pause_rebuild(bool p) override { g_->pause_rebuild(p); }
  void pause_scrub(bool p) override { g_->pause_scrub(p); }
  void stop_scrub() override { g_->stop_scrub(); }
  void set_rebuild_rate(uint64_t r) override { g_->set_rebuild_rate(r); }
  void set_rebuild_min_rate(uint64_t r) override { g_->set_rebuild_min_rate(r); }
  void set_scrub_rate(uint64_t r) override { g_->set_scrub_rate(r); }
  Progress rebuild_progress() const override { return g_->rebuild_progress(); }
  Progress resync_progress() const override { return g_->resync_progress(); }
  Progress init_progress() const override { return g_->init_progress(); }
  Progress scrub_progress() const override { return g_->scrub_progress(); }
  Progress replace_progress() const override { return g_->replace_progress(); }
  bool hot_replace(uint32_t i, std::unique_ptr<Drive> d, bool force, std::string* err) override {
    return g_->hot_replace(i, std::move(d), force, err);
  }
  int replacing_member() const override { return g_->replacing_member(); }
  bool write_volume_table(const std::vector<VolumeEntry>& v, std::string* err) override {
    return g_->write_volume_table(v, err);
  }
  std::string hot_replace_left() const override { return g_->hot_replace_left(); }
  ScrubReport last_scrub() const override { return g_->last_scrub(); }
  Redundancy redundancy(uint32_t* tolerated) const override { return g_->redundancy(tolerated); }
  bool stop(std::string* err) override { return g_->stop(err); }
  void set_path_policy(std::function<bool(uint32_t, int)> lost) override { g_->set_path_policy(std::move(lost)); }
  void set_missing_timeout_ms(uint64_t ms) override { g_->set_missing_timeout_ms(ms); }
  bool mark_member_missing(uint32_t i, std::string* err) override { return g_->mark_member_missing(i, err); }
  bool reinstate_member(uint32_t i, std::string* err) override { return g_->reinstate_member(i, err); }

 private:
  std::unique_ptr<Group> g_;
};
}  // namespace

bool DriveGroup::resilient() { return true; }
uint64_t DriveGroup::metadata_bytes() { return kMetadataBytes; }

std::unique_ptr<DriveGroup> DriveGroup::create(Engine& e, std::vector<std::unique_ptr<Drive>> members,
                                               const GroupConfig& cfg, std::string* err) {
  auto g = Group::create(e, std::move(members), cfg, err);
  return g ? std::make_unique<EngineGroup>(std::move(g)) : nullptr;
}

std::unique_ptr<DriveGroup> DriveGroup::assemble(Engine& e, std::vector<std::unique_ptr<Drive>> drives,
                                                 const AssembleHint& hint, std::string* note, std::string* err) {
  auto g = Group::assemble(e, std::move(drives), note, err, hint.force, hint.unlisted);
  return g ? std::make_unique<EngineGroup>(std::move(g)) : nullptr;
}

bool DriveGroup::probe(Drive& d, std::string* group_uuid, std::string* member_uuid) {
  SuperblockRead r = read_superblock(d);
  if (!r.ok) return false;
  *group_uuid = uuid_str(r.sb.group_uuid);
  *member_uuid = uuid_str(r.sb.member_uuid);
  return true;
}

bool DriveGroup::read_member(Drive& d, MemberOnDisk* out, std::string* why) {
  const SuperblockRead r = read_superblock(d);
  if (!r.ok) return *why = r.any_magic ? r.why() : "no gpuraid superblock", false;
  out->group_uuid = uuid_str(r.sb.group_uuid);
  out->member_uuid = uuid_str(r.sb.member_uuid);
  out->name = r.sb.name;
  out->cfg.level = r.sb.level;
  out->cfg.parity = r.sb.parity;  // parity rows, as the registry records them
  out->cfg.strip_bytes = r.sb.strip_bytes;
  out->cfg.subgroups = r.sb.subgroups > 1 ? r.sb.subgroups : 0;
  out->cfg.declustered = r.sb.declustered;
  out->cfg.name = r.sb.name;
  out->slot = r.sb.slot;
  out->members = r.sb.members;
  out->generation = r.sb.generation;
  return true;
}

bool DriveGroup::read_volumes(Drive& d, VolumeTable* out) {
  std::string why;
  return read_volume_table(d, out, &why);
}

bool DriveGroup::holds_data(Drive& d, std::string* what) { return drive_holds_data(d, what); }

bool DriveGroup::erase(Drive& d, std::string* err) { return wipe_metadata(d, err); }

bool DriveGroup::has_metadata(Drive& d, std::string* group_uuid) {
  const SuperblockRead r = read_superblock(d);
  *group_uuid = r.ok ? uuid_str(r.sb.group_uuid) : "";
  return r.any_magic;
}

}  // namespace gpuraid::daemon
