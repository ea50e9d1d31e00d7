// Writes that need no parity (RAID 1/10 mirrors, RAID 0) and flushes.
#include "engine/ops/op.h"

namespace gpuraid {

static void done_absorbing(Op* op) {
  const bool ok = absorb_errors(op);
  release_write_intent(op);
  unlock_stripe(op);
  finish_op(op, ok ? 0 : -EIO);
}

static void mirror_intent_open(Op* op);

// Mirrors: every surviving copy. The stripe lock keeps two overlapping
// writes from landing in different orders on different copies. The write
// intent first: a member whose bitmap write failed is failed before the
// copies to write are chosen.
static void mirror_locked(Op* op) {
  if (!op->vol->geometry().survives(op->vol->failed_mask_for(op->stripe))) {
    op->intent_ok = false;
    return mirror_intent_open(op);
  }
  begin_write_intent(op, mirror_intent_open);
}

static void mirror_intent_open(Op* op) {
  Volume* v = op->vol;
  const Geometry& g = v->geometry();
  if (!op->intent_ok) {
    release_write_intent(op);
    unlock_stripe(op);
    return finish_op(op, -EIO);
  }
  const uint64_t failed = v->failed_mask_for(op->stripe);
  begin_phase(op, done_absorbing);
  for (uint32_t i = 0; i < g.data_strips(); i++) {
    const StripRange& r = op->ranges[i];
    if (r.empty()) continue;
    for (uint32_t c = 0; c < g.copies(); c++) {
      uint32_t m = g.data_member(op->stripe, i, c);
      if (failed >> m & 1) continue;
      issue_member_io(op, m, MemberIo::Write, member_off(v, op->stripe, r.a),
                      user_ptr(op, op->stripe, i, r.a), r.b - r.a, op->fua);
    }
  }
  end_issue(op);
}

void start_mirror_write(Op* op) {
  if (lock_stripe(op, mirror_locked)) mirror_locked(op);
}

// RAID 0: straight to the one member of each strip, merged across stripes.
void start_direct_write(Op* op) {
  Volume* v = op->vol;
  const Geometry& g = v->geometry();
  begin_phase(op, done_absorbing);
  RunBuilder runs(op, MemberIo::Write, op->fua);
  for_each_strip(g, op->off, op->len, [&](uint64_t s, uint32_t i, StripRange r) {
    runs.add(g.data_member(s, i), member_off(v, s, r.a), user_ptr(op, s, i, r.a), r.b - r.a);
  });
  runs.flush();
  end_issue(op);
}

// A flush reaches every surviving member (fdatasync / block flush); one in
// the distributed spare room wrote to the others' drives, which it reaches
// (but one being copied back has a drive of its own, written below the copy's checkpoint).
void start_flush(Op* op) {
  Volume* v = op->vol;
  const uint64_t failed = v->failed_mask() | v->room_without_drive();
  begin_phase(op, done_absorbing);
  for (uint32_t m = 0; m < v->geometry().members; m++)
    if (!(failed >> m & 1)) issue_member_io(op, m, MemberIo::Flush, 0, nullptr, 0, false);
  end_issue(op);
}

}  // namespace gpuraid
