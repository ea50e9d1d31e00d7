// A reactor: one thread's io_uring, its buffer pool and parity backend.
// Everything on the data path runs to completion on the reactor's thread;
// other threads reach it only through post() (a lock-free inbox + eventfd).
// The thread that calls poll() owns the reactor; the engine never starts
// threads itself (the bench, tests and daemon bring their own).
#pragma once
#include <liburing.h>
#include <sys/types.h>
#include <sys/uio.h>

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include "engine/buffer_pool.h"
#include "engine/latency_buckets.h"
#include "engine/io/drive.h"
#include "engine/parity/parity_backend.h"
#include "engine/task.h"

namespace gpuraid {


// One I/O to one member drive. `done` runs on the reactor that issued it.
struct MemberIo {
  enum Kind : uint8_t { Read, Write, Flush };
  Kind kind = Read;
  bool dsync = false;           // FUA: RWF_DSYNC on this write
  Drive* drive = nullptr;
  uint32_t slot = 0;            // fixed-file slot of the drive
  uint64_t offset = 0;          // byte offset on the drive
  uint32_t len = 0;             // bytes (sum of iov when vectored)
  uint8_t* buf = nullptr;       // single buffer, or nullptr when iov is used
  std::vector<iovec> iov;       // vectored I/O (capacity kept across reuse)
  int32_t res = 0;              // bytes, or -errno
  uint32_t tag = 0;             // the owner's own index (e.g. member number)
  uint32_t drive_index = 0;     // volume member I/O: the member whose drive takes it (tag's, or a spare room's)
  void (*done)(MemberIo*) = nullptr;
  void* ctx = nullptr;
  uint64_t due_ns = 0;          // injected latency: report no earlier than this
  uint64_t seq = 0;             // issue order on its reactor (lockstep completes in this order)
  uint64_t issue_ns = 0;        // the reactor's turn clock at issue (latency histograms)
  uint32_t short_by = 0;        // injected short transfer: bytes not moved
  uint64_t flush_upto = 0;      // Flush of a volume member: its writes counted at issue (member_durability.h)
  MemberIo* next = nullptr;     // free list / delayed list
  // Plug merging (reactor_plug.cpp), reactor-internal: the I/Os that ride
  // on this one's SQE (it is their chain's head), their bytes, the head's
  // own iovecs for the merged SQE, and "issue alone" after a merged
  // transfer came back short or failed.
  MemberIo* merged_next = nullptr;
  uint32_t merged_len = 0;
  bool no_merge = false;
  std::vector<iovec> merged_iov;
  // A read that failed with a medium error is read once more alone before
  // its error counts (Reactor::complete): this is that second read.
  bool read_alone = false;
};

// A completion for an SQE that is not a member I/O (frontends: ublk
// commands, socket I/O on the same ring). on_cqe runs on the reactor.
struct Completion {
  void (*on_cqe)(Completion* c, const io_uring_cqe* cqe) = nullptr;
};

// Member I/O of one drive slot as seen by one reactor. Only the owning
// reactor writes (plain load+store, no locked instructions); anyone reads.
// Latency per op (read, write, flush; failed ones too): from the reactor
// turn that issued the I/O to the turn that reaped it, read off a clock the
// reactor reads twice a turn (not per I/O), so a figure may be early by the
// CPU time of one turn.
enum MemberOp : uint8_t { kOpRead = 0, kOpWrite = 1, kOpFlush = 2, kMemberOps = 3 };
struct DriveLatency {
  std::array<std::atomic<uint64_t>, kLatencyBuckets> buckets{};
  std::atomic<uint64_t> sum_ns{0};
};
struct DriveCounters {
  std::atomic<uint64_t> reads{0}, writes{0}, bytes_read{0}, bytes_written{0}, errors{0};
  std::array<DriveLatency, kMemberOps> latency;
};
struct LatencyTotals {
  std::array<uint64_t, kLatencyBuckets> buckets{};  // per bucket, not cumulative
  uint64_t sum_ns = 0;
};
struct DriveTotals {
  uint64_t reads = 0, writes = 0, bytes_read = 0, bytes_written = 0, errors = 0;
  std::array<LatencyTotals, kMemberOps> latency;
};

struct ReactorStats {
  uint64_t member_reads = 0, member_writes = 0, member_flushes = 0;
  uint64_t member_bytes_read = 0, member_bytes_written = 0;
  uint64_t member_errors = 0;
  // Member I/Os that rode on a neighbour's SQE (plug merging): member I/Os
  // counted above minus this is what the drives saw (flushes aside).
  uint64_t member_ios_merged = 0;
};

class Reactor {
 public:
  // big_entries: SQE128|CQE32 rings, which NVMe passthrough (nvme-char
  // members) needs; everything else works on either.
  Reactor(uint32_t id, size_t arena_bytes, std::unique_ptr<ParityBackend> parity,
          uint32_t ring_entries, uint32_t max_files, bool big_entries = false);
  ~Reactor();
  Reactor(const Reactor&) = delete;
  Reactor& operator=(const Reactor&) = delete;

  uint32_t id() const { return id_; }
  BufferPool& pool() { return pool_; }
  ParityBackend& parity() { return *parity_; }
  // Counted by this reactor's thread (bump(), single_writer.h); any thread
  // may take this snapshot.
  ReactorStats stats() const;
  const DriveCounters& drive_counters(uint32_t slot) const { return per_slot_[slot]; }
  // A slot given to another drive counts from zero (control path, before its first I/O).
  void reset_drive_counters(uint32_t slot);

  // Set-up (control thread, before I/O uses them).
  void register_arenas(const std::vector<iovec>& arenas);
  bool set_file(uint32_t slot, int fd);

  // Data path (owner thread only).
  MemberIo* alloc_io();
  void free_io(MemberIo* io);
  void submit(MemberIo* io);
  // An SQE for a frontend's own operation, its user_data bound to c; the
  // caller fills in the rest. nullptr only if the ring cannot take more now
  // (after submitting what is queued): retry in the next turn.
  io_uring_sqe* sqe_for(Completion* c);
  io_uring* ring() { return &ring_; }
  void defer(Task* t);                 // runs in this reactor's next turn
  // Runs t in the first turn whose clock reads at least due_ns (see
  // turn_ns()); a reactor with such a task sleeps no longer than until
  // then. cancel_timed takes back one that has not run (false: it is not
  // queued there). Owner thread only; the list is short (held writes).
  void defer_until(Task* t, uint64_t due_ns);
  bool cancel_timed(Task* t);
  // The clock read at the start of this turn and after its ring wait
  // (lockstep: the logical clock).
  uint64_t turn_ns() const { return turn_ns_; }
  void wait_for_buffers(Task* t);      // runs again after buffers are freed
  void buffers_freed();
  // One turn: issue queued I/O, reap completions, run inbox and deferred
  // tasks. With `block`, sleeps until something happens (at most timeout_ms).
  // Returns true when it did any work.
  bool poll(bool block = false, int timeout_ms = 100);
  // One non-blocking turn on behalf of a thread that does not own the
  // reactor, when no thread polls it now (a component winding down after
  // its pollers stopped); false, doing nothing, when one does.
  bool poll_if_idle();
  uint64_t in_flight() const { return in_flight_; }
  // Member I/O completions the previous turn reaped: how busy the reactor
  // is (many: more are coming at once; few: it waits on its drives).
  uint32_t member_completions_last_turn() const { return reaped_last_turn_; }

  // Lockstep, for deterministic tests (EngineConfig::lockstep): each poll()
  // waits for every member I/O it has in the ring and completes them in the
  // order they were issued, never sleeps and arms no eventfd, and injected
  // latency runs on a logical clock (kLockstepTurnNs per turn) instead of
  // the wall clock. With one thread polling every reactor in a fixed order,
  // a run is then a function of what it is given: no completion race is left.
  // Frontend completions (sqe_for) are still run in the order they arrive.
  static constexpr uint64_t kLockstepTurnNs = 10000;
  void set_lockstep(bool on) { lockstep_ = on; }
  bool lockstep() const { return lockstep_; }

  // Any thread. A task must not be queued already (checked: a task queued
  // twice is a bug that would run it twice).
  void post(Task* t);
  // Posts t unless it is queued already (not yet run): coalesces wake-ups.
  // Returns whether this call queued it.
  bool post_once(Task* t);
  // The reactor the calling thread owns (set by poll() and claim()).
  static Reactor* current();
  // Whether the calling thread is inside a reactor's poll() (running its
  // completions and tasks): code there must never block.
  static bool in_poll() { return t_poll_depth_ > 0; }
  static void set_current(Reactor* r);
  // The calling thread drives this reactor from now on (submitters call it
  // before their first data-path call; poll() does it too). Checks that no
  // other thread is polling it.
  void claim();

 private:
  bool prep(MemberIo* io);
  bool turn(bool block, int timeout_ms);  // poll()'s work, the caller holding poller_
  // Plug merging (reactor_plug.cpp): read/write I/O to file, block and mem
  // drives waits in plug_ until the turn's submission point, where I/Os of
  // one kind that continue each other on a drive become one vectored SQE.
  bool pluggable(const MemberIo* io) const;
  void flush_plug();
  void prep_merged(io_uring_sqe* sqe, MemberIo* head);
  void complete_merged(MemberIo* head, int res);
  void prep_passthrough(io_uring_sqe* sqe, MemberIo* io);  // nvme-char members
  void count_issued(bool write, uint32_t len);
  void complete(MemberIo* io, int res);
  void read_alone_done(MemberIo* io);
  void arm_eventfd();
  bool arm_parity_poll();
  static void fine_timer_slack();
  // Inline: it guards every data-path call.
  void assert_owner(const char* what) const {
    if (__builtin_expect(t_current_ != this, 0)) owner_violated(what);
  }
  [[noreturn]] void owner_violated(const char* what) const;
  // This thread's id, read once per thread (glibc's gettid() is a system
  // call, and poll() asks on every turn).
  static pid_t this_tid();
  static inline thread_local Reactor* t_current_ = nullptr;
  static inline thread_local uint32_t t_poll_depth_ = 0;
  void push_inbox(Task* t);
  void append_deferred(Task* t);
  void run_task(Task* t);
  bool drain_inbox();
  bool run_deferred();
  bool run_delayed();
  bool run_timed();
  uint64_t sleep_limit_ns(int timeout_ms) const;
  unsigned reap_cq(bool hold);
  bool reap_lockstep();
  uint64_t now_ns() const;
  int buffer_index(const void* p, uint32_t len) const;

  uint32_t id_;
  std::atomic<pid_t> poller_{0};  // the thread inside poll(), 0 when none
  io_uring ring_{};
  BufferPool pool_;
  std::unique_ptr<ParityBackend> parity_;
  bool arena_mapped_ = false;   // the pool is registered with the parity backend's device
  std::vector<iovec> arenas_;
  int event_fd_ = -1;
  uint64_t event_buf_ = 0;
  bool event_armed_ = false;
  bool parity_armed_ = false;   // a poll on parity_->event_fd() is in the ring
  std::atomic<Task*> inbox_{nullptr};
  Task* deferred_head_ = nullptr;
  Task* deferred_tail_ = nullptr;
  Task* buffer_waiters_ = nullptr;
  Task* buffer_waiters_tail_ = nullptr;
  Task* timed_ = nullptr;             // defer_until, unordered
  MemberIo* free_ios_ = nullptr;
  MemberIo* delayed_ = nullptr;       // completions held back by injected latency
  std::vector<MemberIo*> unsubmitted_;  // SQ was full
  // Reads that met a medium error, read again one at a time (the head in
  // flight): see Reactor::complete.
  std::deque<MemberIo*> read_alone_;
  std::vector<MemberIo*> plug_;         // this turn's I/O, merged and prepared by flush_plug()
  // flush_plug: per drive slot, the chain that may still grow (both ends),
  // and every chain's head in the order the turn issued them.
  std::vector<MemberIo*> plug_head_, plug_tail_, plug_heads_;
  uint64_t in_flight_ = 0;
  uint64_t ring_member_ios_ = 0;      // member I/Os prepared into the ring, not yet reaped
  uint32_t reaped_this_turn_ = 0, reaped_last_turn_ = 0;  // member completions
  uint64_t next_seq_ = 0;
  uint32_t pending_sqes_ = 0;
  bool lockstep_ = false;
  uint64_t clock_ns_ = 0;             // lockstep: the logical clock
  uint64_t turn_ns_ = 0;              // read at the start of a turn and after its ring wait
  std::vector<MemberIo*> reaped_;     // lockstep: this turn's member completions
  ReactorStats stats_;
  std::unique_ptr<DriveCounters[]> per_slot_;
};

}  // namespace gpuraid
