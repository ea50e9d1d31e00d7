// Counts of one volume's ops. Every reactor counts in its own copy (its
// OpPool's, with bump(), single_writer.h) and Volume::stats() sums the copies: a set
// shared by all reactors cost every parity write a locked add on a cache
// line that every reactor wrote (4 % of two reactors' time on null drives,
// and the line also held what every op reads), a cost that grows with the
// number of reactors.
#pragma once
#include <cstdint>

#include "engine/single_writer.h"

namespace gpuraid {

struct VolumeStats {
  uint64_t full_stripe_writes = 0, rmw_writes = 0, rcw_writes = 0, degraded_writes = 0;
  uint64_t degraded_reads = 0, merged_writes = 0, retried_reads = 0;
  // Reads of a degraded stripe served by another read's member I/O (riders).
  uint64_t merged_reads = 0;
  // Parity writes and degraded reads held for the rest of their stripe
  // (ops/stripe_gather.h), and those of them that went on because the hold
  // time ran out.
  uint64_t held_writes = 0, held_reads = 0, held_expired = 0;
  // Rebuild stripes written onto the member, and stripes a partial rebuild
  // (a member back from a path loss) skipped because the member holds them.
  uint64_t rebuild_stripes_written = 0, rebuild_stripes_skipped = 0;
  // Degraded partial parity writes that first flushed members holding
  // writes a volatile cache may still have (io/member_durability.h).
  uint64_t degraded_flushes = 0;
  // Member blocks a read could not read (a medium error), read around and
  // written back (Volume::may_correct).
  uint64_t corrected_reads = 0;
  // Member blocks that could not be read nor rebuilt (the group needs the
  // member, or the stripe's parity was not trusted): the I/O failed.
  uint64_t uncorrectable_reads = 0;

  // Adds every counter of a reactor's copy, which its reactor may be
  // counting in meanwhile (each counter is read whole).
  void add(const VolumeStats& o);
};

}  // namespace gpuraid
