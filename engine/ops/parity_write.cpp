// Writes to one stripe of a parity level (RAID 5, 6, ec). With the stripe
// locked: take queued writes to the same stripe along (merge), plan
// full-stripe / read-modify-write / reconstruct-write / degraded, read what
// the plan needs, compute parity, write data and parity.
// Invariant: errors in the read phase fail those members and plan again
// (nothing written yet); errors in the write phase fail those members and
// leave every surviving member holding the new stripe, which is consistent.
#include <cstring>

#include "engine/ops/op.h"
#include "engine/ppl/ppl_log.h"

namespace gpuraid {

static void plan_write(Op* op);

static void fail_op(Op* op, int err);

// The region is dirty on disk (or its member failed) before planning, so
// the plan leaves out a member failed here.
static void intent_open(Op* op) {
  if (!op->intent_ok) return fail_op(op, -EIO);
  plan_write(op);
}

// The stripe is ours and its riders are taken: open the write intent (at
// once, or once the bitmap's worker wrote the region's bit), then plan.
static void go(Op* op) { begin_write_intent(op, intent_open); }

static void locked(Op* op) {
  take_riders(op, &VolumeStats::merged_writes);  // queued writes to this stripe ride along
  // A stream's write that leaves the rest of the stripe for its next
  // writes waits for them (ops/stripe_gather.h).
  if (op->vol->op_pool(op->home->id()).write_gather().try_hold(op, go)) return;
  go(op);
}

void start_parity_write(Op* op) {
  if (lock_stripe(op, locked)) locked(op);
}

// The one writer of strip i whose bytes cover [c0, c1), or nullptr.
static Op* sole_cover(Op* op, uint32_t i, uint32_t c0, uint32_t c1) {
  Op* found = nullptr;
  for (Op* c = op; c; c = (c == op ? op->rider_head : c->rider_next)) {
    const StripRange r = own_range(op, c, i);
    if (r.empty()) continue;
    if (found || !r.covers(c0, c1)) return nullptr;
    found = c;
  }
  return found;
}

// Lays every writer's bytes, in arrival order, over the engine buffers.
static void overlay(Op* op) {
  const Geometry& g = op->vol->geometry();
  const uint32_t k = g.data_strips(), c0 = op->w.plan.c0;
  for (Op* c = op; c; c = (c == op ? op->rider_head : c->rider_next))
    for (uint32_t i = 0; i < k; i++) {
      if (!op->w.nd_pool[i]) continue;
      const StripRange r = own_range(op, c, i);
      if (!r.empty()) memcpy(op->w.nd[i] + (r.a - c0), user_ptr(c, op->stripe, i, r.a), r.b - r.a);
    }
}

static void fail_op(Op* op, int err) {
  ppl_release(op);
  release_buffers(op);
  release_write_intent(op);
  unlock_stripe(op);
  finish_op(op, err);
}

// Members whose old block could not be read (op->w.unreadable): the write
// covered their blocks in [c0, c1) (plan_stripe_write), so each whose write
// took has its block back and counts as corrected, as a read's would.
static void count_rewritten(Op* op) {
  const Geometry& g = op->vol->geometry();
  for (uint32_t role = 0; role < g.data_strips() + g.parity; role++) {
    const uint32_t m = role_member(g, op->stripe, role);
    if (!(op->w.unreadable >> m & 1) || !(op->w.plan.write_roles >> role & 1) || (op->errored >> m & 1)) continue;
    bump(counters_of(op).corrected_reads);
    op->vol->read_corrected(m);
  }
}

static void write_done(Op* op) {
  if (op->w.unreadable) count_rewritten(op);
  const bool ok = absorb_errors(op);
  fail_op(op, ok ? 0 : -EIO);
}

static void write_stripe(Op* op);

static void compute_done(ParityJob* job) {
  Op* op = static_cast<Op*>(job->ctx);
  if (job->status < 0) return fail_op(op, -EIO);
  // Write-hole guard: the partial parity is on disk before the stripe is touched.
  if (op->vol->ppl) return ppl_log_then(op, write_stripe, fail_op);
  write_stripe(op);
}

static void write_stripe(Op* op) {
  Volume* v = op->vol;
  const Geometry& g = v->geometry();
  const uint32_t k = g.data_strips();
  const WritePlan& p = op->w.plan;
  begin_phase(op, write_done);
  v->locks().prefetch(&op->lock);
  op->w.ppl_written = 0;
  for (uint32_t role = 0; role < k + g.parity; role++) {
    if (!(p.write_roles >> role & 1)) continue;
    const uint32_t m = role_member(g, op->stripe, role);
    op->w.ppl_written |= 1ull << m;
    if (role < k) {
      // A block rebuilt around a medium error goes back over all of [c0, c1).
      const StripRange r = (p.rewrite_roles >> role & 1) ? StripRange{p.c0, p.c1} : op->ranges[role];
      issue_member_io(op, m, MemberIo::Write, member_off(v, op->stripe, r.a), op->w.nd[role] + (r.a - p.c0),
                      r.b - r.a, op->fua);
    } else
      issue_member_io(op, m, MemberIo::Write, member_off(v, op->stripe, p.c0), op->rd[role],
                      p.c1 - p.c0, op->fua);
  }
  end_issue(op);
}

static void submit_job(Op* op, ParityOp kind) {
  const Geometry& g = op->vol->geometry();
  const uint32_t k = g.data_strips(), m = g.parity;
  const WritePlan& p = op->w.plan;
  ParityJob& j = op->job;
  j.op = kind;
  j.codec = &op->vol->codec();
  j.len = p.c1 - p.c0;
  j.ndst = m;
  for (uint32_t r = 0; r < m; r++) j.dst[r] = op->rd[k + r];
  if (kind == ParityOp::Encode) {
    j.nsrc = k;
    for (uint32_t i = 0; i < k; i++) j.src[i] = op->w.nd[i];
  } else {  // Update: old data in rd[i], new in nd[i], for the written strips
    j.nsrc = 0;
    for (uint32_t i = 0; i < k; i++) {
      if (op->ranges[i].empty()) continue;
      j.src[j.nsrc] = op->rd[i];
      j.src2[j.nsrc] = op->w.nd[i];
      j.src_idx[j.nsrc++] = uint8_t(i);
    }
  }
  if (kind != ParityOp::Update || !ppl_fused_targets(op, j.pp)) j.pp[0] = nullptr;
  j.pp_made = false;
  j.done = compute_done;
  j.ctx = op;
  ParityJob* jp = &j;
  op->home->parity().submit(&jp, 1);
}

static void recovered(ParityJob* job) {
  Op* op = static_cast<Op*>(job->ctx);
  if (job->status < 0) return fail_op(op, -EIO);
  overlay(op);
  submit_job(op, ParityOp::Encode);
}

// A block the plan's reads could not read (a medium error): where the
// stripe's parity stands for its data and the group survives without the
// member, the write is planned again around it (never reading it) and
// writes it back, as md corrects a read error met by a write; else its
// member fails as on any error, unless the group needs it: then this write
// fails before it wrote anything and the member stays. True: plan again.
static bool write_around_unreadable(Op* op) {
  const uint64_t u = op->read.unreadable;
  if (!op->vol->parity_trusted(op->stripe)) {
    correctable_unreadable(op, false);
    return false;
  }
  for (uint64_t x = u; x; x &= x - 1)
    if (!op->vol->may_correct(uint32_t(__builtin_ctzll(x)), op->w.unreadable | u)) {
      correctable_unreadable(op, false);  // all of them as before: nothing is read around
      return false;
    }
  op->read.unreadable = 0;
  op->w.unreadable |= u;
  return true;
}

static void reads_done(Op* op) {
  const bool around = op->read.unreadable && write_around_unreadable(op);
  if (op->read.uncorrectable) {
    absorb_errors(op);
    return fail_op(op, -EIO);
  }
  if (op->errored || around) {
    const bool ok = absorb_errors(op);
    release_buffers(op);
    if (!ok) return fail_op(op, -EIO);
    return plan_write(op);  // nothing written yet: plan again around the failure
  }
  const Geometry& g = op->vol->geometry();
  const uint32_t k = g.data_strips();
  const WritePlan& p = op->w.plan;
  switch (p.mode) {
    case WriteMode::ReadModifyWrite:
      for (uint32_t i = 0; i < k; i++)
        if (!op->ranges[i].empty() && op->w.nd_pool[i]) memcpy(op->w.nd[i], op->rd[i], p.c1 - p.c0);
      overlay(op);
      return submit_job(op, ParityOp::Update);
    case WriteMode::DegradedWrite: {
      ParityJob& j = op->job;
      make_recover_job(j, op->vol->codec(), p.c1 - p.c0, p.read_roles, op->rd, p.recover_roles, op->w.nd);
      j.done = recovered;
      j.ctx = op;
      ParityJob* jp = &j;
      op->home->parity().submit(&jp, 1);
      return;
    }
    default:
      overlay(op);
      return submit_job(op, ParityOp::Encode);
  }
}

// Picks buffers for the plan: the caller's bytes where one writer covers a
// strip's columns (no copy), engine buffers elsewhere.
static bool take_buffers(Op* op) {
  const Geometry& g = op->vol->geometry();
  const uint32_t k = g.data_strips(), m = g.parity;
  const WritePlan& p = op->w.plan;
  const uint32_t L = p.c1 - p.c0;
  const bool rmw = p.mode == WriteMode::ReadModifyWrite;
  for (uint32_t i = 0; i < k; i++) {
    op->w.nd[i] = op->rd[i] = nullptr;
    op->w.nd_pool[i] = false;
    if (rmw && op->ranges[i].empty()) continue;  // untouched strips play no part in an update
    if (Op* c = sole_cover(op, i, p.c0, p.c1)) {
      op->w.nd[i] = user_ptr(c, op->stripe, i, p.c0);
    } else {
      if (!(op->w.nd[i] = op_buffer(op, L))) return false;
      op->w.nd_pool[i] = true;
    }
  }
  for (uint32_t r = 0; r < m; r++)
    if (!(op->rd[k + r] = op_buffer(op, L))) return false;  // parity: read (RMW) and output
  for (uint64_t s = p.read_roles; s; s &= s - 1) {
    uint32_t role = uint32_t(__builtin_ctzll(s));
    if (role >= k) continue;
    // Old data lands in the new-content buffer when that is ours and will be
    // overlaid later (reconstruct, degraded); RMW keeps old and new apart.
    if (op->w.nd_pool[role] && !rmw) op->rd[role] = op->w.nd[role];
    else if (!(op->rd[role] = op_buffer(op, L))) return false;
  }
  return true;
}

// A degraded stripe's new parity stands for its failed strips and is
// computed over strips this write leaves as they are: earlier writes to
// them that a volatile cache may still hold are made durable first
// (io/member_durability.h says why). None for a full-stripe write, nor
// where only parity members failed.
static uint64_t members_to_flush(const Op* op, uint64_t failed) {
  Volume* v = op->vol;
  const Geometry& g = v->geometry();
  if (!failed || op->w.plan.mode == WriteMode::FullStripe) return 0;
  const uint32_t k = g.data_strips();
  uint64_t data = 0;
  for (uint32_t i = 0; i < k; i++) data |= 1ull << role_member(g, op->stripe, i);
  if (!(data & failed)) return 0;
  uint64_t need = 0;
  for (uint64_t s = data & ~failed; s; s &= s - 1) {
    uint32_t m = uint32_t(__builtin_ctzll(s));
    // A member in the spare room: its strip here is on another member's drive.
    if (v->room_mask() >> m & 1) m = uint32_t(v->room_drive(m, g.group_row(op->stripe)));
    if (v->member(m)->volatile_cache() && v->durability().dirty(m)) need |= 1ull << m;
  }
  return need;
}

static void plan_write(Op* op) {
  Volume* v = op->vol;
  const Geometry& g = v->geometry();
  const uint64_t failed = v->failed_mask_for(op->stripe);
  if (!g.survives(failed)) return fail_op(op, -EIO);
  const bool suspect = !v->parity_trusted(op->stripe);
  // Members read around for a medium error, while the group survives them
  // (another may have failed since: then read again as they are).
  if (op->w.unreadable && !g.survives(failed | op->w.unreadable)) op->w.unreadable = 0;
  op->w.plan = plan_stripe_write(g, op->stripe, op->ranges, failed, suspect, op->w.unreadable);
  const WritePlan& p = op->w.plan;
  if (!take_buffers(op)) return wait_buffers(op, plan_write);
  VolumeStats& st = counters_of(op);
  switch (p.mode) {
    case WriteMode::FullStripe: bump(st.full_stripe_writes); break;
    case WriteMode::ReadModifyWrite: bump(st.rmw_writes); break;
    case WriteMode::ReconstructWrite: bump(st.rcw_writes); break;
    case WriteMode::DegradedWrite: bump(st.degraded_writes); break;
  }
  begin_phase(op, reads_done);
  for (uint64_t s = p.read_roles; s; s &= s - 1) {
    uint32_t role = uint32_t(__builtin_ctzll(s));
    issue_member_io(op, role_member(g, op->stripe, role), MemberIo::Read,
                    member_off(v, op->stripe, p.c0), op->rd[role], p.c1 - p.c0, false);
  }
  // With the reads: both end before anything is written. A member that
  // cannot flush fails, and the write is planned again without it.
  if (const uint64_t f = members_to_flush(op, failed)) {
    bump(st.degraded_flushes);
    for (uint64_t s = f; s; s &= s - 1)
      issue_member_io(op, uint32_t(__builtin_ctzll(s)), MemberIo::Flush, 0, nullptr, 0, false);
  }
  end_issue(op);
}

}  // namespace gpuraid
