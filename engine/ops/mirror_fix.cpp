// Mirrors' read correction (Volume::correct_read): a direct read met an
// unreadable block (a medium error) on one copy. Under the stripe lock, so
// that no write of the stripe comes between, the part is read again from
// the other copies and what was read is written back over the copies that
// could not be read, which stay members (as md's raid1 fix_read_error
// does). Parity levels do the same through a degraded read (read_ops.cpp).
#include "engine/ops/op.h"

namespace gpuraid {

static void fix_locked(Op* op);

static void fix_finish(Op* op, int result) {
  unlock_stripe(op);
  finish_op(op, result);
}

// The copies written back (dread.unreadable): each whose write took is
// counted (and its drive's count of corrected blocks grows); one whose
// write failed fails as on any write error.
static void fix_written(Op* op) {
  for (uint64_t c = op->dread.unreadable & ~op->errored; c; c &= c - 1) {
    bump(counters_of(op).corrected_reads);
    op->vol->read_corrected(uint32_t(__builtin_ctzll(c)));
  }
  absorb_errors(op);  // the read itself was served: its result stands
  fix_finish(op, 0);
}

static void fix_read_done(Op* op) {
  const uint64_t before = op->dread.unreadable;
  op->dread.unreadable |= correctable_unreadable(op);  // another copy unreadable too: read around it as well
  if (op->read.uncorrectable) {
    absorb_errors(op);  // other members' errors fail them as ever
    return fix_finish(op, -EIO);
  }
  if (op->errored) {
    const uint64_t errored = op->errored;
    if (!absorb_errors(op)) return fix_finish(op, -EIO);
    // Read again from the copies left (a member that errored is failed
    // now; one that is not, e.g. a lost path's, ends it).
    if (errored & ~op->vol->failed_mask_for(op->stripe)) return fix_finish(op, -EIO);
    return fix_locked(op);
  }
  if (op->dread.unreadable != before) return fix_locked(op);
  // Every part read from a good copy: written back over the unreadable
  // ones (nothing, when a write came first and the read met no error).
  Volume* v = op->vol;
  const Geometry& g = v->geometry();
  op->dread.unreadable &= ~v->failed_mask_for(op->stripe);
  begin_phase(op, fix_written);
  for (uint32_t i = 0; i < g.data_strips(); i++) {
    const StripRange r = op->ranges[i];
    if (r.empty()) continue;
    for (uint64_t u = strip_copies(g, op->stripe, i) & op->dread.unreadable; u; u &= u - 1)
      issue_member_io(op, uint32_t(__builtin_ctzll(u)), MemberIo::Write, member_off(v, op->stripe, r.a),
                      user_ptr(op, op->stripe, i, r.a), r.b - r.a, false);
  }
  end_issue(op);
}

// Reads each strip of the part from a copy that is neither failed nor met
// unreadable; a strip with none left fails the read (its members stay).
static void fix_locked(Op* op) {
  Volume* v = op->vol;
  const Geometry& g = v->geometry();
  const uint64_t avoid = v->failed_mask_for(op->stripe) | op->dread.unreadable;
  int from[kMaxMembers];  // per data strip: the copy read (every strip chosen before any is read)
  for (uint32_t i = 0; i < g.data_strips(); i++) {
    if (op->ranges[i].empty() || (from[i] = pick_copy(g, op->stripe, i, avoid, op->home->id())) >= 0) continue;
    unreadable_uncorrected(op, strip_copies(g, op->stripe, i) & op->dread.unreadable, false);
    return fix_finish(op, -EIO);
  }
  begin_phase(op, fix_read_done);
  for (uint32_t i = 0; i < g.data_strips(); i++) {
    const StripRange r = op->ranges[i];
    if (r.empty()) continue;
    issue_member_io(op, uint32_t(from[i]), MemberIo::Read, member_off(v, op->stripe, r.a),
                    user_ptr(op, op->stripe, i, r.a), r.b - r.a, false);
  }
  end_issue(op);
}

void start_mirror_fix(Op* op) {
  if (lock_stripe(op, fix_locked)) fix_locked(op);
}

}  // namespace gpuraid
