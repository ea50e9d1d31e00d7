// One operation of a volume: a part of a request, executed on the reactor
// the request came in on. Ops are pooled per reactor and keep the capacity
// of their vectors across reuse, so the steady state allocates nothing.
#pragma once
#include <algorithm>
#include <vector>

#include "engine/ops/op_pool.h"
#include "engine/ops/rebuild_run.h"
#include "engine/parity/parity_backend.h"
#include "engine/planner.h"
#include "engine/ppl/ppl_format.h"
#include "engine/reactor.h"
#include "engine/stripe_lock.h"
#include "engine/volume.h"

namespace gpuraid {

enum class OpKind : uint8_t {
  Read,          // direct reads, lockless, may span stripes
  DegradedRead,  // one stripe, reconstructs strips on failed members
  ParityWrite,   // one stripe of RAID 5/6/ec
  MirrorWrite,   // one stripe of RAID 1/10
  DirectWrite,   // RAID 0, may span stripes
  Flush,
  Maintenance,   // one stripe of resync, rebuild or scrub
  MirrorFix,     // one stripe of a mirror read that met an unreadable copy: read again, written back
};

struct PoolBuf {
  uint8_t* p;
  uint32_t len;
};

struct Op;

// Each op kind's own state lives in its own context below, reached as
// op->w (parity writes), op->dread (degraded reads), op->read (direct
// reads) and op->maint (maintenance); Op itself holds what every kind
// shares. They are plain members, not a std::variant: ops are pooled and
// recycled, and their vectors (bufs, ppl_mem) must keep their capacity
// across reuse so that the steady state allocates nothing; a variant would
// destroy them on every change of kind. new_op() resets what must start
// fresh.

// A parity write (ops/parity_write.cpp) and its write-hole guard
// (ppl/ppl_stage.cpp).
struct WriteCtx {
  WritePlan plan;
  uint8_t* nd[kMaxMembers];   // per data role: new content over [plan.c0, plan.c1)
  bool nd_pool[kMaxMembers];  // nd[i] is an engine buffer (not a writer's)
  // Members whose read for this write met an unreadable block: planned
  // around and written back (plan_stripe_write's unreadable_members).
  uint64_t unreadable = 0;
  // Write-hole guard (ppl/ppl_stage.cpp, ppl/ppl_log.h): the entry of each
  // parity row written (payload in ppl_mem), the batch that logs them, the
  // members the write went to, what runs after the log.
  struct PplRow {
    uint32_t row = 0;
    uint32_t member = 0;  // whose log it goes to: the parity member, or the drive holding its strip (spare room)
    uint8_t* payload = nullptr;
    uint32_t len = 0;  // 0: header alone (kPplZeroPayload)
    uint32_t sum = 0;  // ppl_payload_sum of the payload
  };
  PplEntry ppl_entry;  // what every row's entry says of the write
  PplRow ppl_rows[kMaxParity];
  uint32_t ppl_nrows = 0;
  std::vector<uint8_t> ppl_mem;
  void* ppl_batch = nullptr;  // PplLog's batch, while the op is in one
  uint64_t ppl_written = 0;  // members the stripe's writes went to (write_stripe)
  void (*ppl_next)(Op*) = nullptr;
  void (*ppl_fail)(Op*, int) = nullptr;
};

// A degraded read of one stripe (ops/read_ops.cpp).
struct DegradedReadCtx {
  DegradedReadPlan plan;
  // Members read around as if failed, and what of them is reconstructed
  // written back: their read of this stripe met an unreadable block.
  uint64_t unreadable = 0;
};

// Direct reads (ops/read_ops.cpp): redone degraded when a member they read
// failed meanwhile.
struct ReadCtx {
  uint64_t failed_snapshot = 0;  // failed members when the op was planned
  bool retry = false;            // a strip had no member left to read: redo the part degraded
  uint64_t unreadable = 0;       // members whose read met an unreadable block (Volume::medium_error; degraded reads, scrubs, rebuild runs too)
  // An unreadable block that cannot be read around (the group needs its
  // member, or the stripe's parity cannot be trusted): the read fails and
  // the member stays (failing it would fail the group, or it is healthy).
  bool uncorrectable = false;
};

// Resync, rebuild or scrub of one stripe (ops/maintenance.cpp), or one
// stripe of a rebuild run (ops/rebuild_run.cpp).
struct MaintenanceCtx {
  Volume::Maintenance kind = Volume::Maintenance::Resync;
  Volume::MaintenanceResult* res = nullptr;
  int rebuild_member = -1;    // Rebuild: the member whose strip of this stripe is rebuilt
  int rebuilding = -1;        // Rebuild: the member being rebuilt then (the same but for the spare room's moves)
  RebuildRun* run = nullptr;  // a rebuild run's op: the run it belongs to
  // Parity levels (rd[role] holds what was read):
  uint32_t rebuild_role = 0;        // Rebuild: the role of the stripe on rebuild_member
  uint8_t* out = nullptr;           // Rebuild: the rebuilt strip; Scrub: the located strip's rebuilt content
  uint8_t* parity_out[kMaxParity];  // Resync: the parity rows computed
  uint64_t corrected = 0;           // Scrub: members whose unreadable block was rebuilt, to be written back
  // Mirrors: per member, the buffer its copy is read into (nullptr: not read).
  uint8_t* copy[kMaxMembers];
  // Mirrors: the copies to write once the write intent is open, each from src_of[member].
  uint64_t targets = 0;
  uint8_t* src_of[kMaxMembers];
};

struct Op {
  Task task;            // resumption (deferred, posted, waiting for buffers)
  StripeLockNode lock;  // stripe ordering
  Volume* vol = nullptr;
  Reactor* home = nullptr;
  IoRequest* req = nullptr;
  OpKind kind = OpKind::Read;
  bool fua = false;
  bool holds_lock = false;
  bool intent_held = false;   // write_begin ran for this op's stripe
  uint64_t off = 0, len = 0;  // logical bytes of this part
  uint8_t* buf = nullptr;
  uint64_t stripe = 0;
  StripRange ranges[kMaxMembers];  // bytes of each data strip touched (one-stripe ops)

  // Merged ops (parity writes, degraded reads): the holder of the stripe
  // lock lists its riders in arrival order (take_riders).
  Op* rider_head = nullptr;
  Op* rider_tail = nullptr;
  Op* rider_next = nullptr;
  int rider_result = 0;
  Op* held_next = nullptr;  // held for the rest of its stripe (ops/stripe_gather.h)
  int held_result = 0;      // its result while held for a failure's persistence (Volume::hold_ack)

  // Waiting for the write-intent bitmap (begin_write_intent).
  IntentWait intent_wait;
  uint64_t intent_failed = 0;          // members whose bitmap write failed
  void (*intent_then)(Op*) = nullptr;  // runs once the intent is open (or failed)
  bool intent_ok = false;

  // Execution state of the current phase: a counted fan-out of member I/Os
  // (begin_phase, issue_member_io, end_issue); phase_done runs once, when
  // the last of them completes.
  void (*phase_done)(Op*) = nullptr;
  void (*resume_fn)(Op*) = nullptr;   // what task runs
  void (*lock_resume)(Op*) = nullptr; // what runs when the stripe lock is granted
  uint32_t pending = 0;
  uint64_t errored = 0;  // members whose I/O failed in this phase
  int io_err = 0;        // the last such error (-EIO, -ENODEV, ...)
  uint64_t used = 0;     // members read from
  std::vector<PoolBuf> bufs;
  // Per role of the stripe: where the op's read of that role lands (a
  // parity write's parity rows: also where the new parity is computed).
  uint8_t* rd[kMaxMembers];
  ParityJob job;  // the op's parity computation (one at a time)

  WriteCtx w;
  DegradedReadCtx dread;
  ReadCtx read;
  MaintenanceCtx maint;

  Op* next_free = nullptr;
  bool in_pool = false;  // on its pool's free list (checked: an op is freed once)
};


// Entry points (ops/*.cpp).
void start_read(Op* op);
void start_degraded_read(Op* op);
void start_parity_write(Op* op);
void start_mirror_write(Op* op);
// Reads the op's part again from the copies that can be read and writes it
// back over those that could not (ops/mirror_fix.cpp).
void start_mirror_fix(Op* op);
void start_direct_write(Op* op);
void start_flush(Op* op);
void start_maintenance(Op* op);
// Locks every stripe of the run, then rebuilds them together (parity levels).
void start_rebuild_run(RebuildRun* run);
// Ends a maintenance op (ops/maintenance.cpp): a rebuilt stripe keeps its
// lock until the rebuild checkpoint reaches it, so stripes finish in order.
void finish_maintenance(Op* op, int result);

// Shared helpers (ops/op_common.cpp).
// An op for a part of req, or nullptr when the pool has none for class c
// now (Foreground, Maintenance; Retry always gets one).
Op* new_op(Volume* v, Reactor& r, IoRequest* req, OpKind kind, OpClass c = OpClass::Foreground);
// The gathering an op of this kind takes part in on its reactor (parity
// writes, degraded reads), or nullptr.
inline StripeGather* gather_of(const Op* op) {
  if (op->kind == OpKind::ParityWrite) return &op->vol->op_pool(op->home->id()).write_gather();
  if (op->kind == OpKind::DegradedRead) return &op->vol->op_pool(op->home->id()).read_gather();
  return nullptr;
}
// Completes the op's part of its request (and its riders'), frees it.
void finish_op(Op* op, int result);
// A member I/O of the op's phase, filled but not yet issued (for runs
// that grow by iovecs), and its issue.
MemberIo* prepare_member_io(Op* op, uint32_t member, MemberIo::Kind kind, uint64_t member_off,
                            bool dsync);
void issue_prepared(Op* op, MemberIo* io);
// Issues a member I/O counted in op->pending; when all of the phase are
// done, op->phase_done(op) runs.
void issue_member_io(Op* op, uint32_t member, MemberIo::Kind kind, uint64_t member_off,
                     uint8_t* buf, uint32_t len, bool dsync);
// Arms the phase: call before issuing, then end_issue() after the last one.
void begin_phase(Op* op, void (*done)(Op*));
void end_issue(Op* op);
// Engine buffers for the op; false when the pool is short (op waits and
// its task reruns `retry` later; everything taken so far is returned).
uint8_t* op_buffer(Op* op, uint32_t len);
void release_buffers(Op* op);
void wait_buffers(Op* op, void (*retry)(Op*));
// Fails (or, for a lost path, marks missing) the members that errored in
// the phase; true when the group survives.
bool absorb_errors(Op* op);
// The holder of a stripe's lock takes along the queued ops of its own kind
// (writes, or degraded reads) while the union of their bytes stays one range
// per strip, in FIFO order: op->ranges becomes the union, they become its
// riders (finish_op completes them), and the counter `merged` counts each.
// Returns whether ops still wait for the stripe (ones that could not ride).
bool take_riders(Op* op, uint64_t VolumeStats::*merged);
// The op's reactor's counts of its volume (bump() them: single_writer.h).
inline VolumeStats& counters_of(const Op* op) { return op->vol->op_pool(op->home->id()).counters(); }
// Stripe lock: true when held now; otherwise `resume` runs once granted.
bool lock_stripe(Op* op, void (*resume)(Op*));
void unlock_stripe(Op* op);
// Opens the write-intent window (hooks.write_begin) for the op's stripe,
// outside a phase, then runs then(op): at once when the region is dirty on
// disk already, otherwise on the op's reactor once its bit is written.
// Members whose bitmap write failed are failed like those whose I/O
// failed; op->intent_ok is false when the group does not survive that (the
// op fails with -EIO, after release_write_intent as always).
void begin_write_intent(Op* op, void (*then)(Op*));
// Ends the write-intent window opened by hooks.write_begin, if any.
void release_write_intent(Op* op);
// Runs fn(op) on op's home reactor in its next turn (from any thread).
void resume_on_home(Op* op, void (*fn)(Op*));
// The members of op->read.unreadable that may be read around
// (read_around, Volume::may_correct); of the others, one the group needs
// (Volume::needs_member) makes the read uncorrectable, the rest join
// op->errored with -ENODATA, as any read error. Clears op->read.unreadable.
uint64_t correctable_unreadable(Op* op, bool read_around = true);
// Members' unreadable blocks of op's stripe that could not be rebuilt: the
// op's I/O fails (read.uncorrectable), each is counted and told.
void unreadable_uncorrected(Op* op, uint64_t members, bool parity_untrusted);
// A Recover job: rows `dst_roles` (into dst[role]) from rows `src_roles`
// (from src[role]), both in ascending role order, as the backends want.
void make_recover_job(ParityJob& j, const Codec& c, uint32_t len, uint64_t src_roles, uint8_t* const* src,
                      uint64_t dst_roles, uint8_t* const* dst);
// The bytes of [off, end) in the strip that starts at logical offset lo,
// relative to the strip (empty when they miss it). strip_ranges,
// for_each_strip and own_range all cut through it.
inline StripRange range_in_strip(uint64_t lo, uint32_t strip_bytes, uint64_t off, uint64_t end) {
  const uint64_t a = std::max(lo, off), b = std::min(lo + strip_bytes, end);
  return a < b ? StripRange{uint32_t(a - lo), uint32_t(b - lo)} : StripRange{};
}
// Per data strip of `stripe`, the bytes of [off, off+len) it holds.
void strip_ranges(const Geometry& g, uint64_t stripe, uint64_t off, uint64_t len, StripRange* out);
// f(stripe, data strip i, range of that strip) for every strip that
// [off, off + len) touches, in address order. No array of all k ranges per
// stripe: zeroing one cost more than a small read's own work.
// One division per call: strips are powers of two (Geometry::make).
template <class F>
void for_each_strip(const Geometry& g, uint64_t off, uint64_t len, F&& f) {
  const uint64_t sdb = g.stripe_data_bytes(), end = off + len;
  const int sh = __builtin_ctz(g.strip_bytes);
  uint64_t s = off / sdb;
  for (uint64_t base = s * sdb; base < end; s++, base += sdb) {
    const uint64_t a0 = std::max(off, base), a1 = std::min(end, base + sdb);
    const uint32_t last = uint32_t((a1 - 1 - base) >> sh);
    for (uint32_t i = uint32_t((a0 - base) >> sh); i <= last; i++)
      f(s, i, range_in_strip(base + uint64_t(i) * g.strip_bytes, g.strip_bytes, off, end));
  }
}
// The range of data strip i that writer or reader c (the op or one of its
// riders) covers in the op's stripe: its own, kept since it was split,
// except the op's when take_riders() widened them over riders (then worked
// out again from its offset and length).
StripRange own_range(const Op* op, const Op* c, uint32_t i);
uint64_t member_off(const Volume* v, uint64_t stripe, uint32_t col);
// Mirrors: the member whose copy of data strip i of `stripe` serves a read,
// spreading reads over the copies not in `avoid` (salt: the reader's
// reactor); -1 when every copy is avoided.
int pick_copy(const Geometry& g, uint64_t stripe, uint32_t i, uint64_t avoid, uint32_t salt);
// Mirrors: the members holding a copy of data strip i of `stripe`.
uint64_t strip_copies(const Geometry& g, uint64_t stripe, uint32_t i);
// The caller's bytes for column `col` of data strip `i` of the op's stripe.
uint8_t* user_ptr(const Op* op, uint64_t stripe, uint32_t i, uint32_t col);

// Builds member I/O for strips that are contiguous on a member: adjacent
// pieces become one request (iovecs) up to the drive's max transfer,
// instead of one request per strip.
class RunBuilder {
 public:
  RunBuilder(Op* op, MemberIo::Kind kind, bool dsync) : op_(op), kind_(kind), dsync_(dsync) {}
  void add(uint32_t member, uint64_t moff, uint8_t* p, uint32_t len);
  void flush();

 private:
  void close(uint32_t member);
  Op* op_;
  MemberIo::Kind kind_;
  bool dsync_;
  // open_[m] is valid where bit m is set: nothing to clear per builder,
  // which every read makes (64 pointers zeroed and scanned cost a tenth of
  // a null-drive read).
  uint64_t open_mask_ = 0;
  MemberIo* open_[kMaxMembers];
};

}  // namespace gpuraid
