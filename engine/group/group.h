// A drive group as operators know it: a Volume plus everything that makes
// it survive — superblocks on every member (reassembly after a restart),
// a write-intent bitmap (resync after an unclean stop), member states,
// rebuild onto replacements and spares, scrub, background init.
//
// Threading: control calls (create, assemble, replace, start_scrub, ...)
// come from one control thread. Background work (init, resync, rebuild,
// scrub) runs as a state machine on the reactor given to
// start_background(); whoever owns that reactor keeps polling it. I/O from
// any reactor goes through volume() as usual.
#pragma once
#include <cerrno>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "engine/group/volume_table.h"
#include "engine/volume.h"

namespace gpuraid {

enum class MemberState : uint8_t { Active = 0, Failed = 1, Rebuilding = 2, Missing = 3 };

// One state, by precedence: Failed (past what the level survives) >
// Degraded (a member failed or missing that no rebuild is restoring) >
// Rebuilding > Resyncing (dirty regions of an unclean stop) > Initializing
// (background init) > Optimal. docs/STATES.md says what each means; the
// words operators read come from the API (proto/api_words.h), not from here.
enum class GroupState : uint8_t { Optimal, Degraded, Rebuilding, Failed, Initializing, Resyncing };

// How much redundancy a group has now (docs/STATES.md): Full (healthy and
// consistent), Reduced (members failed, missing or rebuilding), None (the
// level has none: RAID 0), Pending (init or resync still making parity or
// mirrors consistent), Lost (the group failed).
enum class Redundancy : uint8_t { Full, Reduced, None, Pending, Lost };

struct GroupConfig {
  std::string name;                           // operator's name for the group (stored in the superblock)
  Level level = Level::R5;
  uint32_t parity = 0;                        // ec only
  uint32_t subgroups = 0;                     // raid50/60 only: G (members divide into G sub-groups)
  DeclusteredShape declustered;               // draid5/6 only: data strips per stripe, spares per row
  uint32_t strip_bytes = 64 * 1024;
  uint64_t bitmap_region_bytes = 64ull << 20; // write-intent bitmap granularity (of member data)
  uint32_t bitmap_idle_ms = 5000;             // a region's bit is cleared after this long without writes
  bool force = false;                         // overwrite drives that hold signatures
  // Members are known to read zeroes (new sparse files, deallocated
  // NVMe with DLFEAT): consistent at once, no background init.
  bool assume_zeroed = false;
  // Write-hole guard (RAID 5/6/ec): partial parity logged before each
  // stripe write, so an unclean stop while degraded starts by itself.
  // Off: faster writes, and such a stop needs force (as before version 2).
  bool write_hole_guard = true;
};

struct Progress {
  bool running = false;
  bool paused = false;
  double fraction = 0;        // 0..1
  double rate_bytes_s = 0;    // recent rate
  double eta_s = 0;
  uint64_t done_bytes = 0, total_bytes = 0;
};

struct ScrubReport {
  uint64_t stripes_checked = 0;
  uint64_t mismatched_stripes = 0;
  uint64_t repaired_stripes = 0;         // the wrong strip known and rewritten
  uint64_t made_consistent_stripes = 0;  // rewritten unverified (which side was right is unknown)
  std::vector<uint64_t> mismatch_stripes;   // first few, for the operator
  std::vector<int> located_members;         // RAID 6/ec: member found corrupt per mismatch (-1: not located)
};

struct GroupEvent {
  enum Kind {
    MemberFailed, SpareTaken, RebuildStarted, RebuildProgress, RebuildFinished, ResyncStarted,
    ResyncFinished, InitStarted, InitFinished, ScrubStarted, ScrubProgress, ScrubFinished,
    MismatchFound, GroupFailed, MemberMissing, MemberReturned, MemberResynced,
    SpareFailed,  // a spare cannot take its metadata (or take over): it left the group
    ReplaceStarted, ReplaceFinished,  // hot replace (hot_replace.cpp): the copy began; the swap (or its end)
    ReadCorrected,      // a block a member could not read was read around and written back (Volume::may_correct)
    ReadUncorrectable   // one that could not be rebuilt: the I/O failed, the member stays (Volume::needs_member)
  } kind;
  int member = -1;
  std::string message;
  // The group's data bytes the event is about, where it names some (a
  // rebuild stopped at a run of stripes): the daemon names the virtual
  // drives over them. data_bytes 0: none.
  uint64_t data_offset = 0, data_bytes = 0;
};
const char* group_event_name(GroupEvent::Kind k);

// What starting a group stopped uncleanly while degraded risks (the write
// hole): stripes of dirty regions whose parity may be stale, and the data
// of unusable members there, which is reconstructed from that parity.
struct StaleParity {
  uint64_t regions = 0;     // dirty regions
  uint64_t stripes = 0;     // stripes in them
  uint64_t bytes = 0;       // data bytes of unusable members in those stripes (may read wrong)
  uint64_t members = 0;     // the unusable members (mask)
  std::string describe() const;
};

// How a member came back (Group::readd_member).
struct ReaddResult {
  bool partial = false;     // only the regions written since it left are rebuilt
  uint64_t regions = 0;     // partial: those regions
  uint64_t bytes = 0;       // member data to rebuild at most (partial: the regions' bytes)
  std::string how;          // for the operator: what is rebuilt and why
};

// MemberInfo::path of a member rebuilt into a declustered group's distributed spare room.
constexpr const char* kRoomPath = "(distributed spare room)";
struct MemberInfo {
  uint32_t index = 0;
  std::string path;
  std::string uuid;
  MemberState state = MemberState::Active;
  uint64_t rebuild_checkpoint_bytes = 0;    // member data rebuilt so far (Rebuilding)
};

class Group {
 public:
  struct Impl;
  ~Group();
  // Refuses drives that hold a filesystem, partition table, RAID or
  // gpuraid signature unless cfg.force; writes the superblocks. The group
  // is consistent at once when cfg.assume_zeroed, else it initializes in
  // the background (I/O allowed and correct meanwhile).
  static std::unique_ptr<Group> create(Engine& engine, std::vector<std::unique_ptr<Drive>> members,
                                       const GroupConfig& cfg, std::string* err);
  // Reassembles from the drives' superblocks alone: any order, any paths;
  // the highest consistent generation wins; stale members are treated as
  // failed. Refuses (changing nothing on disk) corrupt superblocks, newer
  // format versions, members of different groups, too few members.
  // *note says when it starts degraded or must resync.
  // An array stopped uncleanly while degraded may hold stale parity in its
  // dirty regions (the write hole): refused unless force.
  // With force it starts anyway; forced_stale() then says what that risks.
  // A drive of the group that the newest member table no longer lists (a
  // member replaced since its superblock was written) is refused too, unless
  // `unlisted` is given: then it goes there, untouched, and the group starts.
  static std::unique_ptr<Group> assemble(Engine& engine, std::vector<std::unique_ptr<Drive>> drives,
                                         std::string* note, std::string* err, bool force = false,
                                         std::vector<std::unique_ptr<Drive>>* unlisted = nullptr);
  // Set when assemble(force) started over stale parity; empty otherwise.
  const StaleParity& forced_stale() const;

  Volume& volume() { return *volume_; }
  Impl& impl() { return *impl_; }  // engine-internal
  const std::string& uuid() const { return uuid_; }
  const std::string& name() const { return name_; }
  const Geometry& geometry() const { return volume_->geometry(); }
  GroupState state() const;
  std::vector<MemberInfo> members() const;
  uint64_t generation() const;

  void set_event_handler(std::function<void(const GroupEvent&)> h);
  // Runs init/resync/rebuild/scrub on reactor r (its owner keeps polling).
  void start_background(Reactor& r);

  // Operator actions. Each returns false with *err and changes nothing on refusal.
  // Also a missing member; code: the reason the events give (default: the operator).
  bool fail_member(uint32_t index, std::string* err, int code = -ECANCELED);
  bool replace_member(uint32_t index, std::unique_ptr<Drive> drive, bool force, std::string* err);
  // Hot replace (mdadm --replace; hot_replace.cpp): copies a working member
  // onto `drive` while it keeps serving, redundancy kept, then swaps it in:
  // the member leaves its old drive and resumes on the new one, where only
  // the regions written during the copy (the bitmap tracked them) are
  // rebuilt; the old drive leaves the group, its metadata wiped. Should the
  // member fail during the copy, the new drive takes its place by a full
  // rebuild. Refused while a rebuild or another replace runs.
  bool hot_replace(uint32_t index, std::unique_ptr<Drive> drive, bool force, std::string* err);
  Progress replace_progress() const;  // the copy
  int replacing_member() const;       // -1: none
  // The drive the last hot replace moved its member off (healthy, out of
  // the group, its metadata wiped): its path, or "" when none did.
  std::string hot_replace_left() const;
  bool add_spare(std::unique_ptr<Drive> drive, bool force, std::string* err);
  size_t spare_count() const;
  // Takes the spare on `path` out of the group (its slot released and
  // persisted, its metadata wiped) and hands its drive back. *err set with a
  // drive returned: out of the group, but its metadata could not be wiped.
  std::unique_ptr<Drive> remove_spare(const std::string& path, std::string* err);
  // Starts the rebuild of a failed member onto a spare now.
  bool rebuild_onto_spare(std::string* err);
  // A rebuild that stopped (at a block nothing rebuilds, since written
  // over; at a parity backend's error) goes on from where it stopped, as
  // the next assembly would. True too where one runs; refused where no
  // member is rebuilding.
  bool restart_rebuild(std::string* err);
  // A failed (or missing) member's drive back into its slot (mdadm --re-add).
  // With `drive`, that drive object replaces the one the group holds (which
  // may be a stand-in for a member absent at assembly); without, the group's
  // own. When the drive still carries this member's superblock and the
  // write-intent bitmap has tracked every region written since it left (it
  // left while this group ran), only those regions are rebuilt; otherwise it
  // is rebuilt in full and out->how says why. A drive that holds something
  // else is refused unless force.
  bool readd_member(uint32_t index, std::unique_ptr<Drive> drive, bool force, ReaddResult* out, std::string* err);
  // Zeroes a failed member's metadata area (a re-add is then in full).
  bool wipe_failed_member(uint32_t index, std::string* err);
  bool start_scrub(bool repair, std::string* err);
  void pause_rebuild(bool paused);
  void pause_scrub(bool paused);
  void stop_scrub();
  void set_rebuild_rate(uint64_t bytes_per_s);  // 0 = unlimited
  // While the volume serves foreground I/O, rebuild, resync and init are
  // held to this rate (md's speed_limit_min; set_rebuild_rate is its
  // speed_limit_max); 0 = not held.
  void set_rebuild_min_rate(uint64_t bytes_per_s);
  void set_scrub_rate(uint64_t bytes_per_s);

  Progress rebuild_progress() const;
  Progress resync_progress() const;
  Progress init_progress() const;
  Progress scrub_progress() const;
  ScrubReport last_scrub() const;
  // *failures_tolerated: further member failures survived now, whichever
  // members fail (0 unless Full or Reduced).
  Redundancy redundancy(uint32_t* failures_tolerated = nullptr) const;
  bool redundancy_claimed() const { return redundancy() == Redundancy::Full; }

  // Path loss (path_loss.cpp). A member whose path is lost but may come
  // back is "missing": I/O serves degraded and the write-intent bitmap
  // keeps every region written meanwhile dirty. When it returns, only those
  // regions are rebuilt onto it; past the missing timeout it is failed (and
  // a spare takes over).
  // Decides, on a member I/O error, whether the path is lost (true: the
  // member goes missing) or the drive is dead. Called on reactor threads.
  void set_path_policy(std::function<bool(uint32_t member, int err)> lost);
  void set_missing_timeout_ms(uint64_t ms);  // default 60 s
  bool mark_member_missing(uint32_t index, std::string* err);
  // The member's path is back: checks that the drive still carries this
  // member's superblock, then rebuilds the regions it missed.
  bool reinstate_member(uint32_t index, std::string* err);
  uint64_t missing_mask() const { return volume_->missing_mask(); }

  // The group's virtual drives, kept on its members too (volume_table.h,
  // for dg import): written to every usable member and spare with the next
  // generation. False with *err naming the drives that could not take it
  // (the others hold it).
  bool write_volume_table(const std::vector<VolumeEntry>& volumes, std::string* err);

  // Clean shutdown: waits for background steps in flight, flushes, clears
  // the bitmap and marks every superblock clean.
  bool stop(std::string* err);

 private:
  Group();
  std::unique_ptr<Impl> impl_;
  std::unique_ptr<Volume> volume_;
  std::string uuid_, name_;
};

// Whether a device or file holds data that a new group would destroy
// (filesystem, partition table, RAID member, gpuraid superblock), by
// libblkid; *what names it. Errors reading count as "holds data".
bool drive_holds_data(Drive& d, std::string* what);

}  // namespace gpuraid
