// Full-stripe gathering for parity writes (RAID 5, 6, ec), per volume per
// reactor. A write of a sequential stream that leaves the rest of its
// stripe unwritten is held, its stripe locked, while the stream's next
// writes are on their way: they queue on the lock and ride along (see
// take_riders), so the stripe is written whole, with no reads, once full.
//
// A held write goes on (in its reactor's next turn) when
//  - its stripe is full;
//  - a FUA write rides on it (a journal commit must not wait);
//  - someone waits for the stripe and cannot ride (another kind of op, or
//    bytes that do not join the held range);
//  - every parity write of this reactor is held or riding on a held one:
//    nothing in flight would bring the rest (md's rule for its delayed
//    stripes, which run once no other stripe is active);
//  - hold_ns passed (a stream that paused, or a writer on another reactor).
// So a writer at queue depth 1 is never held, and no write waits longer
// than hold_ns. Random writes are not held: only a write request that
// starts where a recent one ended counts as a stream.
#pragma once
#include <cstdint>

namespace gpuraid {

struct Op;
class Reactor;

class WriteGather {
 public:
  WriteGather(Reactor* r, uint64_t hold_ns) : r_(r), hold_ns_(hold_ns) {}
  WriteGather(const WriteGather&) = delete;
  WriteGather& operator=(const WriteGather&) = delete;

  // A write request [off, off+len): true when it continues a recent one.
  bool note_write(uint64_t off, uint64_t len);
  // Parity-write ops of this reactor that started / finished (riders too).
  void op_started() { live_++; }
  void op_finished();
  // Holds op (it holds its stripe's lock and has taken its riders) when it
  // qualifies; `go` then runs for it later, on this reactor. False: run it now.
  bool try_hold(Op* op, void (*go)(Op*));
  // New writes arrived on this reactor: held ops take those queued on
  // their stripe and go on if now full or waited for.
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
  uint32_t live_ = 0;
  Op* head_ = nullptr;  // held ops, oldest first (Op::held_next)
  Op* tail_ = nullptr;
  void (*go_)(Op*) = nullptr;
  static constexpr int kStreams = 8;
  uint64_t stream_end_[kStreams] = {};  // where recent write requests ended
  int next_slot_ = 0;
};

}  // namespace gpuraid
