#include "kernels/batching_backend.h"

#include <poll.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <utility>

#include "engine/clock.h"
#include "engine/eventfd_signal.h"
#include "engine/invariant.h"
#include "engine/parity/job_check.h"
#include "engine/single_writer.h"

namespace gpuraid::kern {

namespace {

constexpr uint64_t kUs = 1000, kMs = 1000000;
constexpr uint64_t kMaxRetryNs = 60000 * kMs;
constexpr uint64_t kSmallBatch = 256u << 10;  // below: a batch's time is its fixed cost
constexpr uint64_t kSlowPollNs = 20 * kUs;    // Poll: a batch well past its predicted end
constexpr uint32_t kJobBlobBound = 2048;      // descriptor bytes one job can add, at most

void drain_fd(int fd) {
  uint64_t v;
  while (read(fd, &v, sizeof v) == sizeof v) {
  }
}

void noop_done(ParityJob*) {}

void ewma(double* v, double x) { *v += (x - *v) / 8; }

std::string seconds(uint64_t ns) {
  char b[32];
  if (ns < 1000 * kMs)
    snprintf(b, sizeof b, "%llu ms", (unsigned long long)(ns / kMs));
  else
    snprintf(b, sizeof b, "%.1f s", double(ns) / 1e9);
  return b;
}

}  // namespace

void apply_accelerator_settings(const AcceleratorSettings& s, BatchOptions* o) {
  o->completion = s.event_completion ? Completion::Event : Completion::Poll;
  if (s.route_below < 0) {
    o->routing = Routing::Measured;
  } else if (s.route_below == 0) {
    o->routing = Routing::Off;
  } else {
    o->routing = Routing::Below;
    o->route_below_bytes = uint32_t(std::min<int64_t>(s.route_below, UINT32_MAX));
  }
  o->max_gbps = s.max_gbps;
  o->timeout_ms = s.timeout_ms;
}

void Executor::wake() const {
  if (wake_fd_ < 0) return;
  signal_eventfd(wake_fd_);
}

BatchingBackend::BatchingBackend(std::string name, std::unique_ptr<Executor> exec, const BatchOptions& opts)
    : name_(std::move(name)), exec_(std::move(exec)), cpu_(make_cpu_backend()), opts_(opts) {
  opts_.max_batch_jobs = std::clamp<uint32_t>(opts_.max_batch_jobs, 1, 8192);
  opts_.max_blob_bytes = std::max<uint32_t>(opts_.max_blob_bytes, 4 * kJobBlobBound);
  opts_.watchdog_us = std::max(opts_.watchdog_us, 100u);  // 0 would spin
  opts_.timeout_ms = std::max(opts_.timeout_ms, 1u);
  opts_.retry_ms = std::max(opts_.retry_ms, 1u);
  est_ = Estimates{double(opts_.launch_ns_guess), 0.2, 20000, 0.025};  // 5 GB/s CPU, 40 GB/s device
  tokens_ = double(opts_.max_batch_bytes);
  if (opts_.completion == Completion::Event) {
    wake_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    timer_fd_ = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    epoll_fd_ = epoll_create1(EPOLL_CLOEXEC);
    GPR_ASSERT(wake_fd_ >= 0 && timer_fd_ >= 0 && epoll_fd_ >= 0, "parity backend: cannot make its fds");
    for (int fd : {wake_fd_, timer_fd_}) {
      epoll_event ev{};
      ev.events = EPOLLIN;
      ev.data.fd = fd;
      GPR_ASSERT(epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev) == 0, "parity backend: epoll_ctl failed");
    }
    exec_->set_wake_fd(wake_fd_);
  }
  for (uint32_t s = exec_->slots(); s-- > 0;) free_slots_.push_back(s);
}

BatchingBackend::~BatchingBackend() {
  drain();
  // Batches given up on may still be running on the device: wait a while
  // for them, and if the device never lets go of them, leave its memory
  // where it is rather than free what it may still write.
  const uint64_t deadline = mono_ns() + std::max<uint64_t>(2 * uint64_t(opts_.timeout_ms) * kMs, 2000 * kMs);
  while (!flights_.empty() && mono_ns() < deadline) {
    next_deep_ns_ = 0;
    harvest(mono_ns());
    if (!flights_.empty()) usleep(1000);
  }
  if (!flights_.empty() || !exec_->quiesce(2000 * kMs)) {
    fprintf(stderr, "gpuraid: parity backend %s: the device still holds %zu batch(es); its memory is left allocated\n",
            name_.c_str(), flights_.size());
    (void)exec_.release();
  }
  exec_.reset();
  for (int fd : {epoll_fd_, timer_fd_, wake_fd_})
    if (fd >= 0) close(fd);
}

std::unique_ptr<HostBatch> BatchingBackend::take_batch() {
  if (pool_.empty()) return std::make_unique<HostBatch>();
  auto b = std::move(pool_.back());
  pool_.pop_back();
  return b;
}

void BatchingBackend::recycle(std::unique_ptr<HostBatch> b) {
  b->clear();
  pool_.push_back(std::move(b));
}

void BatchingBackend::run_cpu(ParityJob* j) {
  // The CPU backend completes inside submit(); hold the completion for poll().
  auto done = j->done;
  j->done = noop_done;
  cpu_->submit(&j, 1);
  j->done = done;
  ready_.push_back(j);
}

void BatchingBackend::run_cpu_batch(std::unique_ptr<HostBatch> b, std::atomic<uint64_t>& counter) {
  const uint64_t t0 = mono_ns();
  uint64_t jobs = 0;
  for (ParityJob* j : b->owners)
    if (j) {
      run_cpu(j);
      jobs++;
    }
  if (b->bytes > 0) ewma(&est_.cpu_ns_per_byte, double(mono_ns() - t0) / double(b->bytes));
  bump(counter, jobs);
  bump(n_.cpu_batches);
  recycle(std::move(b));
}

bool BatchingBackend::batch_full(const HostBatch& b) const {
  return b.jobs.size() >= opts_.max_batch_jobs || b.bytes >= opts_.max_batch_bytes ||
         slot_blob_bytes(b) + kJobBlobBound > opts_.max_blob_bytes;
}

void BatchingBackend::submit(ParityJob* const* jobs, size_t n) {
  for (size_t i = 0; i < n; i++) {
    ParityJob* j = jobs[i];
    in_flight_++;
    if (BatchBuilder::unsupported(*j)) {
      run_cpu(j);
      bump(n_.unsupported_jobs);
      continue;
    }
    if (on_cpu()) {
      run_cpu(j);
      bump(n_.fallback_jobs);
      continue;
    }
    if (!open_) {
      open_ = take_batch();
      open_since_ns_ = opts_.window_us ? mono_ns() : 0;
    }
    if (!builder_.add(j, open_.get())) {
      fail_parity_job(j, -EINVAL);  // as the CPU backend: survivors cannot rebuild the erasures
      ready_.push_back(j);
      continue;
    }
    if (batch_full(*open_)) close_open();
  }
  if (!closed_.empty()) launch_closed(mono_ns());
  if (!ready_.empty()) wake_waiters();
}

void BatchingBackend::flush() {
  close_open();
  const uint64_t now = mono_ns();
  launch_closed(now);
  arm_timer(now);
}

void BatchingBackend::close_open() {
  if (!open_) return;
  if (open_->empty()) {
    recycle(std::move(open_));
    return;
  }
  closed_.push_back(std::move(open_));
}

BatchingBackend::Route BatchingBackend::route(const HostBatch& b, bool slot_free, uint64_t now) {
  if (opts_.max_gbps > 0) {
    const double burst = double(opts_.max_batch_bytes);
    tokens_ = std::min(burst, tokens_ + double(now - tokens_ns_) * opts_.max_gbps);  // GB/s = bytes/ns
    tokens_ns_ = now;
    if (tokens_ < double(b.bytes)) return Route::Capped;
  }
  switch (opts_.routing) {
    case Routing::Off: return Route::Device;
    case Routing::Below: return b.bytes < opts_.route_below_bytes ? Route::Routed : Route::Device;
    case Routing::Measured: break;
  }
  const double cpu_ns = double(b.bytes) * est_.cpu_ns_per_byte;
  if (cpu_ns <= est_.launch_ns) return Route::Routed;
  if (!slot_free && live_flights_ > 0) {
    // Every slot busy: the batch would wait for the first to finish.
    uint64_t wait = UINT64_MAX;
    for (const Flight& f : flights_)
      if (!f.zombie) wait = std::min(wait, f.launch_ns + f.est_ns > now ? f.launch_ns + f.est_ns - now : 0);
    if (cpu_ns < double(wait)) return Route::Routed;
  }
  return Route::Device;
}

void BatchingBackend::launch_closed(uint64_t now) {
  while (!closed_.empty()) {
    if (on_cpu()) {
      run_cpu_batch(std::move(closed_.front()), n_.fallback_jobs);
      closed_.pop_front();
      continue;
    }
    HostBatch& b = *closed_.front();
    const bool slot_free = !free_slots_.empty();
    const Route r = route(b, slot_free, now);
    if (r != Route::Device) {
      run_cpu_batch(std::move(closed_.front()), r == Route::Routed ? n_.routed_jobs : n_.capped_jobs);
      closed_.pop_front();
      continue;
    }
    if (!slot_free) {
      if (live_flights_ > 0) return;  // a slot frees when one finishes
      // Only given-up batches hold the slots: they may never let go.
      run_cpu_batch(std::move(closed_.front()), n_.fallback_jobs);
      closed_.pop_front();
      continue;
    }
    const uint32_t slot = free_slots_.back();
    std::string err;
    bool staged = false;
    const uint64_t t0 = mono_ns();
    const LaunchResult lr = exec_->launch(slot, b, &staged, &err);
    const uint64_t t1 = mono_ns();
    std::unique_ptr<HostBatch> owned = std::move(closed_.front());
    closed_.pop_front();
    switch (lr) {
      case LaunchResult::Launched: {
        ewma(&est_.launch_ns, double(t1 - t0));
        free_slots_.pop_back();
        const uint64_t bytes = owned->bytes;
        flights_.push_back(Flight{slot, std::move(owned), t0, device_estimate(bytes)});
        live_flights_++;
        bump(staged ? n_.staged_batches : n_.zero_copy_batches);
        tokens_ -= double(bytes);
        if (flights_.size() == 1) next_deep_ns_ = t1 + uint64_t(opts_.watchdog_us) * kUs;
        break;
      }
      case LaunchResult::Refused: run_cpu_batch(std::move(owned), n_.unsupported_jobs); break;
      case LaunchResult::Failed:
        bump(n_.device_errors);
        run_cpu_batch(std::move(owned), n_.fallback_jobs);
        pause("kernel launch failed: " + err, t1);
        break;
    }
  }
}

uint64_t BatchingBackend::device_estimate(uint64_t bytes) const {
  return uint64_t(est_.device_fixed_ns + double(bytes) * est_.device_ns_per_byte);
}

void BatchingBackend::learn_device(uint64_t bytes, uint64_t ns) {
  if (bytes < kSmallBatch)
    ewma(&est_.device_fixed_ns, double(ns));
  else
    ewma(&est_.device_ns_per_byte, std::max(0.0, double(ns) - est_.device_fixed_ns) / double(bytes));
}

void BatchingBackend::complete(HostBatch& b) {
  uint64_t jobs = 0;
  for (size_t i = 0; i < b.jobs.size(); i++) {
    ParityJob* j = b.owners[i];
    if (!j) continue;
    j->status = 0;
    if (b.jobs[i].mode == kModeVerify) j->mismatch_rows = b.mismatch[b.jobs[i].result];
    ready_.push_back(j);
    jobs++;
  }
  bump(n_.device_jobs, jobs);
}

// A batch past its limit. Given up through the gate, its jobs run on the
// CPU now and the slot stays with the device until it lets go; with its
// commit under way it is waited for (its outputs will be right).
void BatchingBackend::give_up(Flight& f, uint64_t now) {
  bump(n_.device_timeouts);
  const std::string why = "a batch did not finish within " + std::to_string(opts_.timeout_ms) + " ms";
  if (exec_->abort(f.slot)) {
    f.zombie = true;
    live_flights_--;
    uint64_t jobs = 0;
    for (ParityJob* j : f.batch->owners)
      if (j) {
        run_cpu(j);
        jobs++;
      }
    bump(n_.fallback_jobs, jobs);
    bump(n_.cpu_batches);
  } else {
    f.commit_begun = true;
  }
  pause(why, now);
}

void BatchingBackend::harvest(uint64_t now) {
  const bool deep = now >= next_deep_ns_;
  if (deep) next_deep_ns_ = now + uint64_t(opts_.watchdog_us) * kUs;
  const uint64_t limit = uint64_t(opts_.timeout_ms) * kMs;
  for (size_t i = 0; i < flights_.size();) {
    Flight& f = flights_[i];
    std::string err;
    const int r = exec_->query(f.slot, *f.batch, deep, &err);
    if (r == 0) {
      if (!f.zombie && !f.commit_begun && now - f.launch_ns > limit) give_up(f, now);
      i++;
      continue;
    }
    Flight done = std::move(f);
    flights_.erase(flights_.begin() + long(i));
    free_slots_.push_back(done.slot);
    if (done.zombie) {  // its jobs ran on the CPU already
      recycle(std::move(done.batch));
      continue;
    }
    live_flights_--;
    if (r < 0) {
      bump(n_.device_errors);
      run_cpu_batch(std::move(done.batch), n_.fallback_jobs);
      pause("kernel failed: " + err, now);
      continue;
    }
    learn_device(done.batch->bytes, now - done.launch_ns);
    failures_ = 0;
    complete(*done.batch);
    recycle(std::move(done.batch));
  }
}

void BatchingBackend::pause(const std::string& why, uint64_t now) {
  failures_++;
  const uint64_t backoff = std::min(uint64_t(opts_.retry_ms) * kMs << std::min(failures_ - 1, 16u), kMaxRetryNs);
  retry_at_ns_ = now + backoff;
  {
    std::lock_guard<std::mutex> g(reason_mu_);
    reason_ = why + "; the device is tried again in " + seconds(backoff);
  }
  if (!on_cpu()) {
    on_cpu_.store(true, std::memory_order_release);
    fprintf(stderr, "gpuraid: parity backend %s: %s; its jobs run on the CPU (ISA-L) until the device is tried again in %s\n",
            name_.c_str(), why.c_str(), seconds(backoff).c_str());
  }
}

void BatchingBackend::maybe_resume(uint64_t now) {
  if (!on_cpu() || now < retry_at_ns_ || free_slots_.empty()) return;
  on_cpu_.store(false, std::memory_order_release);
  bump(n_.device_resumes);
  fprintf(stderr, "gpuraid: parity backend %s: trying the device again\n", name_.c_str());
}

size_t BatchingBackend::poll() {
  if (wake_fd_ >= 0) {
    drain_fd(wake_fd_);
    drain_fd(timer_fd_);
  }
  const uint64_t now = mono_ns();
  if (!flights_.empty()) harvest(now);
  if (open_ && !open_->empty() && (opts_.window_us == 0 || now >= open_since_ns_ + uint64_t(opts_.window_us) * kUs))
    close_open();
  maybe_resume(now);
  if (!closed_.empty()) launch_closed(now);
  // done() may submit more work (adding to ready_): run from the other
  // list. The two swap back and forth and keep their capacity, so a poll
  // allocates nothing once they have grown to the peak.
  GPR_ASSERT(running_.empty(), "parity backend polled from inside a completion");
  running_.swap(ready_);
  const size_t n = running_.size();
  for (ParityJob* j : running_) {
    in_flight_--;
    j->done(j);
  }
  running_.clear();
  arm_timer(mono_ns());
  return n;
}

uint64_t BatchingBackend::poll_within_ns() {
  if (!ready_.empty()) return 0;
  const uint64_t now = mono_ns();
  uint64_t best = UINT64_MAX;
  if (open_ && !open_->empty()) {
    if (opts_.window_us == 0) return 0;
    const uint64_t due = open_since_ns_ + uint64_t(opts_.window_us) * kUs;
    best = due > now ? due - now : 0;
  }
  if (!closed_.empty() && (on_cpu() || !free_slots_.empty() || live_flights_ == 0)) return 0;
  if (flights_.empty()) return best;
  best = std::min(best, next_deep_ns_ > now ? next_deep_ns_ - now : 0);
  const uint64_t limit = uint64_t(opts_.timeout_ms) * kMs, spin = uint64_t(opts_.spin_us) * kUs;
  for (const Flight& f : flights_) {
    if (f.zombie) continue;
    const uint64_t el = now - f.launch_ns;
    if (!f.commit_begun) best = std::min(best, limit > el ? limit - el : 0);
    if (opts_.completion == Completion::Event) continue;  // the executor signals
    uint64_t when;
    if (el + spin < f.est_ns)
      when = f.est_ns - el - spin;
    else if (el < f.est_ns + std::max<uint64_t>(f.est_ns, 5 * spin))
      when = 0;  // due: spin
    else
      when = kSlowPollNs;  // late (a busy or shared device): look now and then
    best = std::min(best, when);
  }
  return best;
}

void BatchingBackend::drain() {
  while (in_flight_ > 0) {
    flush();
    if (poll() > 0) continue;
    const uint64_t ns = std::min<uint64_t>(poll_within_ns(), 100 * kMs);
    if (ns == 0) continue;
    if (epoll_fd_ >= 0) {
      pollfd p{epoll_fd_, POLLIN, 0};
      timespec ts{time_t(ns / 1000000000), long(ns % 1000000000)};
      ppoll(&p, 1, &ts, nullptr);
    } else {
      timespec ts{time_t(ns / 1000000000), long(ns % 1000000000)};
      nanosleep(&ts, nullptr);
    }
  }
}

// Event: the timer stands for every deadline the executor does not signal
// (the window, error checks, time limits).
void BatchingBackend::arm_timer(uint64_t now) {
  if (timer_fd_ < 0) return;
  const uint64_t within = poll_within_ns();
  if (within == 0) {
    wake_waiters();
    return;
  }
  const uint64_t want = within == UINT64_MAX ? 0 : now + within;
  if (want == armed_ns_) return;
  itimerspec ts{};
  if (want) {
    ts.it_value.tv_sec = time_t(want / 1000000000ull);
    ts.it_value.tv_nsec = long(want % 1000000000ull);
  }
  timerfd_settime(timer_fd_, want ? TFD_TIMER_ABSTIME : 0, &ts, nullptr);
  armed_ns_ = want;
}

void BatchingBackend::wake_waiters() {
  if (wake_fd_ >= 0) signal_eventfd(wake_fd_);
}

ParityCounters BatchingBackend::counters() const {
  auto ld = [](const std::atomic<uint64_t>& a) { return a.load(std::memory_order_relaxed); };
  ParityCounters c;
  c.zero_copy_batches = ld(n_.zero_copy_batches);
  c.staged_batches = ld(n_.staged_batches);
  c.cpu_batches = ld(n_.cpu_batches);
  c.device_jobs = ld(n_.device_jobs);
  c.routed_jobs = ld(n_.routed_jobs);
  c.capped_jobs = ld(n_.capped_jobs);
  c.unsupported_jobs = ld(n_.unsupported_jobs);
  c.fallback_jobs = ld(n_.fallback_jobs);
  c.device_errors = ld(n_.device_errors);
  c.device_timeouts = ld(n_.device_timeouts);
  c.device_resumes = ld(n_.device_resumes);
  c.on_cpu = on_cpu();
  return c;
}

bool BatchingBackend::fell_back(std::string* reason) const {
  if (!on_cpu()) return false;
  std::lock_guard<std::mutex> g(reason_mu_);
  *reason = reason_;
  return true;
}

}  // namespace gpuraid::kern
