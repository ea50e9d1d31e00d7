// The running write-hole guard of a volume: which log slots are held by
// writes in flight (a slot is reused only once the write it logged is
// on disk), and the op stage that logs a stripe write's partial parity,
// durably, before its data and parity writes.
#pragma once
#include <array>
#include <atomic>
#include <cstdint>
#include <memory>

#include "engine/geometry.h"
#include "engine/ppl/ppl_format.h"

namespace gpuraid {

struct Op;

class PplLog {
 public:
  // first_seq: above every seq an earlier run of the group wrote (the
  // caller derives it from the superblock generation).
  PplLog(const Geometry& g, const PplLayout& l, const std::array<uint8_t, 16>& group, uint64_t first_seq);
  const PplLayout& layout() const { return layout_; }
  const std::array<uint8_t, 16>& group() const { return group_; }
  // Holds the stripe's slot on every member in `members`: all or none.
  // When another stripe's write holds one of them, `op` joins the slot's
  // queue instead (false): release() hands it back to be tried again.
  // Nothing polls: a queued write costs nothing until the slot frees.
  bool reserve_or_queue(uint64_t stripe, uint64_t members, Op* op);
  // Frees the slots; returns the writes queued on the slot (linked by
  // Op::ppl_wait_next, FIFO), which the caller must resume.
  Op* release(uint64_t stripe, uint64_t members);
  uint64_t next_seq() { return seq_.fetch_add(1, std::memory_order_relaxed); }
  uint64_t waits() const { return waits_.load(std::memory_order_relaxed); }
  // Stripe writes logged since this log was made (one seq each).
  uint64_t logged_writes() const { return seq_.load(std::memory_order_relaxed) - first_seq_; }

 private:
  // One per slot (all members): a spinlock held for a few instructions,
  // and the writes waiting for the slot on some member.
  struct alignas(64) Slot {
    std::atomic<bool> busy{false};
    Op* head = nullptr;
    Op* tail = nullptr;
  };
  void lock(Slot& s);
  void unlock(Slot& s) { s.busy.store(false, std::memory_order_release); }

  PplLayout layout_;
  std::array<uint8_t, 16> group_;
  uint32_t members_;
  uint64_t first_seq_;
  std::unique_ptr<uint64_t[]> owner_;  // [member * slots + slot]: stripe + 1, 0 free (under the slot's lock)
  std::unique_ptr<Slot[]> slots_;
  std::atomic<uint64_t> seq_;
  std::atomic<uint64_t> waits_{0};
};

// The op stage (ppl_stage.cpp), after the new parity is computed and
// before anything is written: writes, with FUA, one entry per parity
// member the plan writes, then runs next(op). A member whose log write
// fails is failed (and no longer written); past redundancy fail(op, -EIO).
void ppl_log_then(Op* op, void (*next)(Op*), void (*fail)(Op*, int));
// Frees the op's slots; from the op's end (after its writes or failure).
void ppl_release(Op* op);

}  // namespace gpuraid
