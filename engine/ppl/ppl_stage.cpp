// Partial parity of a planned stripe write, per parity row r written:
//   pp_r = new parity row r + row r over the data ranges the write puts on
//          members it writes (GF(2^8): + is XOR).
// That is row r over the stripe's data as the write leaves it with those
// ranges left out: what replay needs when they may be torn. Data of failed
// members stays in (its new contents, as the write computed them), so a
// replay with members missing rebuilds them right.
//
// Made after the parity job, while the new parity and data are in the
// cache. (A read-modify-write has the same bytes before it, old parity +
// old data; made there in a pass of its own it paid the first touch of
// both: slower, measured.) A read-modify-write gets them from the update's
// own pass where the backend makes them (ParityJob::pp, ppl_fused_targets):
// the CPU's, for RAID 5 and for one strip of RAID 6 / ec on AVX-512BW. Row
// 0's then goes over the old data it was made from (dead after the update,
// and in the cache: a buffer of its own cost a fetch of every line it
// wrote, a seventh of the guard's cost on RAID 5, measured), and the log
// writes it from there.
#include <isa-l/erasure_code.h>

#include <algorithm>
#include <cstring>

#include "engine/ops/op.h"
#include "engine/parity/xor_cached.h"
#include "engine/ppl/ppl_log.h"
#include "engine/ppl/ppl_sum.h"

namespace gpuraid {

// The batch holding the op's entries is on disk (or some of its log writes
// failed: those members are failed and no longer written).
void ppl_logged(Op* op) {
  if (op->errored) {
    if (!absorb_errors(op)) return op->w.ppl_fail(op, -EIO);
    // Members failed here are not written: the others hold the new stripe.
    const Geometry& g = op->vol->geometry();
    op->w.plan.write_roles &= ~failed_roles(g, op->stripe, op->vol->failed_mask_for(op->stripe));
  }
  op->w.ppl_next(op);
}

// True when the write puts every data strip's bytes over all of [c0, c1)
// (a full-stripe write): nothing old survives there, the partial parity is
// zero and the entry is its header alone (kPplZeroPayload).
static bool covers_all(const PplEntry& e) {
  for (uint32_t i = 0; i < e.k; i++)
    if (!e.ranges[i].covers(e.c0, e.c1)) return false;
  return true;
}

// pp = parity row r as the write leaves it (rd[k + r]) + row r over the
// written ranges of new data; returns its ppl_payload_sum. A row whose
// coefficients are all 1 (RAID 5, RAID 6's P) is XOR: when every written
// range spans [c0, c1) (the usual read-modify-write of one strip) one pass
// makes and sums it; otherwise the ranges that span it, then the partial
// ones, then the sum. Other rows multiply-add per range.
static uint32_t partial_parity(Op* op, const PplEntry& e, uint32_t r, uint8_t* pp) {
  // Made with the parity update (ppl_fused_targets), in its place.
  if (op->job.pp_made && op->job.pp[r] == pp) return op->job.pp_sum[r];
  uint8_t* const* data = op->w.nd;
  const Codec& c = op->vol->codec();
  const uint32_t k = e.k, L = e.c1 - e.c0;
  const bool xor_row = c.kind() == CodeKind::Xor || (c.kind() == CodeKind::PQ && r == 0);
  if (xor_row) {
    const uint8_t* whole[kMaxMembers + 1];
    int n = 0;
    bool partial = false;
    whole[n++] = op->rd[k + r];
    for (uint32_t i = 0; i < k; i++) {
      if (e.ranges[i].empty()) continue;
      if (e.ranges[i].covers(e.c0, e.c1)) whole[n++] = data[i];
      else partial = true;
    }
    if (!partial) return ppl_xor_sum(pp, whole, n, L);
    xor_cached(pp, whole, n, L);
    for (uint32_t i = 0; i < k; i++) {
      if (e.ranges[i].empty() || e.ranges[i].covers(e.c0, e.c1)) continue;
      const uint32_t off = e.ranges[i].a - e.c0, len = e.ranges[i].b - e.ranges[i].a;
      const uint8_t* two[2] = {pp + off, data[i] + off};
      xor_cached(pp + off, two, 2, len);
    }
    return ppl_payload_sum(pp, L);
  }
  uint8_t* tables = const_cast<uint8_t*>(c.parity_tables()) + size_t(32) * k * r;
  // One strip written over all of [c0, c1) (a one-strip read-modify-write):
  // copy, multiply-add and sum in one pass where the CPU has AVX-512BW.
  int only = -1;
  for (uint32_t i = 0; i < k && only != -2; i++)
    if (!e.ranges[i].empty()) only = only == -1 && e.ranges[i].covers(e.c0, e.c1) ? int(i) : -2;
  uint32_t sum;
  if (only >= 0 && ppl_mad_sum(pp, op->rd[k + r], data[only], tables + 32 * only, L, &sum)) return sum;
  memcpy(pp, op->rd[k + r], L);
  for (uint32_t i = 0; i < k; i++) {
    if (e.ranges[i].empty()) continue;
    const uint32_t a = e.ranges[i].a, b = e.ranges[i].b;
    gf_vect_mad(int(b - a), int(k), int(i), tables, data[i] + (a - e.c0), pp + (a - e.c0));
  }
  return ppl_payload_sum(pp, L);
}

// Where the op's partial parities go, one row's after another (L bytes
// each): the op's own buffer, 4 KiB aligned, grown on first use. (A
// strip's room per row spread every op's few KiB over the same cache sets.)
static uint8_t* payload_base(Op* op, uint32_t L) {
  const Geometry& g = op->vol->geometry();
  const size_t need = size_t(L) * g.parity + 4096;
  if (op->w.ppl_mem.size() < need) op->w.ppl_mem.resize(std::max(need, size_t(g.strip_bytes) + 4096));
  return reinterpret_cast<uint8_t*>((uintptr_t(op->w.ppl_mem.data()) + 4095) & ~uintptr_t(4095));
}

bool ppl_fused_targets(Op* op, uint8_t** pp) {
  if (!op->vol->ppl) return false;
  const Geometry& g = op->vol->geometry();
  const uint32_t k = g.data_strips();
  const WritePlan& p = op->w.plan;
  if (!(p.write_roles >> k)) return false;  // no parity member written: no entry
  // The entries' written ranges must be the update's strips, each over all
  // of [c0, c1) (make_entries leaves out strips not written); a GF code's
  // rows are made so for one strip only (ParityJob::pp).
  uint32_t strips = 0, first = k;
  for (uint32_t i = 0; i < k; i++) {
    if (op->ranges[i].empty()) continue;
    if (!(p.write_roles >> i & 1) || !op->ranges[i].covers(p.c0, p.c1)) return false;
    if (!strips++) first = i;
  }
  if (strips != 1 && op->vol->codec().kind() != CodeKind::Xor) return false;
  // Row 0 over the first written strip's old data (ParityJob::pp), the
  // others in the op's own buffer.
  const uint32_t L = p.c1 - p.c0;
  pp[0] = op->rd[first];
  if (g.parity > 1) {
    uint8_t* base = payload_base(op, L);
    for (uint32_t r = 1; r < g.parity; r++) pp[r] = base + size_t(L) * r;
  }
  return true;
}

// One entry per parity row the plan writes, its partial parity computed
// into the op's own buffer (written from there, in the batch's piece).
static void make_entries(Op* op) {
  PplLog* log = op->vol->ppl;
  const Geometry& g = op->vol->geometry();
  const uint32_t k = g.data_strips();
  const WritePlan& p = op->w.plan;
  op->w.ppl_nrows = 0;
  PplEntry& e = op->w.ppl_entry;
  e.group = log->group();
  e.stripe = op->stripe;
  e.c0 = p.c0;
  e.c1 = p.c1;
  e.k = k;
  e.flags = kPplWriteSeq;  // the batch's seq names the write on every row
  for (uint32_t i = 0; i < k; i++) e.ranges[i] = (p.write_roles >> i & 1) ? op->ranges[i] : StripRange{};
  if (covers_all(e)) e.flags |= kPplZeroPayload;
  const uint32_t L = (e.flags & kPplZeroPayload) ? 0 : p.c1 - p.c0;
  // Where the update made them, or row r's place in the op's own buffer.
  uint8_t* base = L && !op->job.pp_made ? payload_base(op, L) : nullptr;
  for (uint32_t r = 0; r < g.parity; r++) {
    if (!(p.write_roles >> (k + r) & 1)) continue;
    // A parity member in the distributed spare room has no log area of its
    // own: its row goes into the log of the drive holding its strip of this
    // row (no member of this stripe there: that strip is its spare), where
    // the replay looks for it (ON-DISK.md).
    uint32_t member = role_member(g, op->stripe, k + r);
    if (op->vol->room_mask() >> member & 1) {
      const int d = op->vol->room_drive(member, g.group_row(op->stripe));
      if (d < 0 || op->vol->failed_mask() >> d & 1) continue;  // not written then (plan_write)
      member = uint32_t(d);
    }
    WriteCtx::PplRow& row = op->w.ppl_rows[op->w.ppl_nrows];
    row.row = r;
    row.member = member;  // whose log takes it
    row.payload = !L ? nullptr : base ? base + size_t(L) * r : op->job.pp[r];
    row.len = L;
    row.sum = L ? partial_parity(op, e, r, row.payload) : 0;
    op->w.ppl_nrows++;
  }
}

void ppl_log_then(Op* op, void (*next)(Op*), void (*fail)(Op*, int)) {
  op->w.ppl_next = next;
  op->w.ppl_fail = fail;
  make_entries(op);
  if (!op->w.ppl_nrows) return next(op);  // no parity member written (all failed)
  // Nothing is written until the batch's pieces are on disk: no counted
  // member I/O of the op's own is in flight meanwhile.
  op->errored = 0;
  op->vol->ppl->join(op);
}

void ppl_release(Op* op) {
  if (!op->w.ppl_batch) return;
  op->vol->ppl->leave(op);  // op->w.ppl_written: the members write_stripe wrote
}

}  // namespace gpuraid
