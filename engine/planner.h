// Planning of one stripe's work, as pure functions of the geometry, the
// byte ranges touched and the failed members: no I/O, so unit tests check
// every decision and its member-I/O count directly.
// Roles: 0..k-1 are data strips, k..k+m-1 parity rows (P, Q, ...).
#pragma once
#include <cstdint>

#include "engine/geometry.h"

namespace gpuraid {

// A byte range [a, b) within one strip; empty when a >= b.
struct StripRange {
  uint32_t a = 0, b = 0;
  bool empty() const { return a >= b; }
  bool covers(uint32_t lo, uint32_t hi) const { return a <= lo && b >= hi; }
  // Extends the range by [x, y) if the union stays one range; false otherwise.
  bool merge(uint32_t x, uint32_t y);
};

// Member holding a role of a stripe.
uint32_t role_member(const Geometry& g, uint64_t stripe, uint32_t role);
// Roles (bit i = role i) whose member is in failed_members.
uint64_t failed_roles(const Geometry& g, uint64_t stripe, uint64_t failed_members);

enum class WriteMode : uint8_t {
  FullStripe,      // every data strip written whole: no reads
  ReadModifyWrite, // read old data + old parity, fold the deltas in
  ReconstructWrite,// read the untouched data, compute parity from all data
  DegradedWrite,   // a needed data strip is lost: read k survivors, rebuild it, then as reconstruct-write
};
const char* write_mode_name(WriteMode m);

struct WritePlan {
  WriteMode mode = WriteMode::FullStripe;
  uint32_t c0 = 0, c1 = 0;     // columns [c0, c1) of the strips that parity covers
  uint64_t read_roles = 0;     // read over [c0, c1)
  uint64_t recover_roles = 0;  // DegradedWrite: rebuilt from read_roles
  uint64_t write_roles = 0;    // data: its written range; parity: [c0, c1)
  // DegradedWrite: data roles on members whose old block could not be read
  // (a medium error), rebuilt and written back over all of [c0, c1).
  uint64_t rewrite_roles = 0;
  uint32_t reads() const;
  uint32_t writes() const;
};

// ranges[0..k-1]: what is written in each data strip. force_reconstruct
// forbids read-modify-write (parity that may be stale: dirty regions).
// unreadable_members: members whose read of [c0, c1) met a medium error
// (not failed): never read, and every block of theirs in [c0, c1) is
// written (parity and data the write covers as ever; data it needs the old
// content of is rebuilt from the others and written back: rewrite_roles).
// Ignored with force_reconstruct: stale parity rebuilds nothing.
WritePlan plan_stripe_write(const Geometry& g, uint64_t stripe, const StripRange* ranges,
                            uint64_t failed_members, bool force_reconstruct, uint64_t unreadable_members = 0);

struct DegradedReadPlan {
  uint32_t c0 = 0, c1 = 0;     // columns to rebuild
  uint64_t survivors = 0;      // exactly k roles, read over [c0, c1)
  uint64_t recover_roles = 0;  // requested data roles on failed members
};
// ranges: the requested bytes of each data strip. False when the stripe
// touches no failed member (a plain read does) or cannot be rebuilt.
bool plan_degraded_read(const Geometry& g, uint64_t stripe, const StripRange* ranges,
                        uint64_t failed_members, DegradedReadPlan* out);

}  // namespace gpuraid
