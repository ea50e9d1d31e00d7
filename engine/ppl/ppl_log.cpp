#include "engine/ppl/ppl_log.h"

#include "engine/ops/op.h"

namespace gpuraid {

PplLog::PplLog(const Geometry& g, const PplLayout& l, const std::array<uint8_t, 16>& group, uint64_t first_seq)
    : layout_(l), group_(group), members_(g.members), first_seq_(first_seq), seq_(first_seq) {
  owner_.reset(new uint64_t[size_t(members_) * l.slots]());
  slots_.reset(new Slot[l.slots]);
}

void PplLog::lock(Slot& s) {
  while (s.busy.exchange(true, std::memory_order_acquire))
    while (s.busy.load(std::memory_order_relaxed)) __builtin_ia32_pause();
}

bool PplLog::reserve_or_queue(uint64_t stripe, uint64_t members, Op* op) {
  const uint32_t slot = layout_.slot_of(stripe);
  Slot& s = slots_[slot];
  lock(s);
  bool free = true;
  for (uint64_t m = members; m && free; m &= m - 1)
    free = owner_[size_t(__builtin_ctzll(m)) * layout_.slots + slot] == 0;
  if (free) {
    for (uint64_t m = members; m; m &= m - 1) owner_[size_t(__builtin_ctzll(m)) * layout_.slots + slot] = stripe + 1;
  } else {
    op->w.ppl_wait_next = nullptr;
    (s.tail ? s.tail->w.ppl_wait_next : s.head) = op;
    s.tail = op;
    waits_.fetch_add(1, std::memory_order_relaxed);
  }
  unlock(s);
  return free;
}

Op* PplLog::release(uint64_t stripe, uint64_t members) {
  const uint32_t slot = layout_.slot_of(stripe);
  Slot& s = slots_[slot];
  lock(s);
  for (uint64_t m = members; m; m &= m - 1) owner_[size_t(__builtin_ctzll(m)) * layout_.slots + slot] = 0;
  // All of them try again: the one queued first may want another member's
  // slot, still held, while a later one can go now.
  Op* waiters = s.head;
  s.head = s.tail = nullptr;
  unlock(s);
  return waiters;
}

}  // namespace gpuraid
