// Group commit of the write-hole log: log entries written without FUA are
// made durable by one flush per member shared by every op of the reactor
// whose log writes completed by then. One flush is in flight per reactor
// and volume; ops arriving meanwhile wait for the next one (the one in
// flight may have been issued before their writes completed, so it does
// not cover them). With expensive flushes (fdatasync on a file, a drive
// cache flush) this turns one flush per parity member per write into one
// per member per batch.
#include "engine/invariant.h"
#include "engine/ops/op.h"
#include "engine/ppl/ppl_log.h"

namespace gpuraid {

static void start_flush(PplLog::FlushBatch& b, Op* leader);

// The leader's flushes completed: every op of the batch goes on (or fails).
static void flushed(Op* leader) {
  Volume* v = leader->vol;
  PplLog::FlushBatch& b = v->ppl->batch(leader->home->id());
  const bool survives = absorb_errors(leader);  // members whose flush failed are failed
  Op* riders = leader->ppl_wait_next;
  b.in_flight = false;
  // The next batch first: the ops run below may finish and be reused.
  if (b.head) {
    Op* next = b.head;
    b.head = b.tail = nullptr;
    start_flush(b, next);
  }
  const Geometry& g = v->geometry();
  for (Op* op = leader; op;) {
    Op* n = op == leader ? riders : op->ppl_wait_next;
    op->ppl_wait_next = nullptr;
    if (!survives) {
      op->ppl_fail(op, -EIO);
    } else {
      // A member failed here is not written: the others hold the new stripe.
      op->wplan.write_roles &= ~failed_roles(g, op->stripe, v->failed_mask_for(op->stripe));
      op->ppl_next(op);
    }
    op = n;
  }
}

// `leader` heads the ops (linked by ppl_wait_next) that this flush covers.
static void start_flush(PplLog::FlushBatch& b, Op* leader) {
  Volume* v = leader->vol;
  uint64_t members = 0, writes = 0;
  for (Op* op = leader; op; op = op->ppl_wait_next) {
    members |= op->ppl_flush;
    writes += uint64_t(__builtin_popcountll(op->ppl_flush));
  }
  members &= ~v->failed_mask();
  b.in_flight = true;
  v->ppl->count_batched(writes, uint64_t(__builtin_popcountll(members)));
  begin_phase(leader, flushed);
  for (uint64_t s = members; s; s &= s - 1)
    issue_member_io(leader, uint32_t(__builtin_ctzll(s)), MemberIo::Flush, 0, nullptr, 0, false);
  end_issue(leader);
}

void ppl_commit(Op* op) {
  op->ppl_wait_next = nullptr;
  if (!op->ppl_flush) return op->ppl_next(op);  // written with FUA: durable already
  PplLog::FlushBatch& b = op->vol->ppl->batch(op->home->id());
  if (!b.in_flight) return start_flush(b, op);
  (b.tail ? b.tail->ppl_wait_next : b.head) = op;
  b.tail = op;
}

}  // namespace gpuraid
