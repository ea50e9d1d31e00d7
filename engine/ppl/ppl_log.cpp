#include "engine/ppl/ppl_log.h"

namespace gpuraid {

PplLog::PplLog(const Geometry& g, const PplLayout& l, const std::array<uint8_t, 16>& group)
    : layout_(l), group_(group), members_(g.members) {
  owner_.reset(new std::atomic<uint64_t>[size_t(members_) * l.slots]);
  for (size_t i = 0; i < size_t(members_) * l.slots; i++) owner_[i].store(0, std::memory_order_relaxed);
}

bool PplLog::try_reserve(uint64_t stripe, uint64_t members) {
  const uint32_t slot = layout_.slot_of(stripe);
  uint64_t got = 0;
  for (uint64_t s = members; s; s &= s - 1) {
    const uint32_t m = uint32_t(__builtin_ctzll(s));
    uint64_t free = 0;
    if (!owner_[size_t(m) * layout_.slots + slot].compare_exchange_strong(free, stripe + 1,
                                                                          std::memory_order_acquire)) {
      release(stripe, got);
      return false;
    }
    got |= 1ull << m;
  }
  return true;
}

void PplLog::release(uint64_t stripe, uint64_t members) {
  const uint32_t slot = layout_.slot_of(stripe);
  for (uint64_t s = members; s; s &= s - 1)
    owner_[size_t(__builtin_ctzll(s)) * layout_.slots + slot].store(0, std::memory_order_release);
}

}  // namespace gpuraid
