// The running write-hole guard of a volume (log format version 4,
// docs/ON-DISK.md "Write-hole guard"): every parity write logs its partial
// parity on the parity members it writes before its data and parity go out.
//
// Batched, as md's io_unit: a reactor gathers the entries of every stripe
// write that reaches the log stage in one turn into one batch, issued at
// the start of its next turn (a busy reactor's small batch: a turn or two
// later, with the writes those turns bring; kHoldBelowOps) as one piece per member
// (one header, then the partial parities, one vectored write with FUA); the
// writes go on once every piece of their batch is on disk.
//
// Each member's log area is a ring of pieces, allocated in order under one
// lock (all reactors share it: a member's pieces are in write order, so a
// stripe's older entries are always reclaimed before its newer ones, which
// is what replay relies on). A piece's room is reused only once every write
// its batch protects is durable: after a flush of the members those writes
// went to, batched across many batches and issued when the ring fills, or
// where no member has a volatile write cache (Drive::volatile_cache) at
// once, told to the rings under the lock the reactor's queued issue of its
// open batch takes anyway (else at once). And only once the member's ring
// tail (ppl_format.h) says so on disk: a reclaimed piece stays whole there
// until overwritten, and replay must not take it for a live one where its
// stripe's newer entry was overwritten first (two piece writes in flight at
// a power cut, the later one landing; a torn piece write). One tail write
// (4 KiB, FUA) per ring in flight, started once an eighth of the ring is
// reclaimed or a batch waits for room, on the reactor that reclaimed it and
// completed there (a running daemon polls every reactor; a test thread that
// stops polling its reactor with one in flight leaves that ring's room held
// until the log's shutdown polls it).
// A batch with no room waits (its writes queued, nothing polls) and asks
// every reactor to flush.
#pragma once
#include <array>
#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include "engine/geometry.h"
#include "engine/ppl/ppl_format.h"
#include "engine/task.h"

namespace gpuraid {

struct Op;
struct MemberIo;
class Reactor;
class Volume;

class PplLog {
 public:
  // first_seq: above every seq an earlier run of the group wrote (the
  // caller derives it from the superblock generation, and persists it as the
  // replay floor before the first write).
  PplLog(Volume& v, const PplLayout& l, const std::array<uint8_t, 16>& group, uint64_t first_seq);
  ~PplLog();
  PplLog(const PplLog&) = delete;
  PplLog& operator=(const PplLog&) = delete;
  // Before it goes (after the volume's requests ended): waits, polling its
  // reactors where this thread owns them or nobody polls them, until none of
  // its flushes or tasks is in flight. false after timeout_s: the caller must
  // leave it allocated (something of it may still run).
  bool shutdown(double timeout_s = 10);

  const PplLayout& layout() const { return layout_; }
  const std::array<uint8_t, 16>& group() const { return group_; }
  uint64_t first_seq() const { return first_seq_; }

  // The op stage (ppl_stage.cpp), on the op's home reactor. join(): the
  // op's entries (op->w.ppl_rows) go into its reactor's open batch; the
  // op's ppl_logged() runs once the batch is on disk. leave(): the op's
  // writes ended (done or failed); its batch may then be retired.
  void join(Op* op);
  void leave(Op* op);

  // Figures (any thread).
  uint64_t logged_writes() const;
  uint64_t batches() const;
  uint64_t waits() const;
  uint64_t flush_rounds() const;
  uint64_t tail_writes() const;

  // Tests that fake a crash with writes whose data the fault injector
  // dropped (FaultInjector::kDropPlainWrites): those writes are
  // acknowledged, but stand for writes in flight at the crash, whose room a
  // real log never reclaims. From this call on no tail write starts (the
  // crash point); the group is then dropped without a stop.
  // Pieces of the batches logged from now on (the torn writes') stay
  // live for the tail: their room, and the room after it, is not reused;
  // the room before them still is.
  void freeze_reclaim_for_crash_test();

 private:
  struct Batch;
  struct PerReactor;
  struct Piece {
    Batch* batch;
    uint64_t off, bytes;  // in the member's log area
  };
  struct Ring {  // one member's log area (under mu_)
    uint64_t head = 0;  // where the next piece starts
    uint64_t used = 0;  // bytes of the live pieces in it
    // Reclaimed room (the oldest pieces, before the live ones in ring
    // order) not reused until a tail write past it is on disk; of it,
    // `fencing` is what the tail write in flight frees. `pinned`: reclaimed
    // pieces at or above tail_cap_ (a crash test's), never freed.
    uint64_t held = 0, fencing = 0, pinned = 0;
    bool tail_busy = false;
    uint64_t tail_count = 0;  // tail writes started this run
    uint64_t tail_off = 0;    // member offset of the block the one in flight goes to
    std::unique_ptr<uint8_t, void (*)(void*)> tail_buf{nullptr, free};
    std::deque<Piece> pieces;  // live: not yet durable
  };

  Batch* take_batch(PerReactor& pr);
  bool fits(const Batch* b, const Op* op) const;
  void issue_open(PerReactor& pr);
  bool place(Batch* b);        // under mu_: room for every piece
  void write_pieces(Batch* b);  // on b's reactor, once placed
  static void piece_done(MemberIo* io);
  void batch_logged(Batch* b);
  void batch_written(Batch* b);
  void want_flush();
  void maybe_flush(PerReactor& pr);
  static void flush_done(MemberIo* io);
  // What room freed under the lock lets go on: batches placed after a
  // wait (to go out on their reactors), rings whose tail write to issue.
  struct Released {
    std::vector<Batch*> ready;
    uint64_t tails = 0;
  };
  void durable(PerReactor& pr, Batch* const* bs, size_t n);  // takes the lock
  void settle_locked(Batch* const* bs, size_t n, Released* out);
  void place_waiting_locked(Released* out);
  void start_tails_locked(uint64_t rings, Released* out);
  uint64_t all_rings() const { return members_ >= 64 ? ~0ull : (1ull << members_) - 1; }
  void settle(PerReactor& pr);  // pr's settled batches, durable()
  void post_ready(PerReactor& pr, const Released& out);  // on pr's reactor
  static void tail_done(MemberIo* io);
  void lock();
  void unlock() { busy_.store(false, std::memory_order_release); }

  Volume& vol_;
  PplLayout layout_;
  PplRing ring_;  // the pieces' part of each member's area (format 4)
  std::array<uint8_t, 16> group_;
  uint32_t members_;
  uint64_t first_seq_;
  uint64_t max_piece_ = 0;  // a batch closes before a piece would pass this
  uint64_t tail_cap_ = ~0ull;  // (lock) no tail names a seq above it: freeze_reclaim_for_crash_test

  // Each on a cache line of its own: both reactors write busy_, and read
  // pressure_ at every written batch.
  alignas(64) std::atomic<bool> busy_{false};  // mu_: rings, waiting, seq, free batches
  alignas(64) std::atomic<bool> pressure_{false};  // a ring is over half full, or a batch waits
  alignas(64) std::vector<Ring> rings_;
  uint32_t rings_over_half_ = 0;  // rings whose used passed half the area
  std::deque<Batch*> waiting_;  // no room yet, in order
  uint64_t seq_;
  std::vector<std::unique_ptr<Batch>> all_;
  void set_pressure(bool on) {
    if (pressure_.load(std::memory_order_relaxed) != on) pressure_.store(on, std::memory_order_relaxed);
  }
  void ring_used(Ring& r, uint64_t used);  // under mu_: sets r.used, counting rings over half

  std::vector<std::unique_ptr<PerReactor>> reactors_;
  int64_t outstanding() const;  // flushes, piece writes and tasks in flight, every reactor's
};

// The op stage (ppl_stage.cpp), after the new parity is computed and
// before anything is written: logs one entry per parity member the plan
// writes, then runs next(op). A member whose log write fails is failed (and
// no longer written); past redundancy fail(op, -EIO).
void ppl_log_then(Op* op, void (*next)(Op*), void (*fail)(Op*, int));
// Before a read-modify-write's parity job: where the job may make the
// write's partial parities (ParityJob::pp, one per parity row), or false
// when they need more than old parity + old data (no guard, partial
// strips, a strip not written, several strips of a GF code).
bool ppl_fused_targets(Op* op, uint8_t** pp);
// From the op's end (after its writes or failure): its batch may retire.
void ppl_release(Op* op);
// Called by PplLog once the op's batch is on disk (or its log writes failed).
void ppl_logged(Op* op);

}  // namespace gpuraid
