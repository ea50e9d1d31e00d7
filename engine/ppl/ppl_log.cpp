#include "engine/ppl/ppl_log.h"

#include <sys/uio.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <span>

#include <unistd.h>

#include "engine/clock.h"
#include "engine/invariant.h"
#include "engine/ops/op.h"
#include "engine/single_writer.h"

namespace gpuraid {

namespace {
constexpr uint32_t kMaxBatchOps = 64;
// A batch of fewer than kHoldBelowOps writes waits a turn more where the
// reactor is busy (the turn before reaped at least kBusyCompletions member
// completions: more come in the next, and their writes join it), and a
// second turn where it is twice as busy: at queue depth 32 a batch then
// holds about every write of its reactor, 32 instead of 19-22 with one turn
// and 11 with none. Each step measured in alternated runs (AMD EPYC, null
// drives, 4 KiB random writes): one turn +7-10 % guarded IOPS; the second
// RAID 5 7+1 guard ratio median 0.77 -> 0.84, RAID 6 8+2 0.77 -> 0.80. A
// reactor that waits on its drives (few completions a turn: queue depth 1,
// slow drives) issues at once: a turn more would only add latency there
// (measured on file drives; queue depths 1 and 8 unchanged); the second
// turn's doubled bar keeps queue depth 8 from waiting twice.
// kNoGainHolds held turns in a row that brought no write (a sequential
// stream: the stripe gather and the stripe locks keep its next writes
// behind the held ones, so its reactor is busy but nothing can join) stop
// holding for the next kSkipHoldsAfterNoGain batches: there a turn more
// only delays the data writes, whose buffers leave the cache meanwhile (mem
// drives, 128 KiB sequential writes: 3 writes per batch with or without
// holds, guarded IOPS lower with them).
constexpr uint32_t kHoldBelowOps = 32;
constexpr uint32_t kBusyCompletions = 16;
constexpr uint32_t kMaxHolds = 2;
constexpr uint32_t kNoGainHolds = 4;
constexpr uint32_t kSkipHoldsAfterNoGain = 16;
constexpr size_t kFlushEvery = 64;  // written batches that start a flush round without pressure

struct FreeDeleter {
  void operator()(uint8_t* p) const { free(p); }
};

// The iovecs of bytes [0, at) (part 0) or [at, end) (part 1) of v.
void split_iov(const std::vector<iovec>& v, uint64_t at, int part, std::vector<iovec>* out) {
  uint64_t pos = 0;
  for (const iovec& x : v) {
    const uint64_t a = pos, b = pos + x.iov_len;
    pos = b;
    const uint64_t lo = part ? std::max(a, at) : a, hi = part ? b : std::min(b, at);
    if (lo >= hi) continue;
    out->push_back(iovec{static_cast<uint8_t*>(x.iov_base) + (lo - a), size_t(hi - lo)});
  }
}
}  // namespace

// One reactor turn's entries. Owner-side fields are its reactor's; the
// lock-side ones (pieces_left, durable) are under the log's lock.
struct PplLog::Batch {
  struct Out {  // the piece for one member
    uint32_t member = 0;
    uint32_t entries = 0;
    uint32_t header_bytes = 0;
    uint64_t bytes = 0, off = 0;
    std::vector<iovec> iov;  // a piece over the ring's end: all of it, for split_iov
  };
  // One member's piece as its writes join: the header, each entry encoded
  // in it at once (while the write's fields are in the cache: made at
  // issue, reading every op again was most of write_pieces' time; payload
  // offsets from the header's end until the seal), and the payloads.
  struct Staged {
    std::unique_ptr<uint8_t, FreeDeleter> header;
    size_t cap = 0;          // bytes allocated at header
    size_t entry_bytes = 0;  // in use after the fixed part
    std::vector<iovec> payloads;

    // Room for a header of `need` bytes (a multiple of 4 KiB), the entries
    // kept: rare, a 4 KiB header holds dozens of entries.
    void grow(size_t need) {
      const size_t n = std::max(need, 2 * cap);
      std::unique_ptr<uint8_t, FreeDeleter> h(static_cast<uint8_t*>(aligned_alloc(4096, n)));
      GPR_ASSERT(h, "write-hole log: out of memory for a batch header");
      if (entry_bytes) memcpy(h.get() + kPplBatchFixedBytes, header.get() + kPplBatchFixedBytes, entry_bytes);
      header = std::move(h);
      cap = n;
    }
  };
  PplLog* log = nullptr;
  uint32_t reactor = 0;
  std::vector<Op*> ops;
  uint32_t count[kMaxMembers] = {};    // entries per member
  uint64_t payload[kMaxMembers] = {};  // payload bytes per member
  uint64_t members = 0;                // members with a piece
  Staged staged[kMaxMembers];
  std::vector<Out> out_store;  // grows, never shrinks: its buffers are kept
  uint32_t nouts = 0;
  std::span<Out> outs() { return std::span<Out>(out_store.data(), nouts); }
  uint64_t seq = 0;
  uint32_t ios_pending = 0;
  uint32_t ops_left = 0;
  uint64_t written = 0;     // members the batch's writes went to
  uint64_t flush_mask = 0;  // of those, with a volatile cache
  uint32_t pieces_left = 0;  // (lock) pieces still in rings
  bool durable = false;      // (lock)
  Task task;                 // writes the pieces once placed after a wait

  void reset() {
    ops.clear();
    for (uint64_t m = members; m; m &= m - 1) {
      const uint32_t i = uint32_t(__builtin_ctzll(m));
      count[i] = 0;
      payload[i] = 0;
      staged[i].entry_bytes = 0;
      staged[i].payloads.clear();
    }
    members = 0;
    seq = 0;
    ios_pending = ops_left = pieces_left = 0;
    written = flush_mask = 0;
    durable = false;
  }
};

// A reactor's part of the log. Its figures are bumped by that reactor alone
// (single_writer.h); `outstanding` counts the flushes, piece writes and
// tasks of this reactor in flight (other threads add posted tasks).
struct alignas(64) PplLog::PerReactor {
  PplLog* log = nullptr;
  std::atomic<uint64_t> logged{0}, batches{0}, waits{0}, flush_rounds{0}, tail_writes{0};
  std::atomic<int64_t> outstanding{0};
  uint32_t id = 0;
  Batch* open = nullptr;
  Task issue_task;  // the open batch goes out at the start of the next turn (or up to kMaxHolds later)
  bool issue_queued = false;
  uint32_t held = 0;  // times issue_task was deferred once more
  uint64_t held_logged = 0;  // `logged` at the last hold: a write joined since where it grew
  uint32_t no_gain = 0;     // held turns in a row that brought no write
  uint32_t skip_holds = 0;  // batches to issue without holding
  bool hold(Reactor& r);
  std::vector<Batch*> written;  // (log lock) waiting for a flush round
  std::vector<Batch*> round;    // the flush round in flight covers these
  // Written batches that need no flush (no member with a volatile cache):
  // durable, told to the rings at this reactor's queued issue of its open
  // batch (batch_written says when), so most turns lock the log once.
  std::vector<Batch*> settled;
  uint32_t flush_pending = 0;
  bool flushing = false;
  Task flush_task;  // another reactor asks for a round (a batch waits for room)
  std::vector<Op*> scratch;
  std::vector<Batch*> spare;  // free batches this reactor took from `free` in one go
  // (log lock) This reactor's retired batches, whoever retired them: a batch
  // goes back to the reactor that fills it, its header buffers in that
  // core's cache rather than moving between cores.
  std::vector<Batch*> free;
};

PplLog::PplLog(Volume& v, const PplLayout& l, const std::array<uint8_t, 16>& group, uint64_t first_seq)
    : vol_(v),
      layout_(l),
      ring_(ppl_ring(l, kPplFormatTailed)),
      group_(group),
      members_(v.geometry().members),
      first_seq_(first_seq),
      seq_(first_seq) {
  GPR_ASSERT(l.bytes() > kPplTailAreaBytes, "write-hole log area of %llu bytes has no room for its ring",
             (unsigned long long)l.bytes());
  rings_.resize(members_);
  for (Ring& r : rings_) {
    r.tail_buf.reset(static_cast<uint8_t*>(aligned_alloc(4096, 4096)));
    GPR_ASSERT(r.tail_buf, "write-hole log: out of memory for a tail block");
  }
  // A piece stays within a quarter of the ring, so that a waiting batch
  // always fits once older pieces retire.
  max_piece_ = std::max<uint64_t>(ring_.bytes / 4, l.slot_bytes + ppl_batch_header_bytes(kMaxBatchOps, kMaxMembers));
  GPR_ASSERT(max_piece_ <= ring_.bytes, "write-hole log area of %llu bytes is too small for one entry",
             (unsigned long long)l.bytes());
  for (uint32_t r = 0; r < v.engine().reactor_count(); r++) {
    auto pr = std::make_unique<PerReactor>();
    pr->log = this;
    pr->id = r;
    pr->issue_task.arg = pr.get();
    pr->issue_task.run = [](Task* t) {
      auto* p = static_cast<PerReactor*>(t->arg);
      Reactor& r = p->log->vol_.engine().reactor(p->id);
      if (p->hold(r)) return r.defer(t);  // still queued: `outstanding` keeps counting it
      p->issue_queued = false;
      p->log->issue_open(*p);
      p->outstanding.fetch_sub(1, std::memory_order_release);
    };
    pr->flush_task.arg = pr.get();
    pr->flush_task.run = [](Task* t) {
      auto* p = static_cast<PerReactor*>(t->arg);
      p->log->maybe_flush(*p);
      p->outstanding.fetch_sub(1, std::memory_order_release);
    };
    reactors_.push_back(std::move(pr));
  }
}

// Whether the open batch waits a turn more (kHoldBelowOps, above).
bool PplLog::PerReactor::hold(Reactor& r) {
  if (held) {
    no_gain = logged.load(std::memory_order_relaxed) > held_logged ? 0 : no_gain + 1;
    if (no_gain >= kNoGainHolds) {
      no_gain = 0;
      skip_holds = kSkipHoldsAfterNoGain;
    }
  }
  if (skip_holds == 0 && held < kMaxHolds && open && open->ops.size() < kHoldBelowOps &&
      r.member_completions_last_turn() >= kBusyCompletions * (held + 1)) {
    held++;
    held_logged = logged.load(std::memory_order_relaxed);
    return true;
  }
  if (skip_holds && open && !open->ops.empty()) skip_holds--;
  held = 0;
  return false;
}

// Owners call shutdown() first and keep the log when it fails; one that
// did not gets the same wait here, and a stop rather than a use after free.
PplLog::~PplLog() {
  GPR_ASSERT(shutdown(), "write-hole log freed with %lld flushes or tasks in flight", (long long)outstanding());
}

bool PplLog::shutdown(double timeout_s) {
  const uint64_t deadline = mono_ns() + uint64_t(timeout_s * 1e9);
  while (outstanding() > 0) {
    if (mono_ns() > deadline) return false;
    bool polled = false;
    for (uint32_t i = 0; i < vol_.engine().reactor_count(); i++) {
      Reactor& r = vol_.engine().reactor(i);
      polled |= Reactor::current() == &r ? r.poll(false) : r.poll_if_idle();
    }
    if (!polled) usleep(1000);
  }
  return true;
}

uint64_t PplLog::logged_writes() const {
  uint64_t n = 0;
  for (const auto& pr : reactors_) n += pr->logged.load(std::memory_order_relaxed);
  return n;
}
uint64_t PplLog::batches() const {
  uint64_t n = 0;
  for (const auto& pr : reactors_) n += pr->batches.load(std::memory_order_relaxed);
  return n;
}
uint64_t PplLog::waits() const {
  uint64_t n = 0;
  for (const auto& pr : reactors_) n += pr->waits.load(std::memory_order_relaxed);
  return n;
}
uint64_t PplLog::flush_rounds() const {
  uint64_t n = 0;
  for (const auto& pr : reactors_) n += pr->flush_rounds.load(std::memory_order_relaxed);
  return n;
}
uint64_t PplLog::tail_writes() const {
  uint64_t n = 0;
  for (const auto& pr : reactors_) n += pr->tail_writes.load(std::memory_order_relaxed);
  return n;
}
int64_t PplLog::outstanding() const {
  int64_t n = 0;
  for (const auto& pr : reactors_) n += pr->outstanding.load(std::memory_order_acquire);
  return n;
}

void PplLog::lock() {
  while (busy_.exchange(true, std::memory_order_acquire))
    while (busy_.load(std::memory_order_relaxed)) __builtin_ia32_pause();
}

// Retired batches go back to their reactor's free list (durable() frees
// them under the lock, on whichever reactor retires them); a reactor takes
// several at a time into its spares, so that most batches cost no lock to
// open.
PplLog::Batch* PplLog::take_batch(PerReactor& pr) {
  constexpr size_t kTakeAtOnce = 8;
  if (pr.spare.empty()) {
    lock();
    const size_t n = std::min(pr.free.size(), kTakeAtOnce);
    pr.spare.insert(pr.spare.end(), pr.free.end() - std::ptrdiff_t(n), pr.free.end());
    pr.free.resize(pr.free.size() - n);
    if (pr.spare.empty()) {
      all_.push_back(std::make_unique<Batch>());
      Batch* b = all_.back().get();
      b->log = this;
      b->task.arg = b;
      b->task.run = [](Task* t) {
        auto* x = static_cast<Batch*>(t->arg);
        PerReactor& owner = *x->log->reactors_[x->reactor];
        x->log->write_pieces(x);
        owner.outstanding.fetch_sub(1, std::memory_order_release);
      };
      pr.spare.push_back(b);
    }
    unlock();
  }
  Batch* b = pr.spare.back();
  pr.spare.pop_back();
  b->reset();
  b->reactor = pr.id;
  return b;
}

// Whether op's entries still fit b's pieces.
bool PplLog::fits(const Batch* b, const Op* op) const {
  const uint32_t k = vol_.geometry().data_strips();
  for (uint32_t i = 0; i < op->w.ppl_nrows; i++) {
    const WriteCtx::PplRow& row = op->w.ppl_rows[i];
    if (ppl_batch_header_bytes(b->count[row.member] + 1, k) + b->payload[row.member] + row.len > max_piece_)
      return false;
  }
  return true;
}

void PplLog::join(Op* op) {
  PerReactor& pr = *reactors_[op->home->id()];
  if (pr.open && !fits(pr.open, op)) issue_open(pr);  // full: it goes now, a new one opens
  if (!pr.open) pr.open = take_batch(pr);
  Batch* b = pr.open;
  const uint32_t k = vol_.geometry().data_strips(), entry_bytes = ppl_batch_entry_bytes(k);
  for (uint32_t i = 0; i < op->w.ppl_nrows; i++) {
    const WriteCtx::PplRow& row = op->w.ppl_rows[i];
    Batch::Staged& s = b->staged[row.member];
    const size_t need = ppl_batch_header_bytes(b->count[row.member] + 1, k);
    if (s.cap < need) s.grow(need);
    encode_ppl_batch_entry(PplEntryRef{&op->w.ppl_entry, row.row, row.sum, uint32_t(b->payload[row.member])}, k,
                           s.header.get() + kPplBatchFixedBytes + s.entry_bytes);
    s.entry_bytes += entry_bytes;
    if (row.len) s.payloads.push_back(iovec{row.payload, row.len});
    b->count[row.member]++;
    b->payload[row.member] += row.len;
    b->members |= 1ull << row.member;
  }
  b->ops.push_back(op);
  op->w.ppl_batch = b;
  bump(pr.logged);
  if (b->ops.size() >= kMaxBatchOps) return issue_open(pr);
  if (!pr.issue_queued) {
    pr.issue_queued = true;
    pr.outstanding.fetch_add(1, std::memory_order_relaxed);
    op->home->defer(&pr.issue_task);
  }
}

void PplLog::issue_open(PerReactor& pr) {
  Batch* b = pr.open;
  pr.open = nullptr;
  if (!b || b->ops.empty()) {  // gone already (full, issued in its turn), or nothing joined after all
    if (b) pr.spare.push_back(b);
    return settle(pr);  // what batch_written left for this issue
  }
  const uint32_t k = vol_.geometry().data_strips();
  if (b->out_store.size() < size_t(__builtin_popcountll(b->members))) b->out_store.resize(__builtin_popcountll(b->members));
  size_t n = 0;
  for (uint64_t m = b->members; m; m &= m - 1, n++) {
    Batch::Out& o = b->out_store[n];
    o.member = uint32_t(__builtin_ctzll(m));
    o.entries = b->count[o.member];
    o.header_bytes = ppl_batch_header_bytes(o.entries, k);
    o.bytes = o.header_bytes + b->payload[o.member];
  }
  b->nouts = uint32_t(n);
  b->ops_left = uint32_t(b->ops.size());
  Released freed;
  lock();
  if (!pr.settled.empty()) {
    settle_locked(pr.settled.data(), pr.settled.size(), &freed);
    pr.settled.clear();
  }
  const bool placed = waiting_.empty() && place(b);
  if (!placed) {
    waiting_.push_back(b);
    set_pressure(true);
    start_tails_locked(all_rings(), &freed);  // room held back for a tail write: free it now
  }
  unlock();
  post_ready(pr, freed);
  if (placed) return write_pieces(b);
  bump(pr.waits);
  want_flush();
}

// Under the lock: a place in every member's ring, or none (nothing taken).
// A ring is used contiguously, a piece running past the area's end going on
// at its start: room is overwritten in the order it was written, so a
// stripe's older entry never outlives a newer one (replay's premise; a
// skipped gap at the end would keep an older lap's entries).
bool PplLog::place(Batch* b) {
  const uint64_t area = ring_.bytes;
  for (const Batch::Out& o : b->outs()) {
    const Ring& r = rings_[o.member];
    if (area - r.used - r.held - r.pinned < o.bytes) return false;
  }
  for (Batch::Out& o : b->outs()) {
    Ring& r = rings_[o.member];
    o.off = r.head;
    r.pieces.push_back(Piece{b, o.off, o.bytes});
    r.head += o.bytes;
    if (r.head >= area) r.head -= area;  // o.bytes <= area
    ring_used(r, r.used + o.bytes);
  }
  b->pieces_left = uint32_t(b->nouts);
  b->seq = seq_++;
  if (rings_over_half_) set_pressure(true);
  return true;
}

void PplLog::ring_used(Ring& r, uint64_t used) {
  const uint64_t half = ring_.bytes / 2;
  rings_over_half_ += (used > half) - (r.used > half);
  r.used = used;
}

// The pieces, each one vectored write with FUA: the batch header, then the
// partial parities in the ops' own buffers.
void PplLog::write_pieces(Batch* b) {
  Reactor& r = vol_.engine().reactor(b->reactor);
  const uint32_t k = vol_.geometry().data_strips();
  for (Batch::Out& o : b->outs()) {
    PplBatchHeader h;
    h.group = group_;
    h.seq = b->seq;
    h.k = k;
    h.entries = o.entries;
    h.header_bytes = o.header_bytes;
    h.total_bytes = uint32_t(o.bytes);
    seal_ppl_batch_header(h, b->staged[o.member].header.get());
  }
  // A piece past the ring's end is two writes: up to the end, and the rest
  // from the ring's start (both 4 KiB multiples).
  const uint64_t area = ring_.bytes;
  uint32_t ios = 0;
  for (const Batch::Out& o : b->outs()) ios += o.off + o.bytes > area ? 2 : 1;
  b->ios_pending = ios;
  PerReactor& pr = *reactors_[b->reactor];
  pr.outstanding.fetch_add(ios, std::memory_order_relaxed);
  bump(pr.batches);
  for (Batch::Out& o : b->outs()) {
    const uint64_t first = std::min(o.bytes, area - o.off);
    for (int part = 0; part < (first < o.bytes ? 2 : 1); part++) {
      MemberIo* io = r.alloc_io();
      io->kind = MemberIo::Write;
      io->drive = vol_.member(o.member);
      io->slot = vol_.member_slot(o.member);
      io->offset = ring_.offset + (part ? 0 : o.off);
      io->len = uint32_t(part ? o.bytes - first : first);
      io->buf = nullptr;
      io->iov.clear();
      const Batch::Staged& s = b->staged[o.member];
      if (first == o.bytes) {
        io->iov.push_back(iovec{s.header.get(), o.header_bytes});
        io->iov.insert(io->iov.end(), s.payloads.begin(), s.payloads.end());
      } else {
        o.iov.assign(1, iovec{s.header.get(), o.header_bytes});
        o.iov.insert(o.iov.end(), s.payloads.begin(), s.payloads.end());
        split_iov(o.iov, first, part, &io->iov);
      }
      io->dsync = true;
      io->tag = o.member;
      io->ctx = b;
      io->done = piece_done;
      r.submit(io);
    }
  }
}

void PplLog::piece_done(MemberIo* io) {
  Batch* b = static_cast<Batch*>(io->ctx);
  PplLog* log = b->log;
  if (io->res < 0)
    for (Op* op : b->ops)
      for (uint32_t i = 0; i < op->w.ppl_nrows; i++)
        if (op->w.ppl_rows[i].member == io->tag) {
          op->errored |= 1ull << io->tag;
          op->io_err = io->res;
        }
  log->vol_.engine().reactor(b->reactor).free_io(io);
  PerReactor& pr = *log->reactors_[b->reactor];
  if (--b->ios_pending == 0) log->batch_logged(b);
  pr.outstanding.fetch_sub(1, std::memory_order_release);
}

// Every piece is on disk: the batch's writes go on. An op may end at once
// (a failure) and leave; the batch outlives its ops (retired later).
void PplLog::batch_logged(Batch* b) {
  PerReactor& pr = *reactors_[b->reactor];
  pr.scratch.assign(b->ops.begin(), b->ops.end());
  for (Op* op : pr.scratch) ppl_logged(op);
}

void PplLog::leave(Op* op) {
  Batch* b = static_cast<Batch*>(op->w.ppl_batch);
  op->w.ppl_batch = nullptr;
  b->written |= op->w.ppl_written;
  if (--b->ops_left == 0) batch_written(b);
}

void PplLog::batch_written(Batch* b) {
  uint64_t volatile_members = 0;
  const uint64_t failed = vol_.failed_mask(), room = vol_.room_without_drive();
  uint64_t written = b->written & ~failed;
  // A member in the spare room wrote to drives of other members: all of them, to be sure.
  if (written & room) written = (written & ~room) | (((1ull << vol_.geometry().members) - 1) & ~failed & ~room);
  for (uint64_t m = written; m; m &= m - 1) {
    const uint32_t i = uint32_t(__builtin_ctzll(m));
    if (vol_.member(i)->volatile_cache()) volatile_members |= 1ull << i;
  }
  b->flush_mask = volatile_members;
  PerReactor& pr = *reactors_[b->reactor];
  if (!volatile_members) {
    // Durable already: the rings learn it under this reactor's next lock,
    // where that is sure to come: an open batch's issue is queued on this
    // reactor (its writes wait for it, so whoever polls them runs it). Else
    // now, as when a batch waits for room: a reactor that nobody polls any
    // more must not keep pieces other reactors' batches wait behind.
    pr.settled.push_back(b);
    if (!pr.issue_queued || pressure_.load(std::memory_order_relaxed)) settle(pr);
    return;
  }
  lock();
  pr.written.push_back(b);
  unlock();
  maybe_flush(pr);
}

void PplLog::want_flush() {
  set_pressure(true);
  for (auto& pr : reactors_) {
    pr->outstanding.fetch_add(1, std::memory_order_relaxed);
    if (!vol_.engine().reactor(pr->id).post_once(&pr->flush_task)) pr->outstanding.fetch_sub(1, std::memory_order_relaxed);
  }
}

// A flush round: every member the written batches went to, once; when they
// all answered, those batches are durable. Under pressure a round takes the
// written batches of every reactor, not only its own: a flush makes durable
// every write completed before it, whoever issued that write, so room that
// a waiting batch needs never waits for a reactor that nobody polls now (a
// test's writer thread that ended, an idle reactor's last batches).
void PplLog::maybe_flush(PerReactor& pr) {
  settle(pr);
  if (pr.flushing) return;
  const bool pressure = pressure_.load(std::memory_order_relaxed);
  lock();
  if (pressure) {
    for (auto& other : reactors_) {
      pr.round.insert(pr.round.end(), other->written.begin(), other->written.end());
      other->written.clear();
    }
  } else if (pr.written.size() >= kFlushEvery) {
    pr.round.swap(pr.written);
  }
  unlock();
  if (pr.round.empty()) return;
  uint64_t mask = 0;
  for (Batch* b : pr.round) mask |= b->flush_mask;
  mask &= ~vol_.failed_mask();
  bump(pr.flush_rounds);
  if (!mask) {
    durable(pr, pr.round.data(), pr.round.size());
    pr.round.clear();
    return;
  }
  pr.flushing = true;
  pr.flush_pending = uint32_t(__builtin_popcountll(mask));
  pr.outstanding.fetch_add(pr.flush_pending, std::memory_order_relaxed);
  Reactor& r = vol_.engine().reactor(pr.id);
  for (uint64_t m = mask; m; m &= m - 1) {
    const uint32_t i = uint32_t(__builtin_ctzll(m));
    MemberIo* io = r.alloc_io();
    io->kind = MemberIo::Flush;
    io->drive = vol_.member(i);
    io->slot = vol_.member_slot(i);
    io->offset = 0;
    io->len = 0;
    io->buf = nullptr;
    io->iov.clear();
    io->dsync = false;
    io->tag = i;
    io->ctx = &pr;
    io->done = flush_done;
    r.submit(io);
  }
}

void PplLog::flush_done(MemberIo* io) {
  PerReactor& pr = *static_cast<PerReactor*>(io->ctx);
  PplLog* log = pr.log;
  // A member that cannot flush holds writes that may not be on disk: it is
  // failed (and rebuilt), which leaves the others' entries to replay.
  if (io->res < 0) log->vol_.member_error(io->tag, io->res);
  log->vol_.engine().reactor(pr.id).free_io(io);
  if (--pr.flush_pending == 0) {
    pr.flushing = false;
    log->durable(pr, pr.round.data(), pr.round.size());
    pr.round.clear();
    log->maybe_flush(pr);
  }
  pr.outstanding.fetch_sub(1, std::memory_order_release);
}

void PplLog::settle(PerReactor& pr) {
  if (pr.settled.empty()) return;
  durable(pr, pr.settled.data(), pr.settled.size());
  pr.settled.clear();
}

void PplLog::durable(PerReactor& pr, Batch* const* bs, size_t n) {
  Released freed;
  lock();
  settle_locked(bs, n, &freed);
  unlock();
  post_ready(pr, freed);
}

// Batches placed after a wait go out on their own reactors; tail writes
// on this one (pr's, the caller's thread).
void PplLog::post_ready(PerReactor& pr, const Released& out) {
  for (Batch* b : out.ready) {
    reactors_[b->reactor]->outstanding.fetch_add(1, std::memory_order_relaxed);
    vol_.engine().reactor(b->reactor).post(&b->task);
  }
  if (!out.tails) return;
  Reactor& r = vol_.engine().reactor(pr.id);
  for (uint64_t m = out.tails; m; m &= m - 1) {
    const uint32_t i = uint32_t(__builtin_ctzll(m));
    const Ring& ring = rings_[i];
    MemberIo* io = r.alloc_io();
    io->kind = MemberIo::Write;
    io->drive = vol_.member(i);
    io->slot = vol_.member_slot(i);
    io->offset = ring.tail_off;
    io->len = 4096;
    io->buf = ring.tail_buf.get();
    io->iov.clear();
    io->dsync = true;
    io->tag = i;
    io->ctx = &pr;
    io->done = tail_done;
    pr.outstanding.fetch_add(1, std::memory_order_relaxed);
    bump(pr.tail_writes);
    r.submit(io);
  }
}

// Marks the batches durable and retires, in every ring, the pieces at its
// front whose batches are durable (their room held until a tail write);
// batches that waited for room and now have it are added to out->ready (to
// go out on their own reactors).
void PplLog::settle_locked(Batch* const* bs, size_t n, Released* out) {
  uint64_t rings = 0;  // only the rings these batches have pieces in can retire any
  for (size_t i = 0; i < n; i++) rings |= bs[i]->members;
  for (size_t i = 0; i < n; i++) bs[i]->durable = true;
  for (uint64_t m = rings; m; m &= m - 1) {
    Ring& r = rings_[__builtin_ctzll(m)];
    while (!r.pieces.empty() && r.pieces.front().batch->durable) {
      Batch* b = r.pieces.front().batch;
      (b->seq < tail_cap_ ? r.held : r.pinned) += r.pieces.front().bytes;
      ring_used(r, r.used - r.pieces.front().bytes);
      r.pieces.pop_front();
      if (--b->pieces_left == 0) reactors_[b->reactor]->free.push_back(b);
    }
  }
  place_waiting_locked(out);
  start_tails_locked(waiting_.empty() ? rings : all_rings(), out);
}

void PplLog::place_waiting_locked(Released* out) {
  // Whether rings are over half full after the pieces placed below too.
  while (!waiting_.empty() && place(waiting_.front())) {
    out->ready.push_back(waiting_.front());
    waiting_.pop_front();
  }
  set_pressure(rings_over_half_ > 0 || !waiting_.empty());
}

// A tail write for each of `rings` with reclaimed room held back, no tail
// write in flight, and an eighth of the ring held or a batch waiting: it
// names the ring's oldest live piece (or the next seq, none being live), so
// everything it frees is below it. A failed member's ring is not written
// (its log is no longer read; a drive that rejoins has it wiped).
void PplLog::start_tails_locked(uint64_t rings, Released* out) {
  const uint64_t failed = vol_.failed_mask();
  bool freed = false;
  for (uint64_t m = rings; m; m &= m - 1) {
    const uint32_t i = uint32_t(__builtin_ctzll(m));
    Ring& r = rings_[i];
    if (r.tail_busy || r.held == 0) continue;
    if ((failed >> i & 1) || !vol_.member(i)) {
      r.held = r.pinned = 0;
      freed = true;
      continue;
    }
    // Every held piece is older than the live ones, than seq_ and than a
    // test's cap (those above it are pinned): all of it goes.
    const uint64_t seq = std::min(r.pieces.empty() ? seq_ : r.pieces.front().batch->seq, tail_cap_);
    if (r.held < ring_.bytes / 8 && waiting_.empty()) continue;
    PplTail t;
    t.group = group_;
    t.seq = seq;
    t.count = r.tail_count++;
    encode_ppl_tail(t, r.tail_buf.get());
    r.tail_off = layout_.offset + (t.count % 2) * 4096;
    r.fencing = r.held;
    r.tail_busy = true;
    out->tails |= 1ull << i;
  }
  if (freed) place_waiting_locked(out);  // a failed member's room, free at once
}

void PplLog::freeze_reclaim_for_crash_test() {
  lock();
  tail_cap_ = std::min(tail_cap_, seq_);  // called again for each torn write: the first counts
  unlock();
}

void PplLog::tail_done(MemberIo* io) {
  PerReactor& pr = *static_cast<PerReactor*>(io->ctx);
  PplLog* log = pr.log;
  const uint32_t i = io->tag;
  // A member that cannot write its tail is failed (its log is not read
  // again), so the room is free either way.
  if (io->res < 0) log->vol_.member_error(i, io->res);
  log->vol_.engine().reactor(pr.id).free_io(io);
  Released freed;
  log->lock();
  Ring& r = log->rings_[i];
  r.held -= r.fencing;
  r.fencing = 0;
  r.tail_busy = false;
  log->place_waiting_locked(&freed);
  log->start_tails_locked(1ull << i, &freed);
  log->unlock();
  log->post_ready(pr, freed);
  pr.outstanding.fetch_sub(1, std::memory_order_release);
}

}  // namespace gpuraid
