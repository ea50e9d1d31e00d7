// Stripe gathering, per volume per reactor, for parity writes (RAID 5, 6,
// ec: full stripes, no reads) and for degraded reads (each survivor read
// once per stripe). An op of a sequential stream that leaves the rest of
// its stripe untouched is held, its stripe locked, while the stream's next
// requests are on their way: they queue on the lock and ride along (see
// take_riders), so the stripe is written whole with no reads, or its
// survivors are read once for all of its readers.
//
// A held op goes on (in its reactor's next turn) when
//  - its stripe is covered whole;
//  - a FUA write rides on it (a journal commit must not wait);
//  - someone waits for the stripe and cannot ride (another kind of op, or
//    bytes that do not join the held range);
//  - every op of this gather on this reactor is held or riding on a held
//    one: nothing in flight would bring the rest (md's rule for its delayed
//    stripes, which run once no other stripe is active);
//  - hold_ns passed (a stream that paused, or a submitter on another reactor).
// So a submitter at queue depth 1 is never held, and no op waits longer
// than hold_ns. Random I/O is not held: only a request that starts where a
// recent one of the same kind ended counts as a stream.
#pragma once
#include <cstdint>

#include "engine/volume_stats.h"

namespace gpuraid {

struct Op;
class Reactor;

class StripeGather {
 public:
  // What the gather counts in its volume's stats: riders taken, ops held.
  using Counter = uint64_t VolumeStats::*;
  // weigh_parts: the idle rule counts a held op with the other parts of its
  // request (held_weight). Degraded reads: at queue depth 2 a held head of
  // a stripe waited for the other half of its own request, serializing the
  // stream (0.6 -> 0.28 of raw); parity writes: off, as it gave up the
  // full stripes a 128K stream at depth 4 gathered.
  StripeGather(Reactor* r, uint64_t hold_ns, Counter merged, Counter held, bool weigh_parts)
      : r_(r), hold_ns_(hold_ns), merged_(merged), held_(held), weigh_parts_(weigh_parts) {}
  StripeGather(const StripeGather&) = delete;
  StripeGather& operator=(const StripeGather&) = delete;

  // A request [off, off+len): true when it continues a recent one.
  bool note_request(uint64_t off, uint64_t len);
  // Ops of this gather's kind on this reactor that started / finished (riders too).
  void op_started() { live_++; }
  void op_finished();
  // Holds op (it holds its stripe's lock and has taken its riders) when it
  // qualifies; `go` then runs for it later, on this reactor. False: run it now.
  bool try_hold(Op* op, void (*go)(Op*));
  // New requests arrived on this reactor: held ops take those queued on
  // their stripe and go on if now covered or waited for.
  void scan();
  bool holding() const { return head_ != nullptr; }

 private:
  static void expired(struct Task* t);
  bool qualifies(const Op* op) const;
  void unlink(Op* op);
  void release(Op* op);
  void release_if_idle();
  uint32_t held_weight() const;

  Reactor* r_;
  uint64_t hold_ns_;
  Counter merged_, held_;
  bool weigh_parts_;
  uint32_t live_ = 0;
  Op* head_ = nullptr;  // held ops, oldest first (Op::held_next)
  Op* tail_ = nullptr;
  void (*go_)(Op*) = nullptr;
  static constexpr int kStreams = 8;
  uint64_t stream_end_[kStreams] = {};  // where recent requests ended
  int next_slot_ = 0;
};

}  // namespace gpuraid
