// Rebuild of a run of consecutive stripes (parity levels), in four phases
// on the run's leading op:
//   1. every op of the run takes its stripe's lock (foreground I/O on a
//      stripe waits for that stripe only);
//   2. every surviving member reads its strips of the run's stripes: one
//      member I/O per survivor (RunBuilder joins the strips, contiguous on
//      the member), with the stripes the member back from a path loss still
//      holds left out;
//   3. one Recover job per stripe, all handed to the parity backend in one
//      submit;
//      (a copy-back, distributed_spare.h, whose target is readable where
//      the room keeps it reads that strip only, and recovers nothing);
//   4. one write of the rebuilt strips to the member being rebuilt; then
//      every op finishes through finish_maintenance(), which moves the
//      checkpoint over the run stripe by stripe.
// Every survivor of a stripe is read (not only k of them): each stripe then
// recovers from its first k roles that survive, as single-stripe rebuild
// does (data and P where P survives), and a member's read rate is the
// spare's write rate either way. RAID 50/60: a stripe of a sub-group the
// rebuilt member is not in has nothing to rebuild; the run's stripes of its
// own sub-group lie at consecutive rows of its members, so their strips
// still join into one member I/O.
#include "engine/ops/rebuild_run.h"

#include <algorithm>

#include "engine/ops/op.h"

namespace gpuraid {

namespace {

void all_locked(Op* lead);

uint64_t run_stripe(const RebuildRun* run, uint32_t i) { return run->ops[0]->stripe + i; }

// Ends every op of the run with `result` (skipped stripes with 0 when the
// run succeeded), in stripe order so that the checkpoint moves over them.
void finish_run(RebuildRun* run, int result) {
  Op* lead = run->ops[0];
  release_buffers(lead);
  if (result == 0) bump(counters_of(lead).rebuild_stripes_skipped, uint32_t(__builtin_popcountll(run->held)));
  Op* ops[kMaxRunStripes];
  const uint32_t n = run->n;
  std::copy(run->ops, run->ops + n, ops);  // the run may be reused once its last op finishes
  for (uint32_t i = 0; i < n; i++) finish_maintenance(ops[i], result);
}

void writes_done(Op* lead) {
  RebuildRun* run = lead->maint.run;
  Volume* v = lead->vol;
  const bool ok = absorb_errors(lead);
  const bool target_lost = v->rebuilding_member() != run->member;
  if (!ok || target_lost) return finish_run(run, -EIO);
  bump(counters_of(lead).rebuild_stripes_written, uint64_t(__builtin_popcountll(run->todo)));
  finish_run(run, 0);
}

void recovered(Op* lead) {
  RebuildRun* run = lead->maint.run;
  if (run->job_failed) return finish_run(run, -EIO);
  Volume* v = lead->vol;
  const uint32_t L = v->geometry().strip_bytes;
  begin_phase(lead, writes_done);
  RunBuilder w(lead, MemberIo::Write, false);
  for (uint64_t t = run->todo; t; t &= t - 1) {
    const uint32_t i = uint32_t(__builtin_ctzll(t));
    w.add(uint32_t(run->ops[i]->maint.rebuild_member), member_off(v, run_stripe(run, i), 0), run->out[i], L);
  }
  w.flush();
  end_issue(lead);
}

void job_done(ParityJob* j) {
  Op* lead = static_cast<Op*>(j->ctx);
  RebuildRun* run = lead->maint.run;
  if (j->status < 0) run->job_failed = true;
  if (--run->jobs_left == 0) recovered(lead);
}

// Survivors whose read of the run met an unreadable block (a medium error):
// where the group survives without them too (RAID 6 rebuilding one member)
// the run recovers around them and they stay (the block itself is left for
// a read or a scrub to correct); where it does not (a degraded RAID 5) the
// rebuild stops here (-ENODATA), the group degraded but whole, instead of
// failing a member it needs. A copy-back's run fails them as any error.
// False when the run stopped.
bool avoid_unreadable(Op* lead) {
  RebuildRun* run = lead->maint.run;
  Volume* v = lead->vol;
  const uint64_t u = lead->read.unreadable;
  lead->read.unreadable = 0;
  if (run->copied) {
    lead->errored |= u;
    lead->io_err = -ENODATA;
    return true;
  }
  if ((u >> run->member & 1) || !v->geometry().survives(v->unusable_mask() | run->avoid | u)) {
    absorb_errors(lead);  // other members' errors fail them as ever (the stop is told by REBUILD_FINISHED)
    finish_run(run, -ENODATA);
    return false;
  }
  run->avoid |= u;
  return true;
}

void reads_done(Op* lead) {
  RebuildRun* run = lead->maint.run;
  Volume* v = lead->vol;
  if (lead->read.unreadable && !avoid_unreadable(lead)) return;
  if (lead->errored) {  // a survivor failed: plan again without it (or give up)
    const bool ok = absorb_errors(lead);
    release_buffers(lead);
    return ok ? all_locked(lead) : finish_run(run, -EIO);
  }
  const Geometry& g = v->geometry();
  const Codec& c = v->codec();
  const uint32_t k = c.k(), n = k + c.m();
  ParityJob* jobs[kMaxRunStripes];
  uint32_t njobs = 0;
  for (uint64_t t = run->todo & ~run->copied; t; t &= t - 1) {
    const uint32_t i = uint32_t(__builtin_ctzll(t));
    const uint64_t s = run_stripe(run, i);
    const int target = run->ops[i]->maint.rebuild_member;
    const uint64_t lost = failed_roles(g, s, v->failed_mask_for(s) | 1ull << target);
    uint8_t* src[kMaxMembers];
    uint8_t* dst[kMaxMembers];
    uint64_t src_roles = 0, dst_roles = 0;
    for (uint32_t role = 0, got = 0; role < n; role++) {
      const uint32_t m = role_member(g, s, role);
      if (int(m) == target) {
        dst_roles |= 1ull << role;
        dst[role] = run->out[i];
      } else if (!(lost >> role & 1) && !(run->avoid >> m & 1) && got < k) {
        src_roles |= 1ull << role;
        src[role] = run->strip[i][m];
        got++;
      }
    }
    ParityJob& j = run->ops[i]->job;
    make_recover_job(j, c, v->geometry().strip_bytes, src_roles, src, dst_roles, dst);
    j.ctx = lead;
    j.done = job_done;
    jobs[njobs++] = &j;
  }
  run->job_failed = false;
  run->jobs_left = njobs + 1;  // held until submit returns: CPU backends finish inside it
  if (njobs) lead->home->parity().submit(jobs, njobs);
  if (--run->jobs_left == 0) recovered(lead);
}

// Every stripe of the run is locked (and this runs in a reactor turn of its
// own, never inside a submit: finishing stripes here may complete others).
void all_locked(Op* lead) {
  RebuildRun* run = lead->maint.run;
  Volume* v = lead->vol;
  const Geometry& g = v->geometry();
  if (v->rebuilding_member() != run->member || !g.survives(v->failed_mask())) return finish_run(run, -EIO);
  // The stripes to rebuild: those of the member's sub-group, less those a
  // member back from a path loss holds (it did not miss them). What each
  // reads: its members but the failed ones and its target (the rebuilt
  // member, or one of the spare room's it moves: each op has its own).
  const uint32_t width = v->codec().k() + v->codec().m();
  uint64_t skip[kMaxRunStripes];
  run->todo = run->held = run->copied = 0;
  const bool copy_back = v->copying_back();
  for (uint32_t i = 0; i < run->n; i++) {
    const uint64_t s = run_stripe(run, i);
    run->used[i] = 0;
    for (uint32_t role = 0; role < width; role++) run->used[i] |= 1ull << role_member(g, s, role);
    const int target = run->ops[i]->maint.rebuild_member;
    const uint64_t failed = v->failed_mask_for(s);
    skip[i] = failed | 1ull << target;
    if (!(run->used[i] >> target & 1)) continue;
    const bool held = v->hooks.rebuild_skip && v->hooks.rebuild_skip(s);
    (held ? run->held : run->todo) |= 1ull << i;
    // A copy-back reads the target's strip where the room keeps it (that
    // strip only, written as read); from parity where it cannot be read.
    if (copy_back && !held && !(failed >> target & 1)) {
      run->copied |= 1ull << i;
      skip[i] = ~(1ull << target);
    }
  }
  if (!run->todo) return finish_run(run, 0);
  const uint32_t L = g.strip_bytes;
  for (uint64_t t = run->todo; t; t &= t - 1) {
    const uint32_t i = uint32_t(__builtin_ctzll(t));
    for (uint64_t m = run->copied >> i & 1 ? 0 : run->used[i] & ~skip[i]; m; m &= m - 1)
      if (!(run->strip[i][__builtin_ctzll(m)] = op_buffer(lead, L))) return wait_buffers(lead, all_locked);
    if (!(run->out[i] = op_buffer(lead, L))) return wait_buffers(lead, all_locked);
  }
  begin_phase(lead, reads_done);
  RunBuilder r(lead, MemberIo::Read, false);
  for (uint64_t t = run->todo; t; t &= t - 1) {
    const uint32_t i = uint32_t(__builtin_ctzll(t));
    for (uint64_t m = run->used[i] & ~skip[i]; m; m &= m - 1) {
      const uint32_t member = uint32_t(__builtin_ctzll(m));
      // A copy: straight into what is written.
      uint8_t* into = run->copied >> i & 1 ? run->out[i] : run->strip[i][member];
      r.add(member, member_off(v, run_stripe(run, i), 0), into, L);
    }
  }
  r.flush();
  end_issue(lead);
}

void one_locked(Op* op) {
  RebuildRun* run = op->maint.run;
  if (++run->locked == run->n) resume_on_home(run->ops[0], all_locked);
}

}  // namespace

uint32_t rebuild_run_stripes(const Geometry& g, uint32_t run_bytes, size_t buffer_budget) {
  const size_t per_stripe = size_t(g.members) * g.strip_bytes;
  const size_t fit = std::min<size_t>(run_bytes / g.strip_bytes, buffer_budget / per_stripe);
  return uint32_t(std::clamp<size_t>(fit, 1, kMaxRunStripes));
}

void start_rebuild_run(RebuildRun* run) {
  run->locked = 0;
  run->avoid = 0;
  for (uint32_t i = 0; i < run->n; i++) {
    Op* op = run->ops[i];
    if (lock_stripe(op, one_locked)) one_locked(op);
  }
}

}  // namespace gpuraid
