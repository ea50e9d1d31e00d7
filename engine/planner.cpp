#include "engine/planner.h"

#include <algorithm>
#include <bit>

namespace gpuraid {

bool StripRange::merge(uint32_t x, uint32_t y) {
  if (empty()) {
    a = x;
    b = y;
    return true;
  }
  if (y < a || x > b) return false;  // a gap would remain
  a = std::min(a, x);
  b = std::max(b, y);
  return true;
}

uint32_t role_member(const Geometry& g, uint64_t stripe, uint32_t role) {
  const uint32_t k = g.data_strips();
  return role < k ? g.data_member(stripe, role) : g.parity_member(stripe, role - k);
}

uint64_t failed_roles(const Geometry& g, uint64_t stripe, uint64_t failed_members) {
  if (!failed_members) return 0;
  uint64_t r = 0;
  const uint32_t roles = g.data_strips() + g.parity;
  for (uint32_t i = 0; i < roles; i++)
    if (failed_members >> role_member(g, stripe, i) & 1) r |= 1ull << i;
  return r;
}

const char* write_mode_name(WriteMode m) {
  switch (m) {
    case WriteMode::FullStripe: return "full-stripe";
    case WriteMode::ReadModifyWrite: return "read-modify-write";
    case WriteMode::ReconstructWrite: return "reconstruct-write";
    case WriteMode::DegradedWrite: return "degraded-write";
  }
  return "?";
}

uint32_t WritePlan::reads() const { return uint32_t(std::popcount(read_roles)); }
uint32_t WritePlan::writes() const { return uint32_t(std::popcount(write_roles)); }

static uint64_t low_bits(uint32_t n) { return n >= 64 ? ~0ull : (1ull << n) - 1; }

// The first k roles that survive, in ascending role order (data first).
static uint64_t pick_survivors(uint32_t k, uint32_t roles, uint64_t failed) {
  uint64_t s = 0;
  uint32_t n = 0;
  for (uint32_t i = 0; i < roles && n < k; i++)
    if (!(failed >> i & 1)) {
      s |= 1ull << i;
      n++;
    }
  return n == k ? s : 0;
}

WritePlan plan_stripe_write(const Geometry& g, uint64_t stripe, const StripRange* ranges,
                            uint64_t failed_members, bool force_reconstruct, uint64_t unreadable_members) {
  const uint32_t k = g.data_strips(), m = g.parity;
  const uint64_t failed = failed_roles(g, stripe, failed_members);
  // Where parity may be stale nothing can be rebuilt from it: not read around.
  const uint64_t unreadable =
      force_reconstruct ? 0 : failed_roles(g, stripe, unreadable_members & ~failed_members);
  const uint64_t parity_roles = low_bits(k + m) & ~low_bits(k);
  WritePlan p;
  uint64_t written = 0;
  p.c0 = g.strip_bytes;
  p.c1 = 0;
  for (uint32_t i = 0; i < k; i++) {
    if (ranges[i].empty()) continue;
    written |= 1ull << i;
    p.c0 = std::min(p.c0, ranges[i].a);
    p.c1 = std::max(p.c1, ranges[i].b);
  }
  p.write_roles = (written | parity_roles) & ~failed;
  // Data whose old content parity still needs: not written over all of [c0, c1).
  uint64_t needs_old = 0;
  for (uint32_t i = 0; i < k; i++)
    if (!ranges[i].covers(p.c0, p.c1)) needs_old |= 1ull << i;
  if (needs_old == 0 && p.c0 == 0 && p.c1 == g.strip_bytes) {
    p.mode = WriteMode::FullStripe;
    return p;
  }
  if ((parity_roles & ~failed) == 0) {
    // No parity row survives to be updated: the data is written alone and
    // nothing old is needed (the op's encode output goes nowhere).
    p.mode = WriteMode::ReconstructWrite;
    return p;
  }
  const uint64_t rmw_reads = written | (parity_roles & ~failed);
  const bool rmw_ok = !force_reconstruct && (written & failed) == 0 && m > 0 && (rmw_reads & unreadable) == 0;
  const bool rcw_ok = (needs_old & (failed | unreadable)) == 0;
  // Old data on a member that could not read it: always a degraded write,
  // which rebuilds it from the others and writes it back, as a read would.
  const uint64_t rewrite = needs_old & unreadable;
  // The cheapest method, ties to the earlier: reconstruct-write, read-modify-
  // write, then a degraded write, which reads any k survivors and rebuilds
  // the old data it lacks. With members lost that can read less than both
  // (RAID 6 2+2 without d0, writing d1: P and Q, not d1, P and Q). Never
  // while parity may be stale (force_reconstruct) unless nothing else can.
  uint32_t best = ~0u;
  if (rcw_ok) {
    p.mode = needs_old ? WriteMode::ReconstructWrite : WriteMode::FullStripe;
    p.read_roles = needs_old;
    best = uint32_t(std::popcount(needs_old));
  }
  if (rmw_ok && uint32_t(std::popcount(rmw_reads)) < best) {
    p.mode = WriteMode::ReadModifyWrite;
    p.read_roles = rmw_reads;
    best = uint32_t(std::popcount(rmw_reads));
  }
  if (rewrite || (force_reconstruct ? best == ~0u : k < best)) {
    p.mode = WriteMode::DegradedWrite;
    p.read_roles = pick_survivors(k, k + m, failed | unreadable);
    p.recover_roles = needs_old & ~p.read_roles;
    p.rewrite_roles = rewrite;
    p.write_roles |= rewrite;
  }
  return p;
}

bool plan_degraded_read(const Geometry& g, uint64_t stripe, const StripRange* ranges,
                        uint64_t failed_members, DegradedReadPlan* out) {
  const uint32_t k = g.data_strips(), m = g.parity;
  const uint64_t failed = failed_roles(g, stripe, failed_members);
  DegradedReadPlan p;
  p.c0 = g.strip_bytes;
  for (uint32_t i = 0; i < k; i++) {
    if (ranges[i].empty() || !(failed >> i & 1)) continue;
    p.recover_roles |= 1ull << i;
    p.c0 = std::min(p.c0, ranges[i].a);
    p.c1 = std::max(p.c1, ranges[i].b);
  }
  if (!p.recover_roles || m == 0) return false;
  p.survivors = pick_survivors(k, k + m, failed);
  if (!p.survivors) return false;
  *out = p;
  return true;
}

}  // namespace gpuraid
