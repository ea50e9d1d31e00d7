// Group internals shared by group*.cpp (not part of the public API).
#pragma once
#include <array>
#include <atomic>
#include <mutex>
#include <thread>

#include "engine/group/background.h"
#include "engine/group/group.h"
#include "engine/group/progress_rate.h"
#include "engine/group/superblock.h"
#include "engine/group/write_intent.h"
#include "engine/ppl/ppl_log.h"

namespace gpuraid {

struct Group::Impl {
  explicit Impl(Engine& e) : engine(e) {}
  Engine& engine;
  Group* self = nullptr;
  Volume* vol = nullptr;
  mutable std::mutex mu;  // sb and drives; never held while calling into Volume's failure paths
  Superblock sb;
  std::vector<std::unique_ptr<Drive>> drives;   // per slot (kMaxSlots); members 0..n-1, spares above
  std::vector<std::unique_ptr<Drive>> retired;  // replaced drives, kept while I/O may still name them
  std::unique_ptr<WriteIntent> wi;
  std::unique_ptr<BackgroundWork> bg;
  std::unique_ptr<PplLog> ppl;  // write-hole guard (kFlagWriteHoleGuard), or null
  // Before a drive becomes a member being rebuilt: its guard log forgets
  // what it held (entries of stripes written while it was away are stale).
  bool forget_ppl(Drive& d, std::string* err);
  // A drive about to take a member in full (a replacement, a copy-back):
  // its guard log forgets what it held and its bitmap is clear. *err names
  // `who` where the log cannot be written.
  bool blank_member_metadata(Drive& d, const std::string& who, std::string* err);

  std::mutex ev_mu;
  std::function<void(const GroupEvent&)> on_event;
  std::vector<GroupEvent> early_events;  // kept until a handler is set

  std::thread housekeeper;
  std::atomic<bool> hk_stop{false};
  // Members to hand to the distributed spare room or a spare drive at the
  // next housekeeping tick (one at a time, none while a rebuild runs): those
  // that failed while the group ran, not those merely absent at its start.
  std::atomic<uint64_t> auto_replace{0};
  std::atomic<bool> rebuild_finished{false}, init_finished{false}, resync_finished{false};
  std::atomic<int> rebuild_failed_err{0};
  // The run of stripes the rebuild stopped at (set before rebuild_failed_err).
  std::atomic<uint64_t> rebuild_failed_first{0};
  std::atomic<uint32_t> rebuild_failed_stripes{0};
  std::atomic<int> rebuild_slot{-1};
  std::atomic<bool> initialized{false};
  // This start replayed the write-hole log over the dirty regions of an
  // unclean stop, every member usable: each stripe a write was torn in is
  // consistent again, so their parity stands for the data before their
  // resync reaches them (the resync runs anyway). Set before I/O starts.
  bool dirty_replayed = false;
  // Some dirty regions were never made consistent by a log (kFlagDirtyUntrusted):
  // kept on disk until their resync ends (housekeeping clears it).
  std::atomic<bool> dirty_untrusted{false};
  uint64_t persisted_rebuild_cp = 0, persisted_init_cp = 0;
  uint64_t bitmap_idle_ns = 5'000'000'000ull;
  ProgressRate rates[int(Work::kCount)];

  mutable std::mutex scrub_mu;
  ScrubReport scrub_report;

  // Path loss (path_loss.cpp).
  std::mutex policy_mu;
  std::function<bool(uint32_t, int)> path_policy;
  std::atomic<uint64_t> missing_timeout_ns{60'000'000'000ull};
  std::array<std::atomic<uint64_t>, kMaxMembers> missing_deadline_ns{};
  std::atomic<bool> partial_rebuild{false};  // the rebuild running is of a member back (path loss, re-add)
  uint64_t resync_written0 = 0, resync_skipped0 = 0, resync_missed_regions = 0;
  // Per member (under mu): the generation of its own superblock when it left
  // an active slot (failed or missing) while this group ran; from then on
  // the bitmap tracks every region written, so its drive lacks only those.
  // 0: not known (it left before assembly, or during a full rebuild): a
  // re-add rebuilds it in full.
  std::array<uint64_t, kMaxMembers> readd_gen{};
  StaleParity forced;  // assemble(force) over stale parity
  uint64_t volume_table_gen = 0;  // the last volume table written (group_volumes.cpp); 0: not yet read
  void wire_path_loss();
  // An unclean stop may have torn a write in this stripe and nothing has
  // made it consistent since: its region is dirty and neither the log's
  // replay (dirty_replayed) nor the resync has been over it.
  bool parity_may_be_torn(uint64_t stripe) const { return !dirty_replayed && wi->suspect_stripe(stripe); }
  // A member's drive back in its slot (reinstate, re-add): its superblock
  // says rebuilding, the bitmap goes to it, and only the missed regions are
  // rebuilt. `fresh` (may be null) replaces the slot's drive object; on
  // refusal the slot is set back to `back` and nothing else changed.
  bool resume_member(uint32_t index, std::unique_ptr<Drive> fresh, SlotState back, std::string* err);
  void fail_overdue_missing();                // housekeeping
  void rebuild_ended(int member);             // housekeeping, after a rebuild finished

  void emit(GroupEvent::Kind k, int member, const std::string& msg);
  void emit(const GroupEvent& ev);
  // The RebuildFinished event of a rebuild that stopped with error e (at
  // the run rebuild_failed_first/_stripes names).
  GroupEvent rebuild_stopped_event(int e) const;

  // Hot replace (hot_replace.cpp): a working member copied onto a new
  // drive by the copier thread while it serves; the housekeeper swaps it in.
  struct HotReplace {
    std::thread copier;
    std::atomic<int> member{-1};     // the member being replaced, or -1
    std::atomic<bool> stop{false}, done{false};  // done: the copier ended (copy_err says how)
    std::atomic<int> copy_err{0};
    std::unique_ptr<Drive> target;   // the new drive, until the swap
    std::string target_path;
    std::string left_path;           // hot_replace_left() (under mu)
    std::atomic<uint64_t> done_bytes{0}, total_bytes{0};
    ProgressRate rate;
    std::atomic<int> swapping{-1};   // failed on purpose by the swap: no member_failed event
    bool waiting_said = false;       // the wait for a safe swap was told once
  } hot;
  void hot_replace_copy();   // the copier thread
  void hot_replace_tick();   // housekeeping: the swap, or what a failure during the copy needs
  void stop_hot_replace();   // group stop: the copy is dropped, the member stays
  void end_hot_replace(GroupEvent::Kind k, const std::string& msg);

  // What a superblock update could not do. A member that cannot take its
  // superblock is failing: the caller fails it through the volume
  // (after_persist, never with mu held), which persists that in turn on
  // the others. A spare that cannot is dropped from the group at once.
  struct Persisted {
    uint64_t failed = 0;                                   // members whose write failed
    std::vector<std::pair<uint32_t, std::string>> errors;  // slot, why (members and spares)
    std::vector<std::string> dropped;                      // spares dropped: events to emit
    std::string why(uint32_t slot) const;
    void add(const Persisted& o);
    std::string first_error() const { return errors.empty() ? "" : errors.front().second; }
  };
  // Writes the superblock (generation + 1) to every present member and
  // spare; with mu held.
  Persisted persist_locked();
  // Outside mu: emits the spares dropped and fails the members that failed.
  void after_persist(const Persisted& p);
  void emit_dropped(const Persisted& p);
  // For the volume's failure path (hooks.persist_failure/persist_missing):
  // the slot's new state persisted; returns the members that could not
  // take it, for the volume to fail next (it holds its lock meanwhile).
  uint64_t persist_slot_state(uint32_t member, SlotState st);
  // Takes mu, lets change() edit sb, persists, then after_persist.
  Persisted persist(const std::function<void()>& change);
  bool present(uint32_t slot) const { return slot < drives.size() && drives[slot] && drives[slot]->type() != DriveType::Null; }
  std::vector<BitmapCopy> writable_members() const;  // for the bitmap
  // Flushes the writable members; returns those whose flush failed (the
  // caller fails them: their writes may not be durable).
  uint64_t flush_members();
  void housekeeping_loop();
  void housekeeping_tick(bool slow);
  bool take_spare_for(uint32_t member, std::string* err);
  // Declustered: rebuilds failed `member` into the distributed spare room.
  bool start_room_rebuild(uint32_t member, std::string* err);
  // Declustered: the room's last member moves onto drive `d` (copy_back.cpp).
  bool start_copy_back(uint32_t member, std::unique_ptr<Drive> d, bool force, std::string* err);
  std::atomic<bool> copy_back{false};  // the rebuild running (or finished) is a copy-back
  // A room member's rebuild_checkpoint when the room holds all of it.
  uint64_t need_full_room_cp() const;
  size_t spares_left() const;
  // The member a rebuild runs for, or -1: a rebuild that finished runs on
  // until the housekeeper made its member active on disk (a second rebuild
  // started before that would leave it "rebuilding" for good).
  int rebuild_owner() const {
    const int r = vol->rebuilding_member();
    return r >= 0 ? r : rebuild_finished.load() ? rebuild_slot.load() : -1;
  }
  // The init runs, or ended and the housekeeper has not yet made that so on
  // disk and told it.
  bool init_running() const { return bg->progress(Work::Init).active || init_finished.load(); }
  // Control threads, before an operator's action that may start a rebuild:
  // waits (at most timeout_s) for a finished rebuild's member to be made
  // active, which the housekeeper does within a tick.
  void settle_rebuild(double timeout_s = 10) const;
  // The starts of rebuilds (a spare the housekeeper takes, an operator's
  // replace, re-add, rebuild or copy-back, a returning path): each checks
  // that none runs and starts one under it, so that two never start at once
  // and an operator's check does not see a spare the housekeeper is taking
  // half-taken ("no spare" while its rebuild starts). Recursive: the start_*
  // functions take it themselves, inside callers that already hold it.
  // Never waited for with it held (settle_rebuild first: the housekeeper
  // may need it).
  std::recursive_mutex start_mu;
  // settle_rebuild, then holds start_mu in *l; the member a rebuild runs
  // for, or -1.
  int hold_rebuild_starts(std::unique_lock<std::recursive_mutex>* l);
  // Spares out of their slot while take_spare_for starts their rebuild (mu):
  // still counted by spare_count().
  uint32_t spares_starting = 0;
  // d null: the slot's own drive, rebuilt in full.
  bool start_replacement(uint32_t member, std::unique_ptr<Drive> d, bool from_spare_slot, std::string* err);
  // A new drive against the drives in the group's slots (members, failed
  // ones included, and spares) but `replacing`: one drive is one member.
  bool refuse_shared(const Drive& d, std::string* err, int replacing = -1) const;
  // Hooks, events, background, housekeeping; the group starts running.
  // With write_superblocks: they say so first (not clean; assemble's
  // changes), and members that cannot take them fail (returned).
  Persisted wire(Group& g, bool write_superblocks);
};

}  // namespace gpuraid
