// The ops of one volume on one reactor, bounded. At most `capacity` ops
// exist (made on demand up to it, then recycled); the last `reserve` of them
// only background maintenance and read retries may take. A request that
// finds the pool dry is parked in FIFO order and split further as ops come
// back: backpressure on the submitter instead of growth.
//
// Retries (a read that must be redone degraded after a member failed under
// it) are exempt from the cap so that an op never waits for ops while
// holding one (every op in flight waiting would deadlock): they replace
// one op's range, at most once per member failure, so the total stays
// bounded by capacity x (stripes per op) x (failures the level survives).
#pragma once
#include <atomic>
#include <cstdint>

#include "engine/ops/stripe_gather.h"
#include "engine/task.h"
#include "engine/volume_stats.h"

namespace gpuraid {

struct Op;
struct IoRequest;
class Reactor;
class Volume;

enum class OpClass : uint8_t {
  Foreground,   // a request's part: within capacity - reserve
  Maintenance,  // background work (a few stripes at a time): within capacity
  Retry,        // a read redone degraded: exempt (see above)
};

class OpPool {
 public:
  OpPool(Volume* v, Reactor* r, uint32_t capacity, uint32_t reserve, uint64_t gather_hold_ns = 0);
  ~OpPool();
  OpPool(const OpPool&) = delete;
  OpPool& operator=(const OpPool&) = delete;

  // An op, or nullptr when none may be taken for this class now.
  Op* get(OpClass c);
  void put(Op* op);
  // Requests parked for ops: a new request queues behind them.
  bool has_waiters() const { return wait_head_ != nullptr; }
  // Parks req (its split stopped at req->next_off); front: it was first.
  void park(IoRequest* req, bool front);

  uint32_t in_use() const { return in_use_; }
  uint32_t peak() const { return peak_; }
  uint32_t capacity() const { return capacity_; }
  // This reactor's parity writes held for full stripes, and its degraded
  // reads held for the rest of their stripe (same lifetime).
  StripeGather& write_gather() { return write_gather_; }
  StripeGather& read_gather() { return read_gather_; }
  // Requests submitted on this reactor: foreground activity, which other
  // threads read (the background work's rate policy). One writer: a plain
  // load and store, no read-modify-write on the hot path.
  void count_request() { bump(requests_); }
  uint64_t requests() const { return requests_.load(std::memory_order_relaxed); }
  // This reactor's counts of the volume's ops (volume_stats.h).
  VolumeStats& counters() { return counters_; }
  const VolumeStats& counters() const { return counters_; }

 private:
  static void on_ops_back(Task* t);
  Volume* vol_;
  Reactor* r_;
  uint32_t capacity_, reserve_;
  uint32_t made_ = 0, in_use_ = 0, peak_ = 0;
  Op* free_ = nullptr;
  IoRequest* wait_head_ = nullptr;
  IoRequest* wait_tail_ = nullptr;
  Task resume_;  // resumes parked requests once ops are back
  StripeGather write_gather_, read_gather_;
  std::atomic<uint64_t> requests_{0};
  VolumeStats counters_;
};

}  // namespace gpuraid
