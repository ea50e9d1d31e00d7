// Reads: direct member reads (merged per member across stripes), and
// degraded reads that rebuild strips of failed members from k survivors.
#include <cstring>

#include "engine/ops/op.h"

namespace gpuraid {

// Mirror levels: which copy serves a strip, spreading reads over copies.
static int pick_copy(const Geometry& g, uint64_t stripe, uint32_t i, uint64_t failed, uint32_t salt) {
  const uint32_t c = g.copies();
  for (uint32_t t = 0; t < c; t++) {
    uint32_t m = g.data_member(stripe, i, uint32_t((stripe + salt + t) % c));
    if (!(failed >> m & 1)) return int(m);
  }
  return -1;
}

static void read_done(Op* op) {
  Volume* v = op->vol;
  const bool had_errors = op->errored != 0;
  if (!absorb_errors(op)) return finish_op(op, -EIO);
  // A member failed under us (ours or another op's error): what it
  // returned may be stale; read this part again, degraded.
  if (had_errors || op->retry || (op->used & v->failed_mask() & ~op->failed_snapshot)) {
    v->mutable_stats().retried_reads++;
    v->redo_read(*op->home, op->req, op->off, op->len, op->buf);
  }
  finish_op(op, 0);
}

void start_read(Op* op) {
  const Geometry& g = op->vol->geometry();
  const uint64_t sdb = g.stripe_data_bytes();
  const uint32_t k = g.data_strips();
  op->failed_snapshot = op->vol->failed_mask();
  begin_phase(op, read_done);
  RunBuilder runs(op, MemberIo::Read, false);
  StripRange r[kMaxMembers];
  for (uint64_t s = op->off / sdb; s <= (op->off + op->len - 1) / sdb; s++) {
    strip_ranges(g, s, op->off, op->len, r);
    const uint64_t failed = op->vol->failed_mask_for(s);
    for (uint32_t i = 0; i < k; i++) {
      if (r[i].empty()) continue;
      int m = g.is_mirror() ? pick_copy(g, s, i, failed, op->home->id()) : int(g.data_member(s, i));
      if (m < 0 || (failed >> m & 1)) {
        // No copy left, or the member failed after the request was split:
        // read_done redoes this part degraded (or fails it with the group).
        op->retry = true;
        continue;
      }
      runs.add(uint32_t(m), member_off(op->vol, s, r[i].a), user_ptr(op, s, i, r[i].a), r[i].b - r[i].a);
    }
  }
  runs.flush();
  end_issue(op);
}

static void degraded_read_locked(Op* op);

static void degraded_read_parity_done(ParityJob* job) {
  Op* op = static_cast<Op*>(job->ctx);
  const DegradedReadPlan& p = op->rplan;
  int result = job->status < 0 ? -EIO : 0;
  for (uint64_t rr = p.recover_roles; rr; rr &= rr - 1) {
    uint32_t i = uint32_t(__builtin_ctzll(rr));
    if (op->nd_pool[i])
      memcpy(user_ptr(op, op->stripe, i, op->ranges[i].a), op->nd[i] + (op->ranges[i].a - p.c0),
             op->ranges[i].b - op->ranges[i].a);
  }
  release_buffers(op);
  unlock_stripe(op);
  finish_op(op, result);
}

static void degraded_read_io_done(Op* op) {
  if (op->errored) {
    const bool ok = absorb_errors(op);
    release_buffers(op);
    if (!ok) {
      unlock_stripe(op);
      return finish_op(op, -EIO);
    }
    return degraded_read_locked(op);  // plan again around the new failure
  }
  const Codec& c = op->vol->codec();
  const DegradedReadPlan& p = op->rplan;
  ParityJob& j = op->job;
  make_recover_job(j, c, p.c1 - p.c0, p.survivors, op->rd, p.recover_roles, op->nd);
  j.done = degraded_read_parity_done;
  j.ctx = op;
  op->vol->mutable_stats().degraded_reads++;
  ParityJob* jp = &j;
  op->home->parity().submit(&jp, 1);
}

static void degraded_read_locked(Op* op) {
  Volume* v = op->vol;
  const Geometry& g = v->geometry();
  const uint32_t k = g.data_strips();
  const uint64_t failed = v->failed_mask_for(op->stripe);
  if (!g.survives(failed)) {
    unlock_stripe(op);
    return finish_op(op, -EIO);
  }
  if (!plan_degraded_read(g, op->stripe, op->ranges, failed, &op->rplan)) {
    unlock_stripe(op);  // nothing of this stripe is lost: a plain read
    op->kind = OpKind::Read;
    return start_read(op);
  }
  const DegradedReadPlan& p = op->rplan;
  const uint32_t L = p.c1 - p.c0;
  for (uint32_t role = 0; role < k + g.parity; role++) {
    op->rd[role] = nullptr;
    if (!(p.survivors >> role & 1)) continue;
    if (role < k && op->ranges[role].covers(p.c0, p.c1)) {
      op->rd[role] = user_ptr(op, op->stripe, role, p.c0);  // read straight into the caller's buffer
    } else if (!(op->rd[role] = op_buffer(op, L))) {
      return wait_buffers(op, degraded_read_locked);
    }
  }
  for (uint32_t i = 0; i < k; i++) {
    op->nd_pool[i] = false;
    if (!(p.recover_roles >> i & 1)) continue;
    if (op->ranges[i].a == p.c0 && op->ranges[i].b == p.c1) {
      op->nd[i] = user_ptr(op, op->stripe, i, p.c0);
    } else {
      if (!(op->nd[i] = op_buffer(op, L))) return wait_buffers(op, degraded_read_locked);
      op->nd_pool[i] = true;
    }
  }
  begin_phase(op, degraded_read_io_done);
  for (uint32_t role = 0; role < k + g.parity; role++) {
    const bool survivor = p.survivors >> role & 1;
    const bool requested = role < k && !op->ranges[role].empty() && !(p.recover_roles >> role & 1);
    const uint32_t m = role_member(g, op->stripe, role);
    if (requested)  // the caller's bytes of a healthy strip
      issue_member_io(op, m, MemberIo::Read, member_off(v, op->stripe, op->ranges[role].a),
                      user_ptr(op, op->stripe, role, op->ranges[role].a),
                      op->ranges[role].b - op->ranges[role].a, false);
    if (survivor && !(requested && op->ranges[role].covers(p.c0, p.c1)))
      issue_member_io(op, m, MemberIo::Read, member_off(v, op->stripe, p.c0), op->rd[role], L, false);
  }
  end_issue(op);
}

void start_degraded_read(Op* op) {
  if (lock_stripe(op, degraded_read_locked)) degraded_read_locked(op);
}

}  // namespace gpuraid
