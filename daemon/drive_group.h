// The one seam between the control plane and the engine's drive groups
// (engine/group: superblocks, reassembly, bitmap, rebuild, spares, scrub).
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "engine/group/group.h"
#include "engine/volume.h"

namespace gpuraid::daemon {

// What the registry recorded about a group, checked against what assembly finds.
struct AssembleHint {
  GroupConfig cfg;
  std::string uuid;
  bool force = false;  // start even over stale parity (stopped uncleanly while degraded)
  // Where drives of the group that it no longer lists go (a member replaced
  // after the registry was last saved); null: they fail the assembly.
  std::vector<std::unique_ptr<Drive>>* unlisted = nullptr;
};

// What a drive's superblock says it is (dg import).
struct MemberOnDisk {
  std::string group_uuid, member_uuid, name;
  GroupConfig cfg;           // level, parity rows, strip, sub-groups, name
  uint32_t slot = 0;         // < members: a member; else a spare
  uint32_t members = 0;
  uint64_t generation = 0;
};

class DriveGroup {
 public:
  virtual ~DriveGroup() = default;
  // Whether this build has resilient groups (engine/group).
  static bool resilient();
  static std::unique_ptr<DriveGroup> create(Engine& e, std::vector<std::unique_ptr<Drive>> members,
                                            const GroupConfig& cfg, std::string* err);
  // Drives in any order: members are matched by their superblocks.
  static std::unique_ptr<DriveGroup> assemble(Engine& e, std::vector<std::unique_ptr<Drive>> drives,
                                              const AssembleHint& hint, std::string* note, std::string* err);
  // The group and member UUID written on a drive; false when it has none.
  static bool probe(Drive& d, std::string* group_uuid, std::string* member_uuid);
  // The superblock of a drive (dg import); false with *why when it has none.
  static bool read_member(Drive& d, MemberOnDisk* out, std::string* why);
  // The newest volume table on a drive (volume_table.h); false when none.
  static bool read_volumes(Drive& d, VolumeTable* out);
  // Whether a drive holds data a group would destroy (*what names it).
  static bool holds_data(Drive& d, std::string* what);
  // Wipes the group metadata (superblocks, bitmap) of a drive that left its group.
  static bool erase(Drive& d, std::string* err);
  // Whether a drive carries gpuraid metadata (a superblock copy, valid or
  // not); *group_uuid: its group when a copy is valid, else "".
  static bool has_metadata(Drive& d, std::string* group_uuid);
  // Bytes at the start of every member that the group keeps for metadata.
  static uint64_t metadata_bytes();

  virtual Volume& volume() = 0;
  virtual std::string uuid() const = 0;
  virtual GroupState state() const = 0;
  virtual std::vector<MemberInfo> members() const = 0;
  virtual uint64_t generation() const = 0;
  virtual void set_event_handler(std::function<void(const GroupEvent&)> h) = 0;
  virtual void start_background(Reactor& r) = 0;
  virtual bool fail_member(uint32_t index, std::string* err, int code = -ECANCELED) = 0;
  virtual bool replace_member(uint32_t index, std::unique_ptr<Drive> d, bool force, std::string* err) = 0;
  // Hot replace of a working member (Group::hot_replace).
  virtual bool hot_replace(uint32_t index, std::unique_ptr<Drive> d, bool force, std::string* err) = 0;
  virtual int replacing_member() const = 0;
  virtual bool write_volume_table(const std::vector<VolumeEntry>& v, std::string* err) = 0;
  virtual std::string hot_replace_left() const = 0;
  virtual bool add_spare(std::unique_ptr<Drive> d, bool force, std::string* err) = 0;
  virtual size_t spare_count() const = 0;
  // Ways back (see Group): a spare taken out, a rebuild onto a spare now, a
  // failed member's drive put back, a failed member's metadata wiped, and
  // what a forced assembly risked.
  virtual std::unique_ptr<Drive> remove_spare(const std::string& path, std::string* err) = 0;
  virtual bool rebuild_onto_spare(std::string* err) = 0;
  virtual bool restart_rebuild(std::string* err) = 0;  // a stopped one, from where it stopped
  virtual bool readd_member(uint32_t index, std::unique_ptr<Drive> d, bool force, ReaddResult* out,
                            std::string* err) = 0;
  virtual bool wipe_failed_member(uint32_t index, std::string* err) = 0;
  virtual StaleParity forced_stale() const = 0;
  virtual bool start_scrub(bool repair, std::string* err) = 0;
  virtual void pause_rebuild(bool paused) = 0;
  virtual void pause_scrub(bool paused) = 0;
  virtual void stop_scrub() = 0;
  virtual void set_rebuild_rate(uint64_t bytes_per_s) = 0;
  virtual void set_rebuild_min_rate(uint64_t bytes_per_s) = 0;  // held to it under foreground I/O
  virtual void set_scrub_rate(uint64_t bytes_per_s) = 0;
  virtual Progress rebuild_progress() const = 0;
  virtual Progress resync_progress() const = 0;
  virtual Progress init_progress() const = 0;
  virtual Progress scrub_progress() const = 0;
  virtual Progress replace_progress() const = 0;
  virtual ScrubReport last_scrub() const = 0;
  virtual Redundancy redundancy(uint32_t* failures_tolerated) const = 0;
  virtual bool stop(std::string* err) = 0;
  // Path loss (see Group): what an I/O error means, how long a member may
  // be missing, and the transitions the daemon sees in sysfs.
  virtual void set_path_policy(std::function<bool(uint32_t member, int err)> lost) = 0;
  virtual void set_missing_timeout_ms(uint64_t ms) = 0;
  virtual bool mark_member_missing(uint32_t index, std::string* err) = 0;
  virtual bool reinstate_member(uint32_t index, std::string* err) = 0;
};

}  // namespace gpuraid::daemon
