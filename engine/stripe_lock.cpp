#include "engine/stripe_lock.h"

#include "engine/invariant.h"

#include <bit>

namespace gpuraid {

StripeLockTable::StripeLockTable(uint32_t buckets_pow2)
    : buckets_(new Bucket[buckets_pow2]), shift_(64 - std::countr_zero(buckets_pow2)) {
  GPR_ASSERT(std::has_single_bit(buckets_pow2), "stripe lock table of %u buckets (a power of two)", buckets_pow2);
}

void StripeLockTable::lock(Bucket& b) {
  while (b.busy.exchange(true, std::memory_order_acquire)) {
    while (b.busy.load(std::memory_order_relaxed)) __builtin_ia32_pause();
  }
}

bool StripeLockTable::acquire(StripeLockNode* n, uint64_t key) {
  n->key = key;
  n->wait_head = n->wait_tail = n->wait_next = nullptr;
  Bucket& b = bucket(key);
  lock(b);
  for (StripeLockNode* h = b.head; h; h = h->bucket_next) {
    if (h->key == key) {
      if (h->wait_tail) h->wait_tail->wait_next = n;
      else h->wait_head = n;
      h->wait_tail = n;
      unlock(b);
      return false;
    }
  }
  n->bucket_next = b.head;
  b.head = n;
  unlock(b);
  return true;
}

StripeLockNode* StripeLockTable::release(StripeLockNode* holder) {
  Bucket& b = bucket(holder->key);
  lock(b);
  StripeLockNode** pp = &b.head;
  while (*pp != holder) {
    GPR_ASSERT(*pp, "stripe %llu released by %p, which does not hold it", (unsigned long long)holder->key, holder->owner);
    pp = &(*pp)->bucket_next;
  }
  StripeLockNode* next = holder->wait_head;
  if (next) {
    // Hand the entry to the first waiter: it inherits the rest of the queue.
    next->wait_head = next->wait_next;
    next->wait_tail = next->wait_head ? holder->wait_tail : nullptr;
    next->wait_next = nullptr;
    next->bucket_next = holder->bucket_next;
    *pp = next;
  } else {
    *pp = holder->bucket_next;
  }
  holder->bucket_next = holder->wait_head = holder->wait_tail = nullptr;
  unlock(b);
  return next;
}

}  // namespace gpuraid
