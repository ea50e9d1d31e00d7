// Orders concurrent operations on one stripe across all reactors.
// A fixed array of buckets, each guarded by its own spinlock (held for a
// few instructions, never across I/O), so there is no global lock. The
// entry for a locked stripe is embedded in the holder itself and handed to
// the next waiter on release: nothing is allocated.
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>

namespace gpuraid {

struct StripeLockNode {
  void* owner = nullptr;                  // the operation this node is embedded in
  uint64_t key = 0;
  StripeLockNode* bucket_next = nullptr;  // chain of held stripes in a bucket
  StripeLockNode* wait_head = nullptr;    // FIFO of waiters (valid on the holder)
  StripeLockNode* wait_tail = nullptr;
  StripeLockNode* wait_next = nullptr;    // link while waiting
};

class StripeLockTable {
 public:
  explicit StripeLockTable(uint32_t buckets_pow2 = 4096);

  // True: `n` now holds `key`. False: queued; a later release() returns it.
  bool acquire(StripeLockNode* n, uint64_t key);
  // Releases the holder's stripe; returns the waiter that now holds it
  // (the caller must resume it), or nullptr.
  StripeLockNode* release(StripeLockNode* holder);
  // The holder's bucket is wanted soon (its release): fetched now, for writing.
  void prefetch(const StripeLockNode* holder) { __builtin_prefetch(&bucket(holder->key), 1, 3); }
  // Removes the holder's leading waiters for which take(w) is true, in FIFO
  // order, stopping at the first it refuses; calls taken(w) for each removed.
  // Returns whether waiters remain (ones take refused).
  template <class Take, class Taken>
  bool absorb(StripeLockNode* holder, Take&& take, Taken&& taken) {
    Bucket& b = bucket(holder->key);
    lock(b);
    while (StripeLockNode* w = holder->wait_head) {
      if (!take(w)) break;
      holder->wait_head = w->wait_next;
      if (!holder->wait_head) holder->wait_tail = nullptr;
      w->wait_next = nullptr;
      taken(w);
    }
    const bool waiting = holder->wait_head != nullptr;
    unlock(b);
    return waiting;
  }

 private:
  struct alignas(64) Bucket {
    std::atomic<bool> busy{false};
    StripeLockNode* head = nullptr;
  };
  Bucket& bucket(uint64_t key) { return buckets_[(key * 0x9e3779b97f4a7c15ull) >> shift_]; }
  static void lock(Bucket& b);
  static void unlock(Bucket& b) { b.busy.store(false, std::memory_order_release); }

  std::unique_ptr<Bucket[]> buckets_;
  uint32_t shift_;
};

}  // namespace gpuraid
