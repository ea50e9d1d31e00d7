#include "engine/io/meta_lane.h"

#include <sys/types.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <algorithm>

#include "engine/clock.h"
#include "engine/io/drive.h"
#include "engine/io/fault_injector.h"
#include "engine/io/nvme_char.h"
#include "engine/thread_name.h"

namespace gpuraid {

// The drive's injected fault for this kind of request, if one is armed: a
// hang holds the request until the fault is disarmed (or the lane stops),
// as a device that stopped answering; then an injected error, or 0.
static int injected(const MetaTarget& t, FaultInjector::SyncKind k, uint64_t off = 0, uint64_t len = 0) {
  if (!t.faults->active()) return 0;
  if (t.faults->hangs(k)) {
    t.faults->hang_begins();
    while (t.faults->hangs(k) && !(t.stopping && t.stopping->load(std::memory_order_acquire)))
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    t.faults->hang_ends();
  }
  return t.faults->on_sync(k, off, len);
}

int MetaTarget::read(void* buf, size_t len, uint64_t off) const {
  if (fd < 0) return -EBADF;
  if (int e = injected(*this, FaultInjector::SyncKind::Read, off, len)) return e;
  if (type == DriveType::NvmeChar) return nvme_sync_cmd(fd, NvmeIo::Read, nsid, lba_shift, max_io, buf, len, off);
  const ssize_t n = pread(fd, buf, len, off_t(off));
  return n == ssize_t(len) ? 0 : n < 0 ? -errno : -EIO;
}

int MetaTarget::write(const void* buf, size_t len, uint64_t off) const {
  if (fd < 0) return -EBADF;
  if (int e = injected(*this, FaultInjector::SyncKind::Write, off, len)) return e;
  if (type == DriveType::NvmeChar)
    return nvme_sync_cmd(fd, NvmeIo::Write, nsid, lba_shift, max_io, const_cast<void*>(buf), len, off);
  const ssize_t n = pwrite(fd, buf, len, off_t(off));
  return n == ssize_t(len) ? 0 : n < 0 ? -errno : -EIO;
}

int MetaTarget::flush() const {
  if (fd < 0) return -EBADF;
  if (int e = injected(*this, FaultInjector::SyncKind::Flush)) return e;
  if (type == DriveType::NvmeChar) return nvme_sync_cmd(fd, NvmeIo::Flush, nsid, lba_shift, max_io, nullptr, 0, 0);
  return fdatasync(fd) == 0 ? 0 : -errno;
}

struct MetaLane::Job {
  Fn fn;
  uint8_t* buf = nullptr;
  size_t len = 0;
  int res = 0;
  bool done = false;
  ~Job() { free(buf); }
};

struct MetaLane::State {
  MetaTarget target;
  std::atomic<bool> stopping{false};
  std::mutex mu;
  std::condition_variable cv;  // jobs queued, a job done, the thread ended
  std::deque<Ticket> queue;
  Ticket running;
  bool stuck = false;  // a caller gave up on `running`
  bool started = false, ended = false;
  // The thread's id, and whether it is inside a request's I/O: what a
  // caller whose time ran out looks at before it calls the lane stuck.
  std::atomic<pid_t> tid{0};
  std::atomic<bool> in_io{false};
  std::thread thread;
  ~State() {
    if (target.fd >= 0) close(target.fd);
  }
};

MetaLane::MetaLane(MetaTarget t) : s_(std::make_shared<State>()) {
  s_->target = std::move(t);
  s_->target.stopping = &s_->stopping;
}

MetaLane::~MetaLane() {
  std::unique_lock<std::mutex> l(s_->mu);
  s_->stopping = true;
  s_->cv.notify_all();
  if (!s_->started) return;
  // A thread stuck in the kernel keeps the state (and its descriptor) alive
  // through its own reference, and ends when the I/O returns.
  const bool ended = s_->cv.wait_for(l, std::chrono::seconds(2), [&] { return s_->ended; });
  l.unlock();
  if (ended) s_->thread.join();
  else s_->thread.detach();
}

uint64_t MetaLane::deadline_after(uint64_t timeout_ns) {
  const uint64_t now = mono_ns();
  return timeout_ns > UINT64_MAX - now ? UINT64_MAX : now + timeout_ns;
}

void MetaLane::loop(std::shared_ptr<State> s) {
  set_thread_name("gpuraid-meta");
  s->tid.store(gettid(), std::memory_order_release);
  std::unique_lock<std::mutex> l(s->mu);
  for (;;) {
    s->cv.wait(l, [&] { return s->stopping || !s->queue.empty(); });
    if (s->queue.empty()) break;  // stopping, nothing left
    s->running = std::move(s->queue.front());
    s->queue.pop_front();
    Job& j = *s->running;
    l.unlock();
    s->in_io.store(true, std::memory_order_release);
    const int res = s->stopping ? -ECANCELED : j.fn(s->target, j.buf);
    s->in_io.store(false, std::memory_order_release);
    l.lock();
    j.res = res;
    j.done = true;
    s->running.reset();
    s->stuck = false;
    s->cv.notify_all();
  }
  s->ended = true;
  s->cv.notify_all();
}

MetaLane::Ticket MetaLane::submit(Fn fn, size_t len, const void* in) {
  auto j = std::make_shared<Job>();
  j->fn = std::move(fn);
  j->len = len;
  if (len) {
    const size_t cap = (len + 4095) & ~size_t(4095);
    j->buf = static_cast<uint8_t*>(aligned_alloc(4096, cap));
    if (!j->buf) {
      j->res = -ENOMEM;
      j->done = true;
      return j;
    }
    if (in) memcpy(j->buf, in, len);
    memset(j->buf + (in ? len : 0), 0, cap - (in ? len : 0));
  }
  std::lock_guard<std::mutex> l(s_->mu);
  if (s_->stuck || s_->stopping) {
    j->res = s_->stuck ? -ETIMEDOUT : -ECANCELED;
    j->done = true;
    return j;
  }
  if (!s_->started) {
    s_->started = true;
    s_->thread = std::thread(loop, s_);
  }
  s_->queue.push_back(j);
  s_->cv.notify_all();
  return j;
}

// Whether thread tid of this process is runnable (state R in
// /proc/self/task/TID/stat): waiting for a CPU, not for a device.
static bool runnable(pid_t tid) {
  if (tid <= 0) return false;
  char path[64], line[512];
  snprintf(path, sizeof path, "/proc/self/task/%d/stat", int(tid));
  FILE* f = fopen(path, "re");
  if (!f) return false;
  const size_t n = fread(line, 1, sizeof line - 1, f);
  fclose(f);
  line[n] = 0;
  const char* p = strrchr(line, ')');  // the name may hold spaces and parentheses
  return p && p[1] == ' ' && p[2] == 'R';
}

bool MetaLane::waiting_for_device() const {
  return s_->in_io.load(std::memory_order_acquire) && !runnable(s_->tid.load(std::memory_order_acquire));
}

int MetaLane::wait(const Ticket& t, uint64_t deadline_ns, void* out, size_t out_len) {
  // Past the limit the lane is looked at every kStep: time counts only in
  // steps the caller saw (each at most kStepCap, so a stopped or starved
  // process's pause counts for one step), and it gives up once the lane was
  // seen in the device at every step for kInDevice, or after one limit more
  // of steps in all. A lane seen outside state R now and then (a page fault
  // on a loaded host) is no hung member; one in a hung device stays there.
  constexpr uint64_t kStep = 5'000'000, kStepCap = 2 * kStep, kInDevice = 10 * kStep;
  std::unique_lock<std::mutex> l(s_->mu);
  const uint64_t entered = mono_ns();
  const uint64_t grace = std::max(deadline_ns > entered ? deadline_ns - entered : 0, kStep);
  uint64_t seen = 0, seen_in_device = 0, last = 0;
  while (!t->done) {
    const uint64_t now = mono_ns();
    if (now >= deadline_ns) {
      const uint64_t step = last ? std::min(now - last, kStepCap) : 0;
      last = now;
      seen += step;
      seen_in_device = waiting_for_device() ? seen_in_device + step : 0;
      if (seen_in_device < kInDevice && seen < grace) {
        deadline_ns = now + kStep;
        continue;
      }
      // Given up: the lane is stuck while this request (or the one before
      // it) is in the kernel; a queued one is dropped.
      for (auto it = s_->queue.begin(); it != s_->queue.end(); ++it)
        if (*it == t) {
          s_->queue.erase(it);
          break;
        }
      if (s_->running) s_->stuck = true;
      return -ETIMEDOUT;
    }
    s_->cv.wait_for(l, std::chrono::nanoseconds(std::min<uint64_t>(deadline_ns - now, 3'600'000'000'000ull)));
  }
  if (t->res == 0 && out) memcpy(out, t->buf, std::min(out_len, t->len));
  return t->res;
}

bool MetaLane::stuck() const {
  std::lock_guard<std::mutex> l(s_->mu);
  return s_->stuck;
}

}  // namespace gpuraid
