// Background work on one stripe, with the stripe locked so foreground I/O
// stays correct meanwhile:
//   Resync  - parity (or mirror copies) recomputed from the data: after an
//             unclean stop (write-intent bitmap) and for background init.
//   Rebuild - the strip of the member being rebuilt, rebuilt from k
//             survivors; the checkpoint moves past the stripe before the
//             lock is released, so no write can miss the new member.
//   Scrub   - every strip read and checked; with m >= 2 a single corrupt
//             strip is located (the one whose rebuilt content makes the
//             stripe consistent); repair rewrites it, or else the parity.
//             A strip that cannot be read (a medium error) is rebuilt from
//             the others, checked with them and written back, as md's
//             check corrects read errors (parity levels; mirrors read
//             another copy, in every kind of work, and write it back).
#include <cstring>

#include "engine/ops/op.h"

namespace gpuraid {

namespace {

using M = Volume::Maintenance;

void maint_locked(Op* op);

void finish_now(Op* op, int result) {
  release_buffers(op);
  release_write_intent(op);
  unlock_stripe(op);
  finish_op(op, result);
}

// Member holding role `role` of the op's stripe (mirrors: role = copy of strip 0..k-1 is not used).
uint32_t member_of(Op* op, uint32_t role) { return role_member(op->vol->geometry(), op->stripe, role); }

// Repairs write into regions that may be clean: they hold the write
// intent like foreground writes, so a crash mid-repair is resynced. A
// member whose bitmap write failed is failed (and not written); then(op)
// runs once the intent is open, op->intent_ok false when the group does
// not survive that.
static void begin_repair(Op* op, void (*then)(Op*)) {
  if (op->maint.kind != M::ScrubRepair) {
    op->intent_ok = true;
    return then(op);
  }
  begin_write_intent(op, then);
}

void writes_done(Op* op) {
  // A scrub's unreadable blocks written back: counted where the write took.
  for (uint64_t c = op->maint.corrected & ~op->errored & ~op->vol->unusable_mask(); c; c &= c - 1) {
    bump(counters_of(op).corrected_reads);
    op->vol->read_corrected(uint32_t(__builtin_ctzll(c)));
  }
  // Errors first: a member a repair could not write is failed (and the
  // bitmap tracking on) before the intent ends, so its region is tracked.
  const bool ok = absorb_errors(op);
  release_write_intent(op);
  const bool rebuild_target_lost = op->maint.kind == M::Rebuild && op->vol->rebuilding_member() != op->maint.rebuilding;
  if (op->maint.kind == M::Rebuild && ok && !rebuild_target_lost) bump(counters_of(op).rebuild_stripes_written);
  finish_maintenance(op, ok && !rebuild_target_lost ? 0 : -EIO);
}

void write_role(Op* op, uint32_t member, uint8_t* buf) {
  const Geometry& g = op->vol->geometry();
  issue_member_io(op, member, MemberIo::Write, member_off(op->vol, op->stripe, 0), buf, g.strip_bytes, false);
}

// A scrub's stripe with an unreadable block it cannot rebuild (its parity
// not trusted, or the group needs the member): left as it is (a write over
// the block makes it readable), the member kept, the stripe skipped.
static void skip_unreadable(Op* op) {
  op->read.unreadable = 0;
  op->maint.res->skipped = true;
  const bool ok = absorb_errors(op);  // other members' errors fail them as ever
  finish_maintenance(op, ok ? 0 : -EIO);
}

// --- mirrors -------------------------------------------------------------

static void mirror_write_targets(Op* op);

// Scrub of a mirrored strip: the copy the others are checked against (and,
// repairing, made equal to). A strict majority of three or more copies
// outvotes the rest (*verified); otherwise the first copy read is kept,
// unverified: of two copies that differ, which is right cannot be known
// without a checksum.
static uint8_t* copy_to_keep(Op* op, uint32_t i, uint64_t failed, bool* verified, int* kept) {
  const Geometry& g = op->vol->geometry();
  // Copy c as read (nullptr: its member failed or was not read).
  const auto copy = [&](uint32_t c) {
    const uint32_t m = g.data_member(op->stripe, i, c);
    return (failed >> m & 1) ? nullptr : op->maint.copy[m];
  };
  uint8_t* best = nullptr;
  uint32_t best_votes = 0, read = 0;
  for (uint32_t c = 0; c < g.copies(); c++) {
    uint8_t* p = copy(c);
    if (!p) continue;
    read++;
    uint32_t votes = 0;
    for (uint32_t d = 0; d < g.copies(); d++) {
      const uint8_t* q = copy(d);
      votes += q && (q == p || memcmp(q, p, g.strip_bytes) == 0);
    }
    if (votes > best_votes) best = p, best_votes = votes, *kept = int(g.data_member(op->stripe, i, c));
  }
  *verified = read >= 3 && best_votes * 2 > read;
  if (*verified) return best;
  for (uint32_t c = 0; c < g.copies(); c++)  // the first copy read
    if (copy(c) == op->rd[i]) *kept = int(g.data_member(op->stripe, i, c));
  return op->rd[i];
}

// A mirrored strip with no copy left to read (the others failed, or met
// unreadable): the members stay; a scrub or resync skips the stripe, a
// rebuild stops there (-ENODATA: the group stays degraded but whole).
static void no_copy_left(Op* op) {
  if (op->maint.kind != M::Rebuild) return skip_unreadable(op);
  op->read.unreadable = 0;
  absorb_errors(op);  // other members' errors fail them as ever
  finish_maintenance(op, -ENODATA);
}

void mirror_reads_done(Op* op) {
  Volume* v = op->vol;
  const Geometry& g = v->geometry();
  // Copies that met an unreadable block: read again from the others (the
  // stripe locked meanwhile) and written back from them (maint.corrected).
  const uint64_t unreadable = op->read.unreadable ? correctable_unreadable(op) : 0;
  if (op->read.uncorrectable) return no_copy_left(op);
  op->maint.corrected |= unreadable;
  if (op->errored || unreadable) {
    const bool ok = absorb_errors(op);
    release_buffers(op);
    return ok ? maint_locked(op) : finish_maintenance(op, -EIO);
  }
  const uint64_t failed = v->failed_mask_for(op->stripe);
  // The copies to write (the rebuilt member's, or those that differ), each from its strip's first copy.
  uint64_t targets = 0;
  uint8_t* src_of[kMaxMembers];
  const bool scrub = op->maint.kind == M::Scrub || op->maint.kind == M::ScrubRepair;
  bool all_verified = true;
  for (uint32_t i = 0; i < g.data_strips(); i++) {
    // rd[i] holds the first readable copy; maint.copy[m] each copy read (scrub: all).
    uint8_t* src = op->rd[i];
    if (!src) continue;
    bool verified = true;
    int kept = -1;
    bool strip_differs = false;
    if (scrub) src = copy_to_keep(op, i, failed, &verified, &kept);
    for (uint32_t c = 0; c < g.copies(); c++) {
      uint32_t m = g.data_member(op->stripe, i, c);
      bool target = false;
      if (op->maint.kind == M::Rebuild) target = int(m) == op->maint.rebuild_member;
      // Resync: every other copy, made the first's (only that one was read).
      else if (op->maint.kind == M::Resync) target = !(failed >> m & 1) && op->maint.copy[m] != src;
      else if (!(failed >> m & 1) && op->maint.copy[m] && op->maint.copy[m] != src) {
        const bool differs = memcmp(op->maint.copy[m], src, g.strip_bytes) != 0;
        if (differs) op->maint.res->mismatch_rows |= 1u << c;
        strip_differs |= differs;
        target = differs && op->maint.kind != M::Scrub;
      }
      if ((op->maint.corrected >> m & 1) && !(failed >> m & 1)) target = true;  // met unreadable: written back
      if (target) {
        targets |= 1ull << m;
        src_of[m] = src;
      }
    }
    if (scrub && strip_differs && !verified) {
      all_verified = false;
      op->maint.res->trusted_member = kept;
    }
  }
  // A repair that had to keep a copy nobody vouched for (read by mirror_write_targets).
  op->maint.res->made_consistent = op->maint.kind == M::ScrubRepair && !all_verified;
  op->maint.targets = targets;
  for (uint64_t t = targets; t; t &= t - 1) op->maint.src_of[__builtin_ctzll(t)] = src_of[__builtin_ctzll(t)];
  if (!targets) {
    op->intent_ok = true;
    return mirror_write_targets(op);
  }
  begin_repair(op, mirror_write_targets);
}

// The copies to write, once the write intent (a repair's) is open.
static void mirror_write_targets(Op* op) {
  if (!op->intent_ok) return finish_maintenance(op, -EIO);
  Volume* v = op->vol;
  uint64_t targets = op->maint.targets;
  if (op->maint.res->mismatch_rows && op->maint.kind == M::ScrubRepair)
    op->maint.res->repaired = !op->maint.res->made_consistent;
  if (op->maint.kind != M::Rebuild) targets &= ~v->failed_mask();  // failed by the write intent
  begin_phase(op, writes_done);
  for (uint64_t t = targets; t; t &= t - 1) {
    const uint32_t m = uint32_t(__builtin_ctzll(t));
    write_role(op, m, op->maint.src_of[m]);
  }
  end_issue(op);
}

void mirror_locked(Op* op) {
  Volume* v = op->vol;
  const Geometry& g = v->geometry();
  const bool rebuild = op->maint.kind == M::Rebuild;
  const bool scrub = op->maint.kind == M::Scrub || op->maint.kind == M::ScrubRepair;
  // Copies met unreadable (maint.corrected) are not read again: written back.
  const uint64_t failed = v->failed_mask_for(op->stripe) | (rebuild ? 1ull << op->maint.rebuild_member : 0);
  const uint64_t avoid = failed | op->maint.corrected;
  // Pass 1: a buffer for every copy to read (the first copy of each strip,
  // every copy when scrubbing), before any I/O is issued.
  for (uint32_t m = 0; m < g.members; m++) op->maint.copy[m] = nullptr;
  for (uint32_t i = 0; i < g.data_strips(); i++) {
    op->rd[i] = nullptr;
    if (rebuild && g.data_member(op->stripe, i, 0) / g.copies() != uint32_t(op->maint.rebuild_member) / g.copies())
      continue;  // the rebuilt member holds copies of one strip only
    for (uint32_t c = 0; c < g.copies(); c++) {
      uint32_t m = g.data_member(op->stripe, i, c);
      if ((avoid >> m & 1) || (op->rd[i] && !scrub)) continue;
      uint8_t* b = op_buffer(op, g.strip_bytes);
      if (!b) return wait_buffers(op, maint_locked);
      if (!op->rd[i]) op->rd[i] = b;
      op->maint.copy[m] = b;
    }
    if (op->rd[i]) continue;
    // No copy left to read from: failed ones only (the group fails with
    // them), or unreadable ones the group cannot read around.
    const uint64_t unreadable = strip_copies(g, op->stripe, i) & op->maint.corrected & ~failed;
    if (!unreadable) return finish_maintenance(op, -EIO);
    unreadable_uncorrected(op, unreadable, false);
    return no_copy_left(op);
  }
  // Pass 2: read them.
  begin_phase(op, mirror_reads_done);
  for (uint32_t m = 0; m < g.members; m++)
    if (op->maint.copy[m])
      issue_member_io(op, m, MemberIo::Read, member_off(v, op->stripe, 0), op->maint.copy[m], g.strip_bytes, false);
  end_issue(op);
}

// --- parity levels -------------------------------------------------------

void parity_computed(ParityJob* job);

// Runs one parity job inline on this thread's CPU backend: the scrub's
// rare paths (a mismatch to locate, parity made consistent, unreadable
// strips rebuilt). Returns its status.
static int run_on_cpu(ParityJob& j) {
  thread_local std::unique_ptr<ParityBackend> cpu = make_cpu_backend();
  j.done = [](ParityJob*) {};
  ParityJob* p = &j;
  cpu->submit(&p, 1);
  return j.status;
}

// Roles `lost` of the op's stripe, rebuilt on the CPU (into dst[role]) from
// the first k other roles read (op->rd).
static int recover_on_cpu(Op* op, uint64_t lost, uint8_t* const* dst) {
  const Geometry& g = op->vol->geometry();
  const uint32_t k = g.data_strips(), n = k + g.parity;
  uint64_t src = 0;
  for (uint32_t role = 0, got = 0; role < n && got < k; role++)
    if (!(lost >> role & 1)) src |= 1ull << role, got++;
  ParityJob r;
  make_recover_job(r, op->vol->codec(), g.strip_bytes, src, op->rd, lost, dst);
  return run_on_cpu(r);
}

// Scrub with m >= 2: which single role, rebuilt from the others, makes the
// stripe consistent? Rare (only on mismatch), so done inline on the CPU.
int locate_corrupt_role(Op* op, uint8_t* scratch) {
  const Codec& c = op->vol->codec();
  const uint32_t n = c.k() + c.m(), L = op->vol->geometry().strip_bytes;
  uint8_t* dst[kMaxMembers];
  int found = -1;
  for (uint32_t bad = 0; bad < n; bad++) {
    dst[bad] = scratch;
    const int rs = recover_on_cpu(op, 1ull << bad, dst);
    ParityJob v;
    v.op = ParityOp::Verify;
    v.codec = &c;
    v.len = L;
    v.nsrc = n;
    for (uint32_t i = 0; i < n; i++) v.src[i] = i == bad ? scratch : op->rd[i];
    if (rs == 0 && run_on_cpu(v) == 0 && v.mismatch_rows == 0) {
      if (found >= 0) return -1;  // two explanations: not located
      found = int(bad);
    }
  }
  if (found >= 0) {  // leave the rebuilt content of the located role in scratch
    dst[found] = scratch;
    recover_on_cpu(op, 1ull << found, dst);
  }
  return found;
}

// The roles of the op's stripe on members whose read met an unreadable
// block (maint.corrected).
static uint64_t corrected_roles(Op* op) {
  const uint32_t n = op->vol->geometry().data_strips() + op->vol->geometry().parity;
  uint64_t roles = 0;
  for (uint32_t role = 0; role < n; role++)
    if (op->maint.corrected >> member_of(op, role) & 1) roles |= 1ull << role;
  return roles;
}

// A scrub's or resync's strips on members whose read met an unreadable
// block, rebuilt in place (rd) from k of the others on the CPU: rare. Then
// used as any strip read and written back.
static bool rebuild_unreadable(Op* op) { return recover_on_cpu(op, corrected_roles(op), op->rd) == 0; }

// An init's or resync's read that met an unreadable data block. Where no
// write an unclean stop tore can be left in the stripe, its parity stands
// for every column a user wrote: above the init's checkpoint writes compute
// it whole (never by read-modify-write) and columns nobody wrote hold no
// data; in a region an unclean stop left dirty, the start replayed the
// write-hole log over every torn stripe. The stripe is then read again with
// its parity instead of that block (parity_locked), the block rebuilt,
// written back and the stripe resynced as any, as md rewrites a read error
// during a resync. In a dirty region no log made consistent (no guard, or
// members forced in) the parity may not stand for the data: the member
// fails as on any read error, or, where the group needs it, the stripe
// fails (the work stops there, its region stays dirty, the member stays).
static void resync_unreadable(Op* op) {
  Volume* v = op->vol;
  const bool consistent = !(v->hooks.parity_may_be_torn && v->hooks.parity_may_be_torn(op->stripe));
  const uint64_t bad = correctable_unreadable(op, consistent);
  if (op->read.uncorrectable) {
    absorb_errors(op);
    return finish_maintenance(op, -EIO);
  }
  op->maint.corrected |= bad;
  const bool ok = absorb_errors(op);
  release_buffers(op);
  if (!ok) return finish_maintenance(op, -EIO);
  maint_locked(op);
}

void parity_reads_done(Op* op) {
  if (op->read.unreadable && op->maint.kind == M::Resync) return resync_unreadable(op);
  if (op->read.unreadable && !op->vol->parity_trusted(op->stripe)) {
    unreadable_uncorrected(op, op->read.unreadable, true);
    return skip_unreadable(op);
  }
  if (op->maint.kind != M::Resync) op->maint.corrected = op->read.unreadable ? correctable_unreadable(op) : 0;
  if (op->read.uncorrectable) return skip_unreadable(op);
  if (op->errored) {
    const bool ok = absorb_errors(op);
    release_buffers(op);
    return ok ? maint_locked(op) : finish_maintenance(op, -EIO);
  }
  if (op->maint.corrected && !rebuild_unreadable(op)) return finish_maintenance(op, -EIO);
  Volume* v = op->vol;
  const Codec& c = v->codec();
  const uint32_t k = c.k(), m = c.m(), L = v->geometry().strip_bytes;
  ParityJob& j = op->job;
  j.codec = &c;
  j.len = L;
  j.ctx = op;
  j.done = parity_computed;
  j.nsrc = j.ndst = 0;
  switch (op->maint.kind) {
    case M::Resync:
      j.op = ParityOp::Encode;
      j.nsrc = k;
      j.ndst = m;
      for (uint32_t i = 0; i < k; i++) j.src[i] = op->rd[i];
      for (uint32_t r = 0; r < m; r++) j.dst[r] = op->maint.parity_out[r];
      break;
    case M::Rebuild:
      j.op = ParityOp::Recover;
      for (uint32_t role = 0; role < k + m; role++)
        if (op->rd[role]) {
          j.src[j.nsrc] = op->rd[role];
          j.src_idx[j.nsrc++] = uint8_t(role);
        }
      j.ndst = 1;
      j.dst[0] = op->maint.out;
      j.dst_idx[0] = uint8_t(op->maint.rebuild_role);
      break;
    case M::Scrub:
    case M::ScrubRepair:
      j.op = ParityOp::Verify;
      j.nsrc = k + m;
      for (uint32_t i = 0; i < k + m; i++) j.src[i] = op->rd[i];
      break;
  }
  ParityJob* jp = &j;
  op->home->parity().submit(&jp, 1);
}

static void parity_write_back(Op* op);

void parity_computed(ParityJob* job) {
  Op* op = static_cast<Op*>(job->ctx);
  if (job->status < 0) return finish_maintenance(op, -EIO);
  const uint32_t m = op->vol->geometry().parity;
  const bool scrub = op->maint.kind == M::Scrub || op->maint.kind == M::ScrubRepair;
  if (scrub && job->mismatch_rows) {
    op->maint.res->mismatch_rows = job->mismatch_rows;
    if (m >= 2) {
      op->maint.res->located_role = locate_corrupt_role(op, op->maint.out);
      if (op->maint.res->located_role >= 0) op->maint.res->located_member = int(member_of(op, uint32_t(op->maint.res->located_role)));
    }
    return begin_repair(op, parity_write_back);
  }
  op->intent_ok = true;
  parity_write_back(op);
}

// What the stripe's maintenance writes, once a repair's write intent is
// open. After the write intent: a member it failed is not written.
static void parity_write_back(Op* op) {
  if (!op->intent_ok) return finish_maintenance(op, -EIO);
  ParityJob* job = &op->job;
  Volume* v = op->vol;
  const Geometry& g = v->geometry();
  const uint32_t k = g.data_strips(), m = g.parity;
  const uint64_t failed = v->failed_mask_for(op->stripe);
  // What each member is written (one write each, the last set wins).
  uint8_t* out[kMaxMembers] = {};
  auto write_unless_failed = [&](uint32_t member, uint8_t* buf) {
    if (!(failed >> member & 1)) out[member] = buf;
  };
  // Unreadable blocks, rebuilt (rebuild_unreadable), first: what the kind
  // writes after (a resync's new parity, a repair's strips) wins.
  for (uint64_t r = corrected_roles(op); r; r &= r - 1) {
    const uint32_t role = uint32_t(__builtin_ctzll(r));
    write_unless_failed(member_of(op, role), op->rd[role]);
  }
  switch (op->maint.kind) {
    case M::Resync:
      for (uint32_t r = 0; r < m; r++) write_unless_failed(member_of(op, k + r), op->maint.parity_out[r]);
      break;
    case M::Rebuild: out[op->maint.rebuild_member] = op->maint.out; break;
    case M::Scrub:
    case M::ScrubRepair: {
      if (!job->mismatch_rows || op->maint.kind != M::ScrubRepair) break;
      if (op->maint.res->located_role >= 0) {
        op->maint.res->repaired = true;
        write_unless_failed(uint32_t(op->maint.res->located_member), op->maint.out);
        break;
      }
      // Not located: make parity agree with the data (as md's repair does),
      // and say that this verified nothing.
      op->maint.res->made_consistent = true;
      ParityJob e;
      e.op = ParityOp::Encode;
      e.codec = &v->codec();
      e.len = g.strip_bytes;
      e.nsrc = k;
      e.ndst = m;
      for (uint32_t i = 0; i < k; i++) e.src[i] = op->rd[i];
      for (uint32_t r = 0; r < m; r++) e.dst[r] = op->rd[k + r];
      if (run_on_cpu(e) < 0) {  // no parity computed: write none, report the stripe unrepaired
        op->maint.res->made_consistent = false;
        break;
      }
      for (uint32_t r = 0; r < m; r++) write_unless_failed(member_of(op, k + r), op->rd[k + r]);
      break;
    }
  }
  begin_phase(op, writes_done);
  for (uint32_t mem = 0; mem < g.members; mem++)
    if (out[mem]) write_role(op, mem, out[mem]);
  end_issue(op);
}

void parity_locked(Op* op) {
  Volume* v = op->vol;
  const Geometry& g = v->geometry();
  const uint32_t k = g.data_strips(), m = g.parity, L = g.strip_bytes;
  const bool rebuild = op->maint.kind == M::Rebuild;
  const uint64_t failed = v->failed_mask_for(op->stripe) | (rebuild ? 1ull << op->maint.rebuild_member : 0);
  const uint64_t lost = failed_roles(g, op->stripe, failed);
  if (!g.survives(rebuild ? v->failed_mask() : failed)) return finish_maintenance(op, -EIO);
  uint64_t reads = 0;
  // Resync: roles whose block could not be read (resync_unreadable) are
  // rebuilt from the parity, read instead; written back with it.
  uint64_t rebuilt = 0;
  if (op->maint.kind == M::Resync) {
    if (lost & ((1ull << k) - 1)) {  // a data strip is lost: nothing to recompute from
      op->maint.res->skipped = true;
      return finish_maintenance(op, 0);
    }
    reads = (1ull << k) - 1;
    if ((rebuilt = corrected_roles(op))) {
      reads = ((1ull << (k + m)) - 1) & ~rebuilt;
      if (lost || uint32_t(__builtin_popcountll(rebuilt)) > m) {  // not enough left to rebuild them from
        unreadable_uncorrected(op, op->maint.corrected & ~failed, false);
        return finish_maintenance(op, -EIO);
      }
    }
  } else if (rebuild) {
    int target = -1;
    for (uint32_t role = 0; role < k + m; role++)
      if (int(member_of(op, role)) == op->maint.rebuild_member) target = int(role);
    if (target < 0) return finish_maintenance(op, 0);  // raid50/60: the stripe lives in another sub-group
    uint32_t n = 0;
    for (uint32_t role = 0; role < k + m && n < k; role++)
      if (!(lost >> role & 1)) {
        reads |= 1ull << role;
        n++;
      }
    if (n < k) return finish_maintenance(op, -EIO);
    op->maint.rebuild_role = uint32_t(target);
  } else {
    if (lost) {  // scrub checks complete stripes only
      op->maint.res->skipped = true;
      return finish_maintenance(op, 0);
    }
    reads = (1ull << (k + m)) - 1;
  }
  for (uint32_t role = 0; role < k + m; role++) {
    op->rd[role] = nullptr;
    if (((reads | rebuilt) >> role & 1) && !(op->rd[role] = op_buffer(op, L))) return wait_buffers(op, maint_locked);
  }
  // Outputs: parity rows (resync), the rebuilt strip or the located one.
  op->maint.out = nullptr;
  if (op->maint.kind == M::Resync) {
    for (uint32_t r = 0; r < m; r++)
      if (!(op->maint.parity_out[r] = op_buffer(op, L))) return wait_buffers(op, maint_locked);
  } else if (!(op->maint.out = op_buffer(op, L))) {
    return wait_buffers(op, maint_locked);
  }
  begin_phase(op, parity_reads_done);
  for (uint32_t role = 0; role < k + m; role++)
    if (reads >> role & 1)
      issue_member_io(op, member_of(op, role), MemberIo::Read, member_off(v, op->stripe, 0), op->rd[role], L, false);
  end_issue(op);
}

void skip_rebuild(Op* op) {
  op->maint.res->skipped = true;
  bump(counters_of(op).rebuild_stripes_skipped);
  finish_maintenance(op, 0);
}

void maint_locked(Op* op) {
  const Geometry& g = op->vol->geometry();
  if (!g.has_parity() && !g.is_mirror()) {  // no redundancy: nothing to rebuild or scrub
    op->maint.res->skipped = true;
    return finish_maintenance(op, 0);
  }
  if (op->maint.kind == M::Rebuild && op->vol->rebuilding_member() != op->maint.rebuilding) return finish_maintenance(op, -EIO);
  // A member back from a path loss holds every stripe it did not miss:
  // finished in the next turn (with the lock held), never inside submit,
  // where it could complete other rebuilt stripes and recurse.
  if (op->maint.kind == M::Rebuild && op->vol->hooks.rebuild_skip && op->vol->hooks.rebuild_skip(op->stripe))
    return resume_on_home(op, skip_rebuild);
  if (g.is_mirror()) mirror_locked(op);
  else parity_locked(op);
}

}  // namespace

// Rebuilt stripes count in order: a stripe rebuilt ahead of the checkpoint
// keeps its lock until the checkpoint reaches it, so no write can skip the
// new member for a stripe it already holds (which the checkpoint would then
// vouch for). A failed rebuild releases everything (-ECANCELED: not a
// failure of their own).
void finish_maintenance(Op* op, int result) {
  if (op->maint.kind != M::Rebuild) return finish_now(op, result);
  Volume* v = op->vol;
  std::vector<Op*>& ahead = v->rebuilt_ahead();
  if (result != 0) {
    if (result != -ECANCELED) v->rebuild_broken().store(true);
    finish_now(op, result);
    for (Op* a : ahead) finish_now(a, -ECANCELED);  // the failure is told once, by its own stripe
    ahead.clear();
    return;
  }
  release_buffers(op);
  release_write_intent(op);
  ahead.push_back(op);
  for (bool moved = true; moved;) {
    moved = false;
    for (size_t i = 0; i < ahead.size(); i++) {
      if (ahead[i]->stripe != v->rebuild_checkpoint()) continue;
      Op* a = ahead[i];
      ahead.erase(ahead.begin() + long(i));
      v->advance_rebuild(a->stripe + 1);
      unlock_stripe(a);
      finish_op(a, 0);
      moved = true;
      break;
    }
  }
  // After a failed stripe (a rebuild that stopped, its member kept: an
  // unreadable block) the checkpoint stays below it: what this attempt
  // finishes past it would hold its stripe lock for good. Released, not
  // counted: the next attempt redoes it from the checkpoint.
  if (v->rebuild_broken().load()) {
    for (Op* a : ahead) finish_now(a, -ECANCELED);
    ahead.clear();
  }
}

void start_maintenance(Op* op) {
  if (lock_stripe(op, maint_locked)) maint_locked(op);
}

}  // namespace gpuraid
