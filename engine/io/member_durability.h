// Which members may hold completed writes in a volatile cache, counted
// while the volume has a failed member or one being rebuilt
// (ops/parity_write.cpp needs it).
//
// Why: a degraded stripe's parity stands for its failed strip. A partial
// write's new parity is computed over the strips it does not touch as they
// are now; if an earlier write to one of them is still in that member's
// volatile cache when the new parity becomes durable, a power cut that
// loses the earlier write turns the failed strip, read back through the new
// parity, into garbage: data written and flushed long before. So a degraded
// partial write first flushes the stripe's members that hold such writes
// (tests/vm/powerloss.sh degraded, with volatile caches, found it).
//
// Counters, not flags: a flush makes durable what completed before it was
// issued, so it records the count it saw then; a member is clean when a
// completed flush saw every write counted on it.
#pragma once
#include <atomic>
#include <cstdint>

#include "engine/geometry.h"

namespace gpuraid {

class MemberDurability {
 public:
  // A write to member m completed (while a member is failed or rebuilt).
  void wrote(uint32_t m) { written_[m].fetch_add(1, std::memory_order_seq_cst); }
  // A member is about to fail: what every member completed so far counts
  // as not durable (it was not counted while none was unusable).
  void all_written(uint32_t members) {
    for (uint32_t m = 0; m < members; m++) wrote(m);
  }
  // What a flush of m issued now makes durable once it completes.
  uint64_t written(uint32_t m) const { return written_[m].load(std::memory_order_seq_cst); }
  // A flush of m issued when written(m) was `upto` completed.
  void flushed(uint32_t m, uint64_t upto) {
    uint64_t d = durable_[m].load(std::memory_order_relaxed);
    while (d < upto && !durable_[m].compare_exchange_weak(d, upto, std::memory_order_seq_cst)) {
    }
  }
  // m may hold a counted write that no completed flush covers.
  bool dirty(uint32_t m) const { return durable_[m].load(std::memory_order_seq_cst) < written(m); }

 private:
  std::atomic<uint64_t> written_[kMaxMembers]{};
  std::atomic<uint64_t> durable_[kMaxMembers]{};
};

}  // namespace gpuraid
