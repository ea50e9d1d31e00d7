// Counters with one writer (their reactor) that other threads read: the
// writer adds with a plain load and store, no locked instruction; a reader
// sees the old or the new value, never a torn one. Counters that several
// reactors would add to are kept per reactor and summed when read.
#pragma once
#include <atomic>
#include <cstdint>

namespace gpuraid {

inline void bump(std::atomic<uint64_t>& c, uint64_t n = 1) {
  c.store(c.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
}

inline void bump(uint64_t& c, uint64_t n = 1) {
  std::atomic_ref<uint64_t> a(c);
  a.store(a.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
}

// Another thread's read of such a counter (a plain uint64_t bumped above).
inline uint64_t read_counter(const uint64_t& c) {
  // atomic_ref wants a non-const object; only a load is made through it.
  return std::atomic_ref<uint64_t>(const_cast<uint64_t&>(c)).load(std::memory_order_relaxed);
}

}  // namespace gpuraid
