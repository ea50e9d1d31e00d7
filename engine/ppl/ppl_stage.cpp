// Partial parity of a planned stripe write, per parity row r written:
//   pp_r = new parity row r + row r over the data ranges the write puts on
//          members it writes (GF(2^8): + is XOR).
// That is row r over the stripe's data as the write leaves it with those
// ranges left out: what replay needs when they may be torn. Data of failed
// members stays in (its new contents, as the write computed them), so a
// replay with members missing rebuilds them right.
#include <isa-l/erasure_code.h>

#include <cstring>

#include "engine/ops/op.h"
#include "engine/parity/xor_cached.h"
#include "engine/ppl/ppl_log.h"

namespace gpuraid {

static uint64_t logged_members(const Op* op) {
  const Geometry& g = op->vol->geometry();
  const uint32_t k = g.data_strips();
  uint64_t mem = 0;
  for (uint32_t r = 0; r < g.parity; r++)
    if (op->w.plan.write_roles >> (k + r) & 1) mem |= 1ull << role_member(g, op->stripe, k + r);
  return mem;
}

static void logged(Op* op) {
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
// written ranges of new data. A row whose coefficients are all 1 (RAID 5,
// RAID 6's P) is XOR: one pass over the parity and every range that spans
// [c0, c1), then the partial ranges; other rows multiply-add per range.
static void partial_parity(Op* op, const PplEntry& e, uint32_t r, uint8_t* pp) {
  const Codec& c = op->vol->codec();
  const uint32_t k = e.k, L = e.c1 - e.c0;
  const bool xor_row = c.kind() == CodeKind::Xor || (c.kind() == CodeKind::PQ && r == 0);
  if (xor_row) {
    const uint8_t* whole[kMaxMembers + 1];
    int n = 0;
    whole[n++] = op->rd[k + r];
    for (uint32_t i = 0; i < k; i++)
      if (e.ranges[i].covers(e.c0, e.c1)) whole[n++] = op->w.nd[i];
    xor_cached(pp, whole, n, L);
    for (uint32_t i = 0; i < k; i++) {
      if (e.ranges[i].empty() || e.ranges[i].covers(e.c0, e.c1)) continue;
      const uint32_t off = e.ranges[i].a - e.c0, len = e.ranges[i].b - e.ranges[i].a;
      const uint8_t* two[2] = {pp + off, op->w.nd[i] + off};
      xor_cached(pp + off, two, 2, len);
    }
    return;
  }
  memcpy(pp, op->rd[k + r], L);
  uint8_t* tables = const_cast<uint8_t*>(c.parity_tables()) + size_t(32) * k * r;
  for (uint32_t i = 0; i < k; i++) {
    if (e.ranges[i].empty()) continue;
    const uint32_t a = e.ranges[i].a, b = e.ranges[i].b;
    gf_vect_mad(int(b - a), int(k), int(i), tables, op->w.nd[i] + (a - e.c0), pp + (a - e.c0));
  }
}

static void write_entries(Op* op) {
  PplLog* log = op->vol->ppl;
  const uint64_t mem = logged_members(op);
  if (!mem) return op->w.ppl_next(op);
  // Another stripe's write holds the slot: queued, ppl_release() of that
  // write runs write_entries again.
  if (!log->reserve_or_queue(op->stripe, mem, op)) return;
  op->w.ppl_reserved = mem;
  const Geometry& g = op->vol->geometry();
  const uint32_t k = g.data_strips();
  const WritePlan& p = op->w.plan;
  PplEntry e;
  e.group = log->group();
  e.stripe = op->stripe;
  e.c0 = p.c0;
  e.c1 = p.c1;
  e.k = k;
  for (uint32_t i = 0; i < k; i++)
    if (p.write_roles >> i & 1) e.ranges[i] = op->ranges[i];
  if (covers_all(e)) e.flags |= kPplZeroPayload;
  e.flags |= kPplWriteSeq;
  e.seq = log->next_seq();  // one for the write: its rows' entries go together
  const uint32_t L = (e.flags & kPplZeroPayload) ? 0 : p.c1 - p.c0;
  const size_t entry = kPplHeaderBytes + L;
  // One slot's room per row, so each row's header always sits at the same
  // place: zeroed once when the buffer is made, then only the header's
  // bytes in use are written (k is the volume's; the payload never
  // reaches into a header).
  const size_t room = log->layout().slot_bytes;
  if (op->w.ppl_mem.size() != room * g.parity + 4096) op->w.ppl_mem.assign(room * g.parity + 4096, 0);
  uint8_t* base = reinterpret_cast<uint8_t*>((uintptr_t(op->w.ppl_mem.data()) + 4095) & ~uintptr_t(4095));
  const uint32_t slot = log->layout().slot_of(op->stripe);
  // The data and parity writes of the stripe are issued by logged(), after
  // every log write of this phase completed (with FUA: durable): a crash
  // never finds the stripe touched without its entries on disk.
  begin_phase(op, logged);
  for (uint32_t r = 0; r < g.parity; r++) {
    if (!(p.write_roles >> (k + r) & 1)) continue;
    uint8_t* hdr = base + room * r;
    uint8_t* pp = hdr + kPplHeaderBytes;
    if (L) partial_parity(op, e, r, pp);
    e.row = r;
    e.payload_crc = L ? ppl_crc(pp, L) : 0;
    encode_ppl_header(e, hdr, /*rest_zeroed=*/true);
    issue_member_io(op, role_member(g, op->stripe, k + r), MemberIo::Write, log->layout().slot_offset(slot), hdr,
                    uint32_t(entry), /*dsync=*/true);
  }
  end_issue(op);
}

void ppl_log_then(Op* op, void (*next)(Op*), void (*fail)(Op*, int)) {
  op->w.ppl_next = next;
  op->w.ppl_fail = fail;
  write_entries(op);
}

void ppl_release(Op* op) {
  if (!op->w.ppl_reserved) return;
  Op* w = op->vol->ppl->release(op->stripe, op->w.ppl_reserved);
  op->w.ppl_reserved = 0;
  while (w) {
    Op* next = w->w.ppl_wait_next;  // read first: the resumed op may queue again
    resume_on_home(w, write_entries);
    w = next;
  }
}

}  // namespace gpuraid
