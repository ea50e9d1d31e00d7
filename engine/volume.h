// A volume: a drive group's members under one geometry, serving logical
// reads, writes and flushes. Requests are split per stripe; writes to one
// stripe are ordered by the stripe lock table; parity goes through the
// submitting reactor's parity backend; member I/O through its io_uring.
#pragma once
#include <cerrno>
#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "engine/codec.h"
#include "engine/engine.h"
#include "engine/geometry.h"
#include "engine/intent_wait.h"
#include "engine/io/member_durability.h"
#include "engine/levels/distributed_spare.h"
#include "engine/io_request.h"
#include "engine/meta_worker.h"
#include "engine/ops/op_pool.h"
#include "engine/stripe_lock.h"
#include "engine/volume_stats.h"

namespace gpuraid {

struct Op;
struct RebuildRun;
class PplLog;
class OpPool;
// Deletes an OpPool where its type is complete (ops/), so that volume.h
// need not expose it.
struct OpPoolDeleter {
  void operator()(OpPool* p) const;
};

class Volume {
 public:
  struct Events {
    // Called once per member failure, once it is persisted (on the
    // volume's metadata worker, or the control thread that failed it).
    std::function<void(uint32_t member, int err)> member_failed;
    // Called once when failures exceed what the level survives.
    std::function<void()> group_failed;
    // Called once per member that went missing (path lost, see mark_missing),
    // like member_failed.
    std::function<void(uint32_t member, int err)> member_missing;
    // Called per block range of a member read around from the redundancy
    // and rewritten (correct_read), with the member's count so far (on the
    // volume's metadata worker, never on a reactor).
    std::function<void(uint32_t member, uint32_t count)> read_corrected;
    // Called per member whose unreadable block could not be rebuilt (the
    // group needs the member, or the stripe's parity is not trusted): the
    // I/O failed, the member stays (on the metadata worker, as above).
    std::function<void(uint32_t member, uint64_t stripe, bool parity_untrusted)> read_uncorrectable;
  };

  ~Volume();
  // Checks members against the geometry (count, sizes). data_offset: bytes
  // reserved at the start of every member (metadata), a multiple of 4 KiB.
  static std::unique_ptr<Volume> create(Engine& engine, const Geometry& geo,
                                        std::vector<Drive*> members, uint64_t data_offset,
                                        std::string* err);
  // The geometry these drives allow: the smallest member sets the size,
  // and *note says so when members differ.
  static bool fit_geometry(Level level, uint32_t ec_parity, uint32_t strip_bytes,
                           const std::vector<Drive*>& members, uint64_t data_offset, Geometry* out,
                           std::string* note, std::string* err, uint32_t subgroups = 0,
                           DeclusteredShape declustered = {});

  const Geometry& geometry() const { return geo_; }
  const Codec& codec() const { return codec_; }
  uint64_t size_bytes() const { return size_bytes_; }  // checked per request: worked out once
  uint64_t data_offset() const { return data_offset_; }
  Drive* member(uint32_t i) const { return members_[i].load(std::memory_order_acquire); }
  uint32_t member_slot(uint32_t i) const { return slots_[i].load(std::memory_order_acquire); }
  // Sums every reactor's counts (volume_stats.h); any thread.
  VolumeStats stats() const;
  void set_events(Events ev) { events_ = std::move(ev); }

  // Starts a request on reactor r (the calling thread must own r). Bad
  // input is refused here with -EINVAL/-ERANGE, nothing started, and
  // *why (if given) says what was wrong; otherwise returns 0 and
  // req->done runs later on r.
  int submit(Reactor& r, IoRequest* req, std::string* why = nullptr);
  bool validate(const IoRequest& req, std::string* why) const;

  // Members that cannot be used now: failed for good, or missing (a subset,
  // see missing_mask()). A member being rebuilt is not in it.
  uint64_t failed_mask() const { return failed_.load(std::memory_order_acquire); }
  // Members that cannot serve `stripe`: the failed ones, and a member being
  // rebuilt when the stripe is at or past its rebuild checkpoint.
  uint64_t failed_mask_for(uint64_t stripe) const {
    uint64_t f = failed_.load(std::memory_order_acquire);
    uint64_t r = rebuilding_.load(std::memory_order_acquire);
    const uint64_t cp = rebuild_cp_.load(std::memory_order_acquire);
    const uint64_t out = r && stripe >= cp ? f | r : f;
    if (__builtin_expect(room_mask_.load(std::memory_order_acquire) == 0, 1)) return out;
    return failed_in_room_for(stripe);
  }
  // Members that cannot serve every stripe.
  // A copy-back started live is not: every strip of its member reads from
  // the new drive or the room (distributed_spare.h).
  uint64_t unusable_mask() const {
    const uint64_t r = rebuilding_.load(std::memory_order_acquire);
    if (__builtin_expect(r && (room_mask() & r), 0) && room()->leaving() && room()->old_current()) return failed_mask();
    return failed_mask() | r;
  }
  bool failed() const { return !geo_.survives(unusable_mask()); }
  // Marks a member failed (an I/O error, a vanished drive, or an operator).
  // It takes effect in memory at once (no op writes it from now on); the
  // volume's metadata worker persists it (hooks.persist_failure), and until
  // then no request of the volume completes, so that no write that skipped
  // the member is acknowledged before the superblocks say it failed. On a
  // reactor this never blocks; elsewhere it returns once persisted. Members
  // that could not take that metadata write fail in turn (each once: it
  // ends). Returns true when this call changed its state.
  // A missing member is failed for good by this call.
  bool fail_member(uint32_t member, int err) { return fail_if(member, err, false); }
  // Fails the member only if it is (still) missing, atomically with its return.
  bool fail_missing_member(uint32_t member, int err) { return fail_if(member, err, true); }
  // Marks an active (or rebuilding) member missing: its path is gone but may
  // come back. I/O treats it like a failed member (reads reconstruct, writes
  // skip it); persisted like a failure (hooks.persist_missing). Returns true when this call
  // changed its state. It leaves that state by start_rebuild (it returned)
  // or fail_member.
  bool mark_missing(uint32_t member, int err);
  uint64_t missing_mask() const { return missing_.load(std::memory_order_acquire); }
  // Writes a volatile cache may still hold, counted while a member is
  // failed (member_durability.h; ops count them, parity writes flush them).
  MemberDurability& durability() { return durability_; }
  // A member I/O error: missing when hooks.path_lost says the path is lost,
  // failed otherwise.
  void member_error(uint32_t member, int err);
  // member_error for each member of the mask (metadata writes that failed).
  void members_error(uint64_t members, int err);
  // Unreadable blocks (a medium error, as md corrects read errors): a
  // direct read that met one on member, with `unreadable` the members that
  // met one in that read, may be read again around them from the
  // redundancy and the blocks rewritten (correct_read), the member kept,
  // while the group survives them and the member has had fewer than
  // kMaxCorrectedReads corrected since its drive took its place.
  bool may_correct(uint32_t member, uint64_t unreadable) const;
  // Whether the group would fail without member (RAID 0, the last copy, a
  // degraded RAID 5's survivor): a medium error there fails the read (or
  // stops the rebuild) and keeps the member, as md keeps the last device
  // that can serve a stripe; failing it would make one unreadable block a
  // failed group.
  bool needs_member(uint32_t member) const { return !geo_.survives(unusable_mask() | 1ull << member); }
  // Whether the stripe's parity stands for its data: not so in a region an
  // unclean stop left dirty (until resynced) or above the init's
  // checkpoint. There writes do not use read-modify-write, and an
  // unreadable block cannot be read around: what the parity would give is
  // not what was written, so the read fails and the member stays (its
  // other blocks are good).
  bool parity_trusted(uint64_t stripe) const { return !(hooks.parity_suspect && hooks.parity_suspect(stripe)); }
  // A block range of member was read around and rewritten: counted (and
  // told, events.read_corrected); the kMaxCorrectedReads-th fails it.
  void read_corrected(uint32_t member);
  // An unreadable block of member in stripe that could not be rebuilt: told
  // (events.read_uncorrectable); the member stays.
  void read_uncorrectable(uint32_t member, uint64_t stripe, bool parity_untrusted);
  // An event handler call, made on the metadata worker (never a reactor's
  // thread), or at once under lockstep.
  void tell_from_meta(std::function<void()> tell);
  uint32_t corrected_reads(uint32_t member) const { return corrected_[member].load(std::memory_order_relaxed); }
  static constexpr uint32_t kMaxCorrectedReads = 20;  // md's max_corrected_read_errors
  // Failures (and losses) taken effect but not yet persisted: requests that
  // finish meanwhile are held (hold_ack) until they are.
  bool acks_held() const { return holds_.load(std::memory_order_acquire) != 0; }
  // Holds a finishing op until every pending failure is persisted, then
  // resumes it on its reactor with resume(op). False (nothing held) when
  // none is pending any more.
  bool hold_ack(Op* op, void (*resume)(Op*));
  // Waits until the failures taken effect so far are persisted (control
  // threads; at once on a reactor or the worker itself).
  void wait_persisted();

  // Resilience hooks, set by the drive group before I/O starts.
  struct Hooks {
    // Parity of this stripe may be stale (write-intent bitmap, init):
    // writes there must not use read-modify-write, nothing is rebuilt from it.
    std::function<bool(uint64_t stripe)> parity_suspect;
    // Parity of this stripe may not stand for the data because an unclean
    // stop may have torn a write there (its region dirty, the write-hole
    // log not replayed over it), not only because the init has not reached
    // it: only where this is false may a resync rebuild an unreadable block
    // from the parity (ops/maintenance.cpp).
    std::function<bool(uint64_t stripe)> parity_may_be_torn;
    // Around the member writes of a redundant write (write-intent bitmap).
    // begin never blocks: true when the region is dirty on disk already;
    // false when its bit must be written first, and then w->ready runs
    // (from the bitmap's worker) once it is, with the members whose bitmap
    // write failed: the op fails them (member_error) before writing, and
    // fails with -EIO if the group does not survive that. end runs whatever
    // begin returned. reactor: the op's home (the bitmap counts writes in
    // flight per reactor).
    std::function<bool(uint64_t stripe, uint32_t reactor, IntentWait* w)> write_begin;
    std::function<void(uint64_t stripe, uint32_t reactor)> write_end;
    // Runs as a failure (missing: a loss) takes effect, before any write
    // can skip the member, under the failure lock; must not block.
    std::function<void(uint32_t member, bool missing)> before_failure;
    // Persists a member failure, on the volume's metadata worker once it
    // took effect (or on the control thread that failed it); may block,
    // within the metadata time limit. Returns the other members whose
    // metadata write failed meanwhile: they are failed next (member_error).
    std::function<uint64_t(uint32_t member, int err)> persist_failure;
    // Persists a member going missing, like persist_failure.
    std::function<uint64_t(uint32_t member)> persist_missing;
    // Whether an I/O error of this member is a lost path (it goes missing)
    // rather than a dead drive; may block briefly. Empty: always dead.
    std::function<bool(uint32_t member, int err)> path_lost;
    // Rebuild: whether the member being rebuilt already holds this stripe
    // (a partial rebuild after a path loss), so the stripe is skipped.
    // Asked with the stripe locked.
    std::function<bool(uint64_t stripe)> rebuild_skip;
  };
  Hooks hooks;
  // The write-hole guard's log (owned by the group), or null: parity
  // writes log their partial parity there first (ppl/ppl_log.h).
  PplLog* ppl = nullptr;

  // Declustered groups (draid5/6): members rebuilt (or being rebuilt) into
  // the distributed spare room (distributed_spare.h). Such a member is not
  // failed: its member I/O goes, row by row, to the drive holding its spare
  // strip there (route_to_room); stripes where that strip cannot be read
  // count it failed (failed_mask_for). The room's order, published whole
  // (never changed in place): any thread may read it.
  uint64_t room_mask() const { return room_mask_.load(std::memory_order_acquire); }
  const DistributedSpare* room() const { return room_.load(std::memory_order_acquire); }
  bool room_left() const { return room() && room()->room_left(); }
  // Puts failed `member` into the room as the member being rebuilt, from
  // `checkpoint_stripe` (rebuilding_member() until finish_rebuild). False
  // with *err: not declustered, not failed, a rebuild runs, no room left.
  bool start_room_rebuild(uint32_t member, uint64_t checkpoint_stripe, std::string* err);
  // Assembly, before I/O starts: the members rebuilt into the room, in order.
  bool restore_room(const std::vector<uint32_t>& order, std::string* err);
  // Copy-back (distributed_spare.h): the room's last member moves onto
  // `drive`, its own again, by a rebuild of the strips leaving moves
  // (rebuilding_member() until finish_rebuild, which takes it out of the
  // room) from `checkpoint_stripe`. old_current: started live (the room's
  // copies past the checkpoint serve meanwhile); false: resumed after a
  // stop. False with *err: not the room's last member, a rebuild runs, the
  // drive is too small.
  bool start_copy_back(uint32_t member, Drive* drive, uint64_t checkpoint_stripe, bool old_current, std::string* err);
  // The room's members that have no drive of their own: all of them but
  // one being copied back (it writes its drive: flushes, bitmap, log).
  uint64_t room_without_drive() const {
    const uint64_t m = room_mask();
    return m && room()->leaving() ? m & ~rebuilding_.load(std::memory_order_acquire) : m;
  }
  // Whether the rebuild running is a copy-back out of the room.
  bool copying_back() const { return room_mask() && room()->leaving(); }
  // Whether a rebuild into the room can take failed `member`: room is
  // left, or it is the member whose copy-back failed (it goes back in).
  bool room_takes(uint32_t member) const {
    const DistributedSpare* r = room();
    return r && (r->room_left() || (r->leaving() && r->order().back() == member));
  }
  // The member whose strip a rebuild writes in this stripe: the member
  // being rebuilt, or the one strip of another member of the room that a
  // rebuild into the room moves there.
  int rebuild_target(uint64_t stripe) const {
    if (room_mask_.load(std::memory_order_acquire) && (room()->rebuilding() || room()->leaving())) {
      const int t = room()->rebuild_target(stripe);
      if (t >= 0) return t;
    }
    return rebuilding_member();
  }
  // A member I/O of a member in the room, to the drive holding its strip of
  // the I/O's row (which one I/O never leaves: RunBuilder splits at rows).
  // The drive holding the strip of `row` of `member` (in the room) now, or
  // -1: none there.
  int room_drive(uint32_t member, uint64_t row, bool rebuild_write = false) const;
  // A copy-back's rebuild writes (rebuild_write) go where leaving puts the
  // strip, as every I/O below its checkpoint does.
  void route_to_room(MemberIo* io, uint32_t member, bool rebuild_write) const;

  // Rebuild: puts `drive` in slot `member` (which must be failed or
  // missing; `drive` may be the member's own drive, back from a path loss)
  // as a member being rebuilt from `checkpoint_stripe`; stripes below the checkpoint are
  // served by it, the rest treat it as failed.
  bool start_rebuild(uint32_t member, Drive* drive, uint64_t checkpoint_stripe, std::string* err);
  uint64_t rebuild_checkpoint() const { return rebuild_cp_.load(std::memory_order_acquire); }
  int rebuilding_member() const;
  // Called by the rebuild op holding the stripe's lock.
  void advance_rebuild(uint64_t next_stripe) { rebuild_cp_.store(next_stripe, std::memory_order_release); }
  // Rebuild ops that finished ahead of the checkpoint, still holding their
  // stripe locks until it reaches them (background reactor only).
  std::vector<Op*>& rebuilt_ahead() { return rebuilt_ahead_; }
  // A stripe of this rebuild attempt failed: the checkpoint stops there, so
  // stripes of it that finish past it cannot wait for it (finish_maintenance).
  std::atomic<bool>& rebuild_broken() { return rebuild_broken_; }
  // The rebuild reached the end: the member is active.
  void finish_rebuild();

  // Background work on one stripe (init/resync, rebuild, scrub).
  enum class Maintenance : uint8_t { Resync, Rebuild, Scrub, ScrubRepair };
  struct MaintenanceResult {
    bool skipped = false;       // could not run here (e.g. degraded resync): nothing changed
    uint32_t mismatch_rows = 0; // scrub: parity rows (or mirror copies) that differed
    int located_role = -1;      // scrub, m >= 2: the one strip whose content explains the mismatch
    int located_member = -1;
    // ScrubRepair. repaired: the wrong strip was known (located by the
    // parity rows, m >= 2, or outvoted by a majority of >= 3 copies) and
    // rewritten. made_consistent: rewritten without knowing which side was
    // right (RAID 5 or an unlocated mismatch: parity from the data; two
    // copies: trusted_member's copy kept); nothing verified the data.
    bool repaired = false;
    bool made_consistent = false;
    int trusted_member = -1;
  };
  // Like submit(): req->done runs on r; req->result is 0 or -errno.
  int submit_maintenance(Reactor& r, IoRequest* req, Maintenance kind, uint64_t stripe, MaintenanceResult* out);
  // Rebuild of run->n stripes from `first` (at most kMaxRunStripes, see
  // ops/rebuild_run.h): one op per stripe, as many as the pool gives now.
  // Returns the stripes taken (then req->done runs once, when all are
  // done), or -errno with nothing started.
  int submit_rebuild_run(Reactor& r, IoRequest* req, uint64_t first, RebuildRun* run);

  Engine& engine() const { return engine_; }
  // Foreground requests submitted so far, over every reactor.
  uint64_t foreground_requests() const;

  // Engine-internal (ops).
  StripeLockTable& locks() { return locks_; }
  OpPool& op_pool(uint32_t reactor) { return *op_pools_[reactor]; }
  // A part of req whose read must be redone (degraded): split again with
  // ops exempt from the pool's cap (see OpPool).
  void redo_read(Reactor& r, IoRequest* req, uint64_t off, uint64_t len, uint8_t* buf);
  // The same as one degraded read per stripe, under the stripe lock: a
  // stripe whose member read meets an unreadable block again reads around
  // that member and writes back what it reconstructed of it (may_correct);
  // the stripes that read fine write nothing.
  void correct_read(Reactor& r, IoRequest* req, uint64_t off, uint64_t len, uint8_t* buf);
  // Splits req from req->next_off into ops while the reactor's pool has
  // them. True when all of it is split (the split guard is dropped); false
  // when the pool ran dry (the caller parks req; OpPool resumes it).
  bool split(Reactor& r, IoRequest* req);
  static void finish_part(IoRequest* req, int result);

 private:
  Volume(Engine& e, const Geometry& g) : engine_(e), geo_(g), codec_(g) {}
  // Split [*cursor, end) of req into ops of class c; buf0 holds the byte at
  // off0. False (with *cursor at the first byte left) when the pool is dry.
  bool split_read(Reactor& r, IoRequest* req, uint64_t off0, uint8_t* buf0, uint64_t* cursor, uint64_t end,
                  OpClass c);
  bool split_write(Reactor& r, IoRequest* req);
  bool split_flush(Reactor& r, IoRequest* req);
  void end_split(Reactor& r, IoRequest* req);
  void report_if_group_failed(uint64_t unusable);
  bool fail_if(uint32_t member, int err, bool only_missing);
  void take_effect_locked(uint32_t member, bool missing);
  // A failure (missing: a loss) took effect: persisted on the worker, the
  // held requests released after.
  void persist_later(uint32_t member, int err, bool missing);
  void release_acks();

  Engine& engine_;
  Geometry geo_;
  uint64_t size_bytes_ = 0;
  uint64_t direct_chunk_ = 0;  // bytes per direct read / RAID 0 write op at most (create())
  Codec codec_;
  // Fixed size (kMaxMembers); a slot changes only when a failed member is replaced.
  std::unique_ptr<std::atomic<Drive*>[]> members_;
  std::unique_ptr<std::atomic<uint32_t>[]> slots_;
  std::unique_ptr<std::atomic<uint32_t>[]> corrected_;  // per member: read_corrected since its drive came
  std::vector<uint32_t> owned_slots_;  // engine slots to detach at the end
  uint64_t data_offset_ = 0;
  std::atomic<uint64_t> failed_{0};
  std::atomic<uint64_t> rebuilding_{0};
  std::atomic<uint64_t> missing_{0};  // subset of failed_
  std::atomic<uint64_t> rebuild_cp_{0};
  // The distributed spare room (declustered geometries): the published
  // version and every earlier one (readers may still hold them; a handful
  // over a group's life).
  std::atomic<const DistributedSpare*> room_{nullptr};
  std::atomic<uint64_t> room_mask_{0};
  std::vector<std::unique_ptr<DistributedSpare>> room_versions_;
  void publish_room(std::unique_ptr<DistributedSpare> next);
  // failed_mask_for with members in the room (declustered, the slow path).
  uint64_t failed_in_room_for(uint64_t stripe) const;
  // The room's leaving member whose copy-back's drive failed.
  bool leaving_member(uint32_t member) const {
    const DistributedSpare* r = room();
    return r && r->leaving() && r->order().back() == member;
  }
  MemberDurability durability_;
  std::mutex fail_mu_;  // serializes failures taking effect (never held across I/O)
  // Failures taken effect, not yet persisted, and the ops held meanwhile.
  std::atomic<uint32_t> holds_{0};
  std::mutex hold_mu_;
  std::vector<Op*> held_;
  std::vector<Op*> rebuilt_ahead_;
  std::atomic<bool> rebuild_broken_{false};
  std::atomic<bool> group_failed_reported_{false};
  StripeLockTable locks_;
  std::vector<std::unique_ptr<OpPool, OpPoolDeleter>> op_pools_;  // one per reactor
  Events events_;
  MetaWorker meta_{"gpuraid-fail"};  // last: drained first when the volume goes
};

}  // namespace gpuraid
