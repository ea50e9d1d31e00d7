#include "engine/reactor.h"
#include "engine/single_writer.h"

#include "engine/clock.h"
#include "engine/eventfd_signal.h"
#include "engine/invariant.h"
#include "engine/io/nvme_char.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cassert>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>

namespace gpuraid {

namespace {
constexpr uint64_t kEventTag = 1;   // user_data of the eventfd read; MemberIo pointers are never 1
constexpr uint64_t kParityTag = 3;  // user_data of the poll on the parity backend's event fd

}  // namespace

Reactor::Reactor(uint32_t id, size_t arena_bytes, std::unique_ptr<ParityBackend> parity,
                 uint32_t ring_entries, uint32_t max_files, bool big_entries)
    : id_(id), pool_(arena_bytes), parity_(std::move(parity)) {
  io_uring_params p{};
  p.flags = IORING_SETUP_CQSIZE | (big_entries ? IORING_SETUP_SQE128 | IORING_SETUP_CQE32 : 0);
  p.cq_entries = ring_entries * 4;
  int r = io_uring_queue_init_params(ring_entries, &ring_, &p);
  if (r < 0) throw std::runtime_error(std::string("io_uring_queue_init: ") + strerror(-r));
  r = io_uring_register_files_sparse(&ring_, max_files);
  if (r < 0) throw std::runtime_error(std::string("io_uring_register_files_sparse: ") + strerror(-r));
  per_slot_.reset(new DriveCounters[max_files]);
  plug_head_.assign(max_files, nullptr);
  plug_tail_.assign(max_files, nullptr);
  event_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (event_fd_ < 0) throw std::runtime_error("eventfd failed");
  unsubmitted_.reserve(ring_entries);
  // The arena is where the engine's parity jobs read and write: a GPU
  // backend maps it for its device (zero-copy). Refused, jobs still run,
  // staged, and the backend's counters say so.
  std::string why;
  arena_mapped_ = parity_->register_memory(pool_.base(), pool_.size(), &why);
  if (!arena_mapped_)
    fprintf(stderr, "gpuraid: reactor %u: parity backend %s cannot map its buffers (%s); its jobs take the staged path\n",
            id_, parity_->name(), why.c_str());
}

Reactor::~Reactor() {
  // No parity job may be left on the arena when it is unmapped for the device.
  for (int i = 0; i < 100000 && parity_->in_flight() > 0; i++) {
    parity_->poll();
    if (parity_->in_flight() > 0) usleep(100);
  }
  if (arena_mapped_) parity_->unregister_memory(pool_.base());
  parity_.reset();
  io_uring_queue_exit(&ring_);
  if (event_fd_ >= 0) close(event_fd_);
  while (free_ios_) {
    MemberIo* n = free_ios_->next;
    delete free_ios_;
    free_ios_ = n;
  }
}

void Reactor::register_arenas(const std::vector<iovec>& arenas) {
  arenas_ = arenas;
  int r = io_uring_register_buffers(&ring_, arenas_.data(), unsigned(arenas_.size()));
  if (r < 0) throw std::runtime_error(std::string("io_uring_register_buffers: ") + strerror(-r));
}

void Reactor::reset_drive_counters(uint32_t slot) {
  DriveCounters& c = per_slot_[slot];
  for (auto* x : {&c.reads, &c.writes, &c.bytes_read, &c.bytes_written, &c.errors}) x->store(0);
  for (auto& l : c.latency) {
    for (auto& b : l.buckets) b.store(0);
    l.sum_ns.store(0);
  }
}

bool Reactor::set_file(uint32_t slot, int fd) {
  return io_uring_register_files_update(&ring_, slot, &fd, 1) == 1;
}

MemberIo* Reactor::alloc_io() {
  assert_owner("alloc_io");
  MemberIo* io = free_ios_;
  if (io) {
    free_ios_ = io->next;
  } else {
    io = new MemberIo();  // grows to the peak depth once, then recycles
    io->iov.reserve(16);
  }
  io->next = nullptr;
  io->iov.clear();
  io->buf = nullptr;
  io->dsync = false;
  io->no_merge = false;
  io->read_alone = false;
  io->merged_next = nullptr;
  io->res = 0;
  io->due_ns = 0;
  return io;
}

void Reactor::free_io(MemberIo* io) {
  io->next = free_ios_;
  free_ios_ = io;
}

int Reactor::buffer_index(const void* p, uint32_t len) const {
  auto a = static_cast<const uint8_t*>(p);
  for (size_t i = 0; i < arenas_.size(); i++) {
    auto b = static_cast<const uint8_t*>(arenas_[i].iov_base);
    if (a >= b && a + len <= b + arenas_[i].iov_len) return int(i);
  }
  return -1;
}

void Reactor::submit(MemberIo* io) {
  assert_owner("submit");
  FaultInjector& f = io->drive->faults();
  io->short_by = 0;
  io->seq = next_seq_++;
  io->issue_ns = turn_ns_;
  if (f.active()) {
    int fail = 0;
    switch (f.on_issue(io->kind == MemberIo::Write, io->dsync, io->offset, io->len)) {
      case FaultInjector::Action::FailEio: fail = -EIO; break;
      case FaultInjector::Action::FailMedium: fail = -ENODATA; break;
      case FaultInjector::Action::FailNoDev: fail = -ENODEV; break;
      case FaultInjector::Action::Shorten:
        // Really move less data (a single buffer), as a failing drive would.
        if (io->kind != MemberIo::Flush) io->short_by = io->len > 4096 ? 4096 : io->len;
        break;
      case FaultInjector::Action::Drop: fail = int(io->len); break;  // "done", nothing written
      case FaultInjector::Action::Issue: break;
    }
    if (fail > 0) {
      io->res = fail;
      io->due_ns = 0;
      io->next = delayed_;
      delayed_ = io;
      return;
    }
    if (fail) {
      // Reported in the next turn, never from inside submit(): callers
      // issue several I/Os in a row and must not be re-entered.
      io->res = fail;
      bump(stats_.member_errors);
      bump(per_slot_[io->slot].errors);
      io->due_ns = 0;
      io->next = delayed_;
      delayed_ = io;
      return;
    }
    if (uint32_t us = f.latency_us()) io->due_ns = now_ns() + uint64_t(us) * 1000;
  }
  if (DriveThrottle* t = io->drive->throttle(); t && io->kind != MemberIo::Flush) {
    const uint64_t now = now_ns(), due = t->reserve(io->kind == MemberIo::Write, io->len, now);
    if (due > now && due > io->due_ns) io->due_ns = due;
  }
  in_flight_++;
  if (pluggable(io)) plug_.push_back(io);  // prepared at the turn's submission point
  else if (!prep(io)) unsubmitted_.push_back(io);
}

bool Reactor::prep(MemberIo* io) {
  io_uring_sqe* sqe = io_uring_get_sqe(&ring_);
  if (!sqe) {
    io_uring_submit(&ring_);
    pending_sqes_ = 0;
    sqe = io_uring_get_sqe(&ring_);
    if (!sqe) return false;
  }
  const int slot = int(io->slot);
  if (io->drive->type() == DriveType::Null) {
    io_uring_prep_nop(sqe);
  } else if (io->drive->type() == DriveType::NvmeChar) {
    prep_passthrough(sqe, io);
  } else if (io->kind == MemberIo::Flush) {
    io_uring_prep_fsync(sqe, slot, IORING_FSYNC_DATASYNC);
    sqe->flags |= IOSQE_FIXED_FILE;
    bump(stats_.member_flushes);
  } else {
    const bool wr = io->kind == MemberIo::Write;
    if (io->merged_next) {
      prep_merged(sqe, io);
    } else if (io->iov.empty()) {
      const uint32_t len = io->len - io->short_by;
      int bi = buffer_index(io->buf, len);
      if (bi >= 0) {
        if (wr) io_uring_prep_write_fixed(sqe, slot, io->buf, len, io->offset, bi);
        else io_uring_prep_read_fixed(sqe, slot, io->buf, len, io->offset, bi);
      } else {
        if (wr) io_uring_prep_write(sqe, slot, io->buf, len, io->offset);
        else io_uring_prep_read(sqe, slot, io->buf, len, io->offset);
      }
    } else {
      if (wr) io_uring_prep_writev(sqe, slot, io->iov.data(), unsigned(io->iov.size()), io->offset);
      else io_uring_prep_readv(sqe, slot, io->iov.data(), unsigned(io->iov.size()), io->offset);
    }
    if (wr && io->dsync) sqe->rw_flags = RWF_DSYNC;
    sqe->flags |= IOSQE_FIXED_FILE;
    if (!io->merged_next) count_issued(wr, io->len);
  }
  io_uring_sqe_set_data(sqe, io);
  pending_sqes_++;
  ring_member_ios_++;
  return true;
}

ReactorStats Reactor::stats() const {
  static_assert(sizeof(ReactorStats) == 7 * sizeof(uint64_t), "a ReactorStats counter is missing here");
  ReactorStats s;
  s.member_reads = read_counter(stats_.member_reads);
  s.member_writes = read_counter(stats_.member_writes);
  s.member_flushes = read_counter(stats_.member_flushes);
  s.member_bytes_read = read_counter(stats_.member_bytes_read);
  s.member_bytes_written = read_counter(stats_.member_bytes_written);
  s.member_errors = read_counter(stats_.member_errors);
  s.member_ios_merged = read_counter(stats_.member_ios_merged);
  return s;
}

void Reactor::count_issued(bool write, uint32_t len) {
  if (write) {
    bump(stats_.member_writes);
    bump(stats_.member_bytes_written, len);
  } else {
    bump(stats_.member_reads);
    bump(stats_.member_bytes_read, len);
  }
}

void Reactor::prep_passthrough(io_uring_sqe* sqe, MemberIo* io) {
  NvmeCmd c;
  c.nsid = io->drive->nsid();
  c.lba_shift = io->drive->lba_shift();
  if (io->kind == MemberIo::Flush) {
    c.op = NvmeIo::Flush;
    bump(stats_.member_flushes);
  } else {
    const bool wr = io->kind == MemberIo::Write;
    c.op = wr ? NvmeIo::Write : NvmeIo::Read;
    c.offset = io->offset;
    c.len = io->len;
    c.fua = wr && io->dsync;  // FUA instead of a write plus flush
    if (io->iov.empty()) {
      c.buf = io->buf;
      c.fixed_buffer = buffer_index(io->buf, io->len);
    } else {
      c.iov = io->iov.data();
      c.iov_count = uint32_t(io->iov.size());
    }
    count_issued(wr, io->len);
  }
  prep_nvme_cmd(sqe, int(io->slot), c);
}

// Results are normalised here: a null drive's NOP counts as the full
// transfer; a short transfer becomes -EIO (a drive that moves less than
// asked is failing, and the engine treats it so).
void Reactor::complete(MemberIo* io, int res) {
  FaultInjector& f = io->drive->faults();
  const bool wr = io->kind == MemberIo::Write;
  // A medium error fails the whole request the block layer made of
  // adjacent bios (the bytes past the bad sector too), so a read merged
  // with a bad sector's fails as if it held one. Read once more alone, one
  // such read in flight at a time so that they do not merge with each
  // other, before the error counts: as md retries a failed read with
  // REQ_NOMERGE (raid5's R5_ReadNoMerge), which io_uring cannot ask for.
  // (Raw results of block and file reads: passthrough commands are never merged.)
  if (io->kind == MemberIo::Read && medium_error(res) && !io->read_alone) {
    io->read_alone = true;
    io->no_merge = true;
    read_alone_.push_back(io);
    if (read_alone_.size() == 1) submit(io);
    return;
  }
  if (io->read_alone) read_alone_done(io);
  if (io->drive->type() == DriveType::Null && res >= 0) res = int(io->len - io->short_by);
  if (io->drive->type() == DriveType::NvmeChar) res = nvme_cmd_result(res, io->kind == MemberIo::Flush ? 0 : io->len);
  if (io->short_by && !io->iov.empty() && res > 0) res -= int(io->short_by);  // vectored: reported short
  if (f.active()) res = f.on_complete(wr, res);
  if (io->kind != MemberIo::Flush && res >= 0 && uint32_t(res) != io->len) res = -EIO;
  if (io->kind == MemberIo::Flush && res > 0) res = 0;
  DriveCounters& dc = per_slot_[io->slot];
  DriveLatency& lat = dc.latency[io->kind == MemberIo::Read ? kOpRead : wr ? kOpWrite : kOpFlush];
  const uint64_t took = turn_ns_ > io->issue_ns ? turn_ns_ - io->issue_ns : 0;
  bump(lat.buckets[latency_bucket(took)]);
  bump(lat.sum_ns, took);
  if (res < 0) {
    bump(stats_.member_errors);
    bump(dc.errors);
  } else if (io->kind == MemberIo::Read) {
    bump(dc.reads);
    bump(dc.bytes_read, io->len);
  } else if (io->kind == MemberIo::Write) {
    bump(dc.writes);
    bump(dc.bytes_written, io->len);
  }
  io->res = res;
  if (io->due_ns && now_ns() < io->due_ns) {
    io->next = delayed_;
    delayed_ = io;
    return;
  }
  io->done(io);
}

io_uring_sqe* Reactor::sqe_for(Completion* c) {
  io_uring_sqe* sqe = io_uring_get_sqe(&ring_);
  if (!sqe) {
    io_uring_submit(&ring_);
    pending_sqes_ = 0;
    sqe = io_uring_get_sqe(&ring_);
    if (!sqe) return nullptr;
  }
  // Bit 0 tags a Completion (MemberIo pointers are aligned, so it is clear on theirs).
  io_uring_sqe_set_data64(sqe, reinterpret_cast<uint64_t>(c) | 1);
  pending_sqes_++;
  in_flight_++;
  return sqe;
}

namespace {
// Marks t queued; false if it already was.
bool mark_queued(Task* t) { return !std::atomic_ref<bool>(t->queued).exchange(true, std::memory_order_acq_rel); }
// Just before it runs: from here on the task may be queued again.
void mark_dequeued(Task* t) { std::atomic_ref<bool>(t->queued).store(false, std::memory_order_release); }
}  // namespace

void Reactor::defer(Task* t) {
  assert_owner("defer");
  GPR_ASSERT(mark_queued(t), "reactor %u: task %p (run %p) deferred while already queued", id_, (void*)t,
             (void*)t->run);
  append_deferred(t);
}

void Reactor::defer_until(Task* t, uint64_t due_ns) {
  assert_owner("defer_until");
  GPR_ASSERT(mark_queued(t), "reactor %u: task %p (run %p) timed while already queued", id_, (void*)t,
             (void*)t->run);
  t->due_ns = due_ns;
  t->next = timed_;
  timed_ = t;
}

bool Reactor::cancel_timed(Task* t) {
  assert_owner("cancel_timed");
  for (Task** pp = &timed_; *pp; pp = &(*pp)->next) {
    if (*pp != t) continue;
    *pp = t->next;
    t->next = nullptr;
    mark_dequeued(t);
    return true;
  }
  return false;
}

bool Reactor::run_timed() {
  if (!timed_) return false;
  const uint64_t now = now_ns();
  Task* ready = nullptr;
  for (Task** pp = &timed_; *pp;) {
    Task* t = *pp;
    if (t->due_ns <= now) {
      *pp = t->next;
      t->next = ready;
      ready = t;
    } else {
      pp = &t->next;
    }
  }
  if (!ready) return false;
  while (ready) {
    Task* n = ready->next;
    run_task(ready);
    ready = n;
  }
  return true;
}

// How long a blocking turn may sleep: timeout_ms, or less when a timed
// task is due sooner (0: do not sleep).
uint64_t Reactor::sleep_limit_ns(int timeout_ms) const {
  uint64_t limit = uint64_t(timeout_ms) * 1000000ull;
  const uint64_t now = now_ns();
  for (const Task* t = timed_; t; t = t->next) limit = std::min(limit, t->due_ns > now ? t->due_ns - now : 0);
  return limit;
}

void Reactor::append_deferred(Task* t) {
  t->next = nullptr;
  if (deferred_tail_) deferred_tail_->next = t;
  else deferred_head_ = t;
  deferred_tail_ = t;
}

void Reactor::wait_for_buffers(Task* t) {
  assert_owner("wait_for_buffers");
  GPR_ASSERT(mark_queued(t), "reactor %u: task %p (run %p) waits for buffers while already queued", id_,
             (void*)t, (void*)t->run);
  t->next = nullptr;
  if (buffer_waiters_tail_) buffer_waiters_tail_->next = t;
  else buffer_waiters_ = t;
  buffer_waiters_tail_ = t;
}

void Reactor::buffers_freed() {
  // Hand every waiter another try in the next turn (they re-queue if still
  // short). They stay queued: from one list straight into the other.
  while (buffer_waiters_) {
    Task* t = buffer_waiters_;
    buffer_waiters_ = t->next;
    append_deferred(t);
  }
  buffer_waiters_tail_ = nullptr;
}

void Reactor::post(Task* t) {
  GPR_ASSERT(mark_queued(t), "reactor %u: task %p (run %p) posted while already queued", id_, (void*)t,
             (void*)t->run);
  push_inbox(t);
}

bool Reactor::post_once(Task* t) {
  if (!mark_queued(t)) return false;
  push_inbox(t);
  return true;
}

void Reactor::push_inbox(Task* t) {
  Task* head = inbox_.load(std::memory_order_relaxed);
  do {
    t->next = head;
  } while (!inbox_.compare_exchange_weak(head, t, std::memory_order_release, std::memory_order_relaxed));
  if (head == nullptr) {
    // First item since the last drain: wake the owner if it sleeps in the ring.
    signal_eventfd(event_fd_);
  }
}

void Reactor::run_task(Task* t) {
  GPR_ASSERT(t->run, "reactor %u: task %p has no function", id_, (void*)t);
  mark_dequeued(t);
  t->run(t);  // may free t or queue it again: not touched after this
}

bool Reactor::drain_inbox() {
  Task* t = inbox_.exchange(nullptr, std::memory_order_acquire);
  if (!t) return false;
  Task* rev = nullptr;  // the inbox is a stack: reverse to arrival order
  while (t) {
    Task* n = t->next;
    t->next = rev;
    rev = t;
    t = n;
  }
  while (rev) {
    Task* n = rev->next;
    run_task(rev);
    rev = n;
  }
  return true;
}

bool Reactor::run_deferred() {
  if (!deferred_head_) return false;
  Task* t = deferred_head_;
  deferred_head_ = deferred_tail_ = nullptr;  // tasks deferred while running go to the next turn
  while (t) {
    Task* n = t->next;
    run_task(t);
    t = n;
  }
  return true;
}

// The read alone at the head is over (completed, or failed at issue by
// the fault injector): the next one goes.
void Reactor::read_alone_done(MemberIo* io) {
  if (read_alone_.empty() || read_alone_.front() != io) return;
  read_alone_.pop_front();
  if (!read_alone_.empty()) submit(read_alone_.front());
}

bool Reactor::run_delayed() {
  if (!delayed_) return false;
  uint64_t now = now_ns();
  MemberIo* keep = nullptr;
  MemberIo* ready = nullptr;
  for (MemberIo* io = delayed_; io;) {
    MemberIo* n = io->next;
    if (io->due_ns <= now) {
      io->next = ready;
      ready = io;
    } else {
      io->next = keep;
      keep = io;
    }
    io = n;
  }
  delayed_ = keep;
  bool any = ready != nullptr;
  while (ready) {
    MemberIo* n = ready->next;
    ready->due_ns = 0;
    if (ready->read_alone) read_alone_done(ready);
    ready->done(ready);
    ready = n;
  }
  return any;
}

// A backend that completes jobs later (the GPU) says so through its event
// fd: a one-shot poll on it in the ring lets the reactor sleep while jobs
// are in flight and wake when poll() has completions to run. Returns
// whether the poll is armed (false: the backend has no fd, or no SQE now).
bool Reactor::arm_parity_poll() {
  if (parity_armed_) return true;
  const int fd = parity_->event_fd();
  if (fd < 0) return false;
  io_uring_sqe* sqe = io_uring_get_sqe(&ring_);
  if (!sqe) return false;  // retried next turn
  io_uring_prep_poll_add(sqe, fd, POLLIN);
  io_uring_sqe_set_data64(sqe, kParityTag);
  pending_sqes_++;
  parity_armed_ = true;
  return true;
}

void Reactor::arm_eventfd() {
  if (event_armed_) return;
  io_uring_sqe* sqe = io_uring_get_sqe(&ring_);
  if (!sqe) return;  // retried next turn
  io_uring_prep_read(sqe, event_fd_, &event_buf_, sizeof event_buf_, 0);
  io_uring_sqe_set_data64(sqe, kEventTag);
  pending_sqes_++;
  event_armed_ = true;
}

// A sleep of microseconds (until a GPU batch is due) would otherwise end
// up to the thread's timer slack late (50 us by default).
void Reactor::fine_timer_slack() {
  thread_local bool done = false;
  if (done) return;
  done = true;
  prctl(PR_SET_TIMERSLACK, 1000ul, 0, 0, 0);
}

Reactor* Reactor::current() { return t_current_; }

pid_t Reactor::this_tid() {
  thread_local const pid_t tid = gettid();
  return tid;
}

void Reactor::claim() {
  const pid_t p = poller_.load(std::memory_order_acquire);
  GPR_ASSERT(p == 0 || p == this_tid(), "reactor %u claimed by thread %d while thread %d polls it", id_,
             int(this_tid()), int(p));
  t_current_ = this;
}

void Reactor::owner_violated(const char* what) const {
  GPR_ASSERT(t_current_ == this, "reactor %u: %s called from a thread that owns %s", id_, what,
             t_current_ ? ("reactor " + std::to_string(t_current_->id_)).c_str() : "no reactor");
  __builtin_unreachable();
}
void Reactor::set_current(Reactor* r) { t_current_ = r; }

bool Reactor::poll(bool block, int timeout_ms) {
  // One thread at a time polls a reactor; the same thread may nest (a
  // control call that waits by polling from inside a task).
  const pid_t me = this_tid();
  const pid_t was = poller_.exchange(me, std::memory_order_acquire);
  GPR_ASSERT(was == 0 || was == me, "reactor %u polled by thread %d while thread %d polls it", id_, int(me), int(was));
  struct Release {
    std::atomic<pid_t>& p;
    pid_t was;
    ~Release() {
      t_poll_depth_--;
      p.store(was, std::memory_order_release);
    }
  } release{poller_, was};
  t_poll_depth_++;
  t_current_ = this;
  return turn(block, timeout_ms);
}

bool Reactor::turn(bool block, int timeout_ms) {
  turn_ns_ = now_ns();
  reaped_last_turn_ = reaped_this_turn_;
  reaped_this_turn_ = 0;
  bool work = false;
  work |= drain_inbox();
  work |= run_deferred();
  flush_plug();
  while (!unsubmitted_.empty()) {
    MemberIo* io = unsubmitted_.back();
    if (!prep(io)) break;
    unsubmitted_.pop_back();
  }
  if (lockstep_) {
    turn_ns_ = now_ns();
    work |= reap_lockstep();
  } else {
    arm_eventfd();
    // The parity backend says when it wants poll() again: 0 (now: do not
    // sleep), a deadline (a GPU batch predicted to finish), or never. One
    // that signals its event fd wakes the ring earlier.
    const uint64_t parity_ns = parity_->poll_within_ns();
    if (parity_ns != 0 && parity_->in_flight() > 0) arm_parity_poll();
    if (parity_ns < 1000000ull) fine_timer_slack();
    const uint64_t sleep_ns =
        std::min<uint64_t>(timed_ ? sleep_limit_ns(timeout_ms) : uint64_t(timeout_ms) * 1000000ull, parity_ns);
    const bool can_sleep = block && !work && !deferred_head_ && !delayed_ && sleep_ns > 0;
    if (can_sleep) {
      __kernel_timespec ts{(long long)(sleep_ns / 1000000000ull), (long long)(sleep_ns % 1000000000ull)};
      io_uring_cqe* cqe = nullptr;
      io_uring_submit_and_wait_timeout(&ring_, &cqe, 1, &ts, nullptr);
      pending_sqes_ = 0;
    } else if (pending_sqes_) {
      io_uring_submit(&ring_);
      pending_sqes_ = 0;
    }
    turn_ns_ = now_ns();
    if (reap_cq(false)) work = true;
  }
  work |= drain_inbox();
  work |= run_delayed();
  work |= run_timed();
  if (parity_->poll()) work = true;
  return work;
}

bool Reactor::poll_if_idle() {
  pid_t idle = 0;
  if (!poller_.compare_exchange_strong(idle, this_tid(), std::memory_order_acquire)) {
    if (idle != this_tid()) return false;
    poll();  // this thread is inside poll() already (nested)
    return true;
  }
  Reactor* was = t_current_;
  t_current_ = this;
  t_poll_depth_++;
  turn(false, 0);
  t_poll_depth_--;
  t_current_ = was;
  poller_.store(0, std::memory_order_release);
  return true;
}

uint64_t Reactor::now_ns() const { return lockstep_ ? clock_ns_ : mono_ns(); }

// Takes every CQE there is: frontend completions run at once; member I/O
// completes at once, or with `hold` is kept in reaped_ for the caller.
unsigned Reactor::reap_cq(bool hold) {
  io_uring_cqe* cqe;
  unsigned head, seen = 0;
  io_uring_for_each_cqe(&ring_, head, cqe) {
    seen++;
    if (cqe->user_data == kEventTag) {
      event_armed_ = false;
      continue;
    }
    if (cqe->user_data == kParityTag) {
      parity_armed_ = false;
      continue;
    }
    in_flight_--;
    if (cqe->user_data & 1) {
      auto* c = reinterpret_cast<Completion*>(cqe->user_data & ~uint64_t(1));
      c->on_cqe(c, cqe);
      continue;
    }
    auto* io = static_cast<MemberIo*>(io_uring_cqe_get_data(cqe));
    ring_member_ios_--;
    reaped_this_turn_++;
    if (io->merged_next) {
      complete_merged(io, cqe->res);  // never in lockstep (hold)
    } else if (hold) {
      io->res = cqe->res;
      reaped_.push_back(io);
    } else {
      complete(io, cqe->res);
    }
  }
  if (seen) io_uring_cq_advance(&ring_, seen);
  return seen;
}

// A lockstep turn's ring stage: advances the logical clock, waits until
// every member I/O in the ring has completed, then completes them in issue
// order, so that neither the kernel's completion order nor how many
// completions one turn happens to see can change what runs next.
bool Reactor::reap_lockstep() {
  clock_ns_ += kLockstepTurnNs;
  reaped_.clear();
  bool work = false;
  while (ring_member_ios_ > 0 || pending_sqes_) {
    // Frontend completions may prepare more member I/O: submitted here and
    // awaited like the rest.
    int r = io_uring_submit_and_wait(&ring_, ring_member_ios_ > 0 ? 1 : 0);
    pending_sqes_ = 0;
    if (r < 0 && r != -EINTR && r != -EAGAIN && r != -EBUSY)
      throw std::runtime_error(std::string("io_uring_submit_and_wait: ") + strerror(-r));
    if (reap_cq(true)) work = true;
  }
  std::sort(reaped_.begin(), reaped_.end(), [](const MemberIo* a, const MemberIo* b) { return a->seq < b->seq; });
  for (MemberIo* io : reaped_) complete(io, io->res);
  return work;
}

}  // namespace gpuraid
