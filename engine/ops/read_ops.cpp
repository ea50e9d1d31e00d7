// Reads: direct member reads (merged per member across stripes), and
// degraded reads that rebuild strips of failed members from k survivors.
#include <cstring>

#include "engine/ops/op.h"

namespace gpuraid {

uint64_t strip_copies(const Geometry& g, uint64_t stripe, uint32_t i) {
  uint64_t members = 0;
  for (uint32_t c = 0; c < g.copies(); c++) members |= 1ull << g.data_member(stripe, i, c);
  return members;
}

int pick_copy(const Geometry& g, uint64_t stripe, uint32_t i, uint64_t avoid, uint32_t salt) {
  const uint32_t c = g.copies();
  for (uint32_t t = 0; t < c; t++) {
    uint32_t m = g.data_member(stripe, i, uint32_t((stripe + salt + t) % c));
    if (!(avoid >> m & 1)) return int(m);
  }
  return -1;
}

static void read_done(Op* op) {
  Volume* v = op->vol;
  // Unreadable blocks: read around and rewritten where the group can,
  // else an error as any other (the member fails).
  const uint64_t unreadable = correctable_unreadable(op);
  if (op->read.uncorrectable) {
    absorb_errors(op);  // other members' errors fail them as ever
    return finish_op(op, -EIO);
  }
  const bool had_errors = op->errored != 0;
  if (!absorb_errors(op)) return finish_op(op, -EIO);
  if (unreadable) {
    bump(counters_of(op).retried_reads);
    v->correct_read(*op->home, op->req, op->off, op->len, op->buf);
    return finish_op(op, 0);
  }
  // A member failed under us (ours or another op's error): what it
  // returned may be stale; read this part again, degraded.
  if (had_errors || op->read.retry || (op->used & v->failed_mask() & ~op->read.failed_snapshot)) {
    bump(counters_of(op).retried_reads);
    v->redo_read(*op->home, op->req, op->off, op->len, op->buf);
  }
  finish_op(op, 0);
}

void start_read(Op* op) {
  const Geometry& g = op->vol->geometry();
  op->read.failed_snapshot = op->vol->failed_mask();
  begin_phase(op, read_done);
  // Within one strip of a striped level (most small reads): one member
  // read, without the run builder's bookkeeping.
  const uint64_t sdb = g.stripe_data_bytes(), s = op->stripe, in_stripe = op->off - s * sdb;  // s: split_read's
  const int sh = __builtin_ctz(g.strip_bytes);  // strips are powers of two (Geometry::make)
  const uint32_t i = uint32_t(in_stripe >> sh), col = uint32_t(in_stripe & (g.strip_bytes - 1));
  if (!g.is_mirror() && col + op->len <= g.strip_bytes) {
    const uint32_t m = g.data_member(s, i);
    if (op->vol->failed_mask_for(s) >> m & 1) op->read.retry = true;  // read_done redoes it degraded
    else issue_member_io(op, m, MemberIo::Read, member_off(op->vol, s, col), op->buf, uint32_t(op->len), false);
    return end_issue(op);
  }
  RunBuilder runs(op, MemberIo::Read, false);
  uint64_t failed = 0, failed_of = UINT64_MAX;  // failed_mask_for(failed_of)
  for_each_strip(g, op->off, op->len, [&](uint64_t s, uint32_t i, StripRange r) {
    if (s != failed_of) failed = op->vol->failed_mask_for(failed_of = s);
    int m = g.is_mirror() ? pick_copy(g, s, i, failed, op->home->id()) : int(g.data_member(s, i));
    if (m < 0 || (failed >> m & 1)) {
      // No copy left, or the member failed after the request was split:
      // read_done redoes this part degraded (or fails it with the group).
      op->read.retry = true;
      return;
    }
    runs.add(uint32_t(m), member_off(op->vol, s, r.a), user_ptr(op, s, i, r.a), r.b - r.a);
  });
  runs.flush();
  end_issue(op);
}

// Degraded reads gather per stripe: every read of a stripe that lost a
// data strip takes the stripe lock, and the holder takes the reads queued
// behind it along (riders, as writes do), so that each survivor is read
// once for all of them: a sequential stream reads each stripe's k survivors
// once instead of reading the healthy strips again for the lost one. An op
// granted the lock at once waits one turn first (a plug), so the reads a
// submitter sends in one batch meet.
static void degraded_read_locked(Op* op);

// Ops served by one gathered read: the holder, then its riders.
#define FOR_EACH_READER(op, c) for (Op* c = (op); c; c = (c == (op) ? (op)->rider_head : c->rider_next))

// Released from a hold (ops/stripe_gather.h): the reads queued meanwhile ride too.
static void degraded_read_go(Op* op) {
  take_riders(op, &VolumeStats::merged_reads);
  degraded_read_locked(op);
}

static void degraded_read_granted(Op* op) {
  take_riders(op, &VolumeStats::merged_reads);
  // A stream's read that leaves the rest of its stripe to its next reads
  // waits for them.
  if (op->vol->op_pool(op->home->id()).read_gather().try_hold(op, degraded_read_go)) return;
  degraded_read_locked(op);
}

// What one role contributes, as one member read (or one reconstruction):
// the union of the readers' bytes of it and, for a survivor, the columns
// the recovery needs.
static StripRange role_hull(const Op* op, uint32_t role, uint32_t k) {
  const DegradedReadPlan& p = op->dread.plan;
  StripRange h = role < k ? op->ranges[role] : StripRange{};
  if ((p.survivors >> role & 1) || (p.recover_roles >> role & 1)) {
    if (h.empty()) h = StripRange{p.c0, p.c1};
    else h = StripRange{std::min(h.a, p.c0), std::max(h.b, p.c1)};
  }
  return h;
}

// A reader whose own bytes of data role i are exactly [a, b): the read (or
// reconstruction) lands in its buffer. nullptr: an engine buffer is used.
static Op* reader_covering(Op* op, uint32_t i, StripRange h) {
  FOR_EACH_READER(op, c) {
    const StripRange r = own_range(op, c, i);
    if (r.a == h.a && r.b == h.b) return c;
  }
  return nullptr;
}

static void degraded_read_finish(Op* op, int result) {
  release_buffers(op);
  unlock_stripe(op);
  finish_op(op, result);  // and its riders
}

// Every reader's bytes, from where each role's hull landed (rd[role],
// starting at the hull's first column).
static void deliver(Op* op) {
  const Geometry& g = op->vol->geometry();
  const uint32_t k = g.data_strips();
  FOR_EACH_READER(op, c) {
    for (uint32_t i = 0; i < k; i++) {
      const StripRange r = own_range(op, c, i);
      if (r.empty()) continue;
      const StripRange h = role_hull(op, i, k);
      const uint8_t* from = op->rd[i] + (r.a - h.a);
      uint8_t* to = user_ptr(c, op->stripe, i, r.a);
      if (from != to) memcpy(to, from, r.b - r.a);
    }
  }
}

// Whether role `role` of the stripe (data or parity) is on a member read
// around for an unreadable block and was reconstructed (its member in *m):
// written back.
static bool rewrites(const Op* op, uint32_t role, uint32_t* m) {
  *m = role_member(op->vol->geometry(), op->stripe, role);
  return (op->dread.plan.recover_roles >> role & 1) && (op->dread.unreadable >> *m & 1);
}

// The unreadable blocks written back (Volume::correct_read): each member
// whose write failed fails; each rewritten is counted.
static void rewrite_done(Op* op) {
  const Geometry& g = op->vol->geometry();
  for (uint32_t role = 0, m; role < g.data_strips() + g.parity; role++) {
    if (!rewrites(op, role, &m) || (op->errored >> m & 1)) continue;
    bump(counters_of(op).corrected_reads);
    op->vol->read_corrected(m);
  }
  absorb_errors(op);  // the read itself was served: its result stands
  degraded_read_finish(op, 0);
}

static void degraded_read_parity_done(ParityJob* job) {
  Op* op = static_cast<Op*>(job->ctx);
  if (job->status < 0) return degraded_read_finish(op, -EIO);
  deliver(op);
  if (!op->dread.unreadable) return degraded_read_finish(op, 0);
  // Still under the stripe lock, so no write of the stripe came between:
  // what was reconstructed of an unreadable member is its data (or parity).
  const Geometry& g = op->vol->geometry();
  const uint32_t k = g.data_strips();
  begin_phase(op, rewrite_done);
  for (uint32_t role = 0, m; role < k + g.parity; role++) {
    if (!rewrites(op, role, &m)) continue;
    const StripRange h = role_hull(op, role, k);
    issue_member_io(op, m, MemberIo::Write, member_off(op->vol, op->stripe, h.a), op->rd[role], h.b - h.a, false);
  }
  end_issue(op);
}

// Members whose read met an unreadable block in a degraded read (a data
// or a parity strip of the stripe) are read around from now on where the
// group survives it (and rewritten: a singly degraded RAID 6 whose P block
// is unreadable reads with Q instead and writes P back, rather than losing
// the member over one sector); one the group needs makes the read fail
// (uncorrectable), the member kept, as does one whose failure would leave
// the blocks read around unrecoverable; the others fail as on any error.
// Where the stripe's parity cannot be trusted, nothing is read around: the
// read fails and the member stays.
static bool read_around_unreadable(Op* op) {
  const Geometry& g = op->vol->geometry();
  const uint64_t u = op->read.unreadable;
  op->read.unreadable = 0;
  if (!op->vol->parity_trusted(op->stripe)) {
    unreadable_uncorrected(op, u, true);
    return false;
  }
  bool more = false;
  for (uint32_t role = 0; role < g.data_strips() + g.parity; role++) {
    const uint32_t m = role_member(g, op->stripe, role);
    if (!(u >> m & 1)) continue;
    if (op->vol->may_correct(m, op->dread.unreadable | u)) {
      op->dread.unreadable |= 1ull << m;
      more = true;
    } else if (op->vol->needs_member(m) || !g.survives(op->vol->unusable_mask() | op->dread.unreadable | 1ull << m)) {
      // Failing it would not serve the read either (the group needs it, or
      // the blocks already read around do: a RAID 5 data block and its
      // parity both unreadable): the read fails, the member stays.
      unreadable_uncorrected(op, 1ull << m, false);
    } else {
      op->errored |= 1ull << m;
      op->io_err = -ENODATA;
    }
  }
  return more;
}

static void degraded_read_io_done(Op* op) {
  const bool read_around = op->read.unreadable && read_around_unreadable(op);
  if (op->read.uncorrectable) {
    absorb_errors(op);  // other members' errors fail them as ever
    return degraded_read_finish(op, -EIO);
  }
  if (op->errored || read_around) {
    const bool ok = absorb_errors(op);
    release_buffers(op);
    if (!ok) {
      unlock_stripe(op);
      return finish_op(op, -EIO);
    }
    return degraded_read_locked(op);  // plan again around the new failure
  }
  const DegradedReadPlan& p = op->dread.plan;
  if (!p.recover_roles) {
    deliver(op);
    return degraded_read_finish(op, 0);
  }
  const Geometry& g = op->vol->geometry();
  const uint32_t k = g.data_strips();
  uint8_t* src[kMaxMembers];
  uint8_t* dst[kMaxMembers];
  for (uint32_t role = 0; role < k + g.parity; role++) {
    const StripRange h = role_hull(op, role, k);
    if (p.survivors >> role & 1) src[role] = op->rd[role] + (p.c0 - h.a);
    if (p.recover_roles >> role & 1) dst[role] = op->rd[role];  // its hull is [c0, c1)
  }
  ParityJob& j = op->job;
  make_recover_job(j, op->vol->codec(), p.c1 - p.c0, p.survivors, src, p.recover_roles, dst);
  j.done = degraded_read_parity_done;
  j.ctx = op;
  bump(counters_of(op).degraded_reads);
  ParityJob* jp = &j;
  op->home->parity().submit(&jp, 1);
}

static void degraded_read_locked(Op* op) {
  Volume* v = op->vol;
  const Geometry& g = v->geometry();
  const uint32_t k = g.data_strips();
  // Unreadable members count as failed for this read alone; past what
  // the group survives (another failed since), nothing is rewritten and
  // their blocks are read again as they are.
  uint64_t failed = v->failed_mask_for(op->stripe);
  if (!g.survives(failed | op->dread.unreadable)) op->dread.unreadable = 0;
  failed |= op->dread.unreadable;
  if (!g.survives(failed)) {
    unlock_stripe(op);
    return finish_op(op, -EIO);
  }
  DegradedReadPlan& p = op->dread.plan;
  if (!plan_degraded_read(g, op->stripe, op->ranges, failed, &p)) p = DegradedReadPlan{};  // nothing lost
  // A parity block read around is rebuilt over the same columns with the
  // lost data (its read covered [c0, c1)), and written back.
  if (p.recover_roles)
    for (uint32_t r = 0; r < g.parity; r++)
      if (op->dread.unreadable >> role_member(g, op->stripe, k + r) & 1) p.recover_roles |= 1ull << (k + r);
  // Where each role's hull lands: a reader's own buffer when one reader's
  // bytes are exactly the hull, else an engine buffer.
  for (uint32_t role = 0; role < k + g.parity; role++) {
    op->rd[role] = nullptr;
    const StripRange h = role_hull(op, role, k);
    if (h.empty()) continue;
    Op* c = role < k ? reader_covering(op, role, h) : nullptr;
    if (c) op->rd[role] = user_ptr(c, op->stripe, role, h.a);
    else if (!(op->rd[role] = op_buffer(op, h.b - h.a))) return wait_buffers(op, degraded_read_locked);
  }
  begin_phase(op, degraded_read_io_done);
  for (uint32_t role = 0; role < k + g.parity; role++) {
    const StripRange h = role_hull(op, role, k);
    if (h.empty() || (p.recover_roles >> role & 1)) continue;  // rebuilt, not read
    issue_member_io(op, role_member(g, op->stripe, role), MemberIo::Read, member_off(v, op->stripe, h.a),
                    op->rd[role], h.b - h.a, false);
  }
  end_issue(op);
}

void start_degraded_read(Op* op) {
  if (lock_stripe(op, degraded_read_granted)) resume_on_home(op, degraded_read_granted);
}

}  // namespace gpuraid
