#include "kernels/batching_backend.h"

#include "engine/eventfd_signal.h"
#include "engine/invariant.h"

#include <poll.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <ctime>
#include <utility>

#include "engine/parity/job_check.h"

namespace gpuraid::kern {

namespace {

uint64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
}

void drain_fd(int fd) {
  uint64_t v;
  while (read(fd, &v, sizeof v) == sizeof v) {
  }
}

void noop_done(ParityJob*) {}

}  // namespace

void Executor::wake() const {
  if (wake_fd_ < 0) return;
  signal_eventfd(wake_fd_);
}

BatchingBackend::BatchingBackend(std::string name, std::unique_ptr<Executor> exec,
                                 const BatchOptions& opts)
    : name_(std::move(name)), exec_(std::move(exec)), cpu_(make_cpu_backend()), opts_(opts) {
  wake_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  timer_fd_ = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
  epoll_fd_ = epoll_create1(EPOLL_CLOEXEC);
  for (int fd : {wake_fd_, timer_fd_}) {
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.fd = fd;
    epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev);
  }
  exec_->set_wake_fd(wake_fd_);
  for (uint32_t s = exec_->slots(); s-- > 0;) free_slots_.push_back(s);
  if (opts_.max_batch_jobs == 0) opts_.max_batch_jobs = 1;
  opts_.watchdog_us = std::max(opts_.watchdog_us, 100u);  // 0 would spin
}

BatchingBackend::~BatchingBackend() {
  drain();
  exec_->quiesce();  // no completion signal may arrive after the fds close
  exec_->set_wake_fd(-1);
  for (int fd : {epoll_fd_, timer_fd_, wake_fd_})
    if (fd >= 0) close(fd);
}

void BatchingBackend::wake() { exec_->wake(); }

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
  stats_.cpu_jobs++;
}

void BatchingBackend::rerun_cpu(HostBatch& b) {
  for (ParityJob* j : b.owners)
    if (j) run_cpu(j);
}

void BatchingBackend::submit(ParityJob* const* jobs, size_t n) {
  for (size_t i = 0; i < n; i++) {
    ParityJob* j = jobs[i];
    in_flight_++;
    if (switched_ || BatchBuilder::unsupported(*j)) {
      run_cpu(j);
      continue;
    }
    if (!open_) {
      open_ = take_batch();
      open_since_ns_ = now_ns();
    }
    if (!builder_.add(j, open_.get())) {
      fail_parity_job(j, -EINVAL);  // as the CPU backend: survivors cannot rebuild the erasures
      ready_.push_back(j);
      continue;
    }
    if (open_->jobs.size() >= opts_.max_batch_jobs || open_->bytes >= opts_.max_batch_bytes)
      close_open();
  }
  if (opts_.window_us == 0) close_open();
  launch_closed();
  if (!ready_.empty()) wake();
  arm_timer();
}

void BatchingBackend::flush() {
  close_open();
  launch_closed();
  arm_timer();
}

void BatchingBackend::close_open() {
  if (!open_) return;
  if (open_->empty()) {
    recycle(std::move(open_));
    return;
  }
  closed_.push_back(std::move(open_));
}

void BatchingBackend::launch_closed() {
  while (!switched_ && !closed_.empty() && !free_slots_.empty()) {
    std::unique_ptr<HostBatch> b = std::move(closed_.front());
    closed_.pop_front();
    const uint32_t slot = free_slots_.back();
    std::string err;
    if (!exec_->launch(slot, *b, &err)) {
      switch_to_cpu("kernel launch failed: " + err, std::move(b));
      return;
    }
    free_slots_.pop_back();
    flying_.push_back(Flight{slot, std::move(b)});
    stats_.batches++;
  }
}

void BatchingBackend::complete(HostBatch& b) {
  for (size_t i = 0; i < b.jobs.size(); i++) {
    ParityJob* j = b.owners[i];
    if (!j) continue;
    j->status = 0;
    if (b.jobs[i].mode == kModeVerify) j->mismatch_rows = b.mismatch[b.jobs[i].result];
    ready_.push_back(j);
    stats_.kernel_jobs++;
  }
}

// Completes every finished batch (slots have their own streams, so a later
// batch may finish first).
void BatchingBackend::harvest() {
  for (size_t i = 0; i < flying_.size();) {
    std::string err;
    const int r = exec_->query(flying_[i].slot, *flying_[i].batch, &err);
    if (r == 0) {
      i++;
      continue;
    }
    Flight done = std::move(flying_[i]);
    flying_.erase(flying_.begin() + long(i));
    free_slots_.push_back(done.slot);
    if (r < 0) {
      switch_to_cpu("kernel failed: " + err, std::move(done.batch));
      return;
    }
    complete(*done.batch);
    recycle(std::move(done.batch));
  }
}

void BatchingBackend::switch_to_cpu(const std::string& why, std::unique_ptr<HostBatch> failed) {
  if (!switched_to_cpu()) {
    switch_reason_ = why;
    switched_.store(true, std::memory_order_release);
    fprintf(stderr, "gpuraid: parity backend %s: %s; switching to the CPU backend (ISA-L)\n",
            name_.c_str(), why.c_str());
  }
  exec_->quiesce();
  if (failed) {
    rerun_cpu(*failed);
    recycle(std::move(failed));
  }
  // Batches that did finish complete as usual; the rest run again on the CPU.
  while (!flying_.empty()) {
    Flight f = std::move(flying_.front());
    flying_.pop_front();
    free_slots_.push_back(f.slot);
    std::string err;
    if (exec_->query(f.slot, *f.batch, &err) == 1)
      complete(*f.batch);
    else
      rerun_cpu(*f.batch);
    recycle(std::move(f.batch));
  }
  close_open();
  while (!closed_.empty()) {
    rerun_cpu(*closed_.front());
    recycle(std::move(closed_.front()));
    closed_.pop_front();
  }
  wake();
}

size_t BatchingBackend::poll() {
  drain_fd(wake_fd_);
  drain_fd(timer_fd_);
  harvest();
  if (open_ && !open_->empty() && now_ns() >= open_since_ns_ + uint64_t(opts_.window_us) * 1000)
    close_open();
  launch_closed();
  arm_timer();
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
  return n;
}

void BatchingBackend::drain() {
  while (in_flight_ > 0) {
    flush();
    if (poll() > 0) continue;
    pollfd p{epoll_fd_, POLLIN, 0};
    ::poll(&p, 1, 100);
  }
}

void BatchingBackend::arm_timer() {
  const uint64_t now = now_ns();
  uint64_t want = 0;
  if (open_ && !open_->empty() && opts_.window_us > 0)
    want = open_since_ns_ + uint64_t(opts_.window_us) * 1000;
  if (!flying_.empty()) {
    const uint64_t wd = now + uint64_t(opts_.watchdog_us) * 1000;
    want = want ? std::min(want, wd) : wd;
    // An earlier pending expiry serves the watchdog as well.
    if (armed_ns_ > now && armed_ns_ <= want) return;
  }
  if (want == armed_ns_ && (want == 0 || want > now)) return;
  itimerspec ts{};
  if (want) {
    if (want <= now) want = now + 1;
    ts.it_value.tv_sec = time_t(want / 1000000000ull);
    ts.it_value.tv_nsec = long(want % 1000000000ull);
  }
  timerfd_settime(timer_fd_, want ? TFD_TIMER_ABSTIME : 0, &ts, nullptr);
  armed_ns_ = want;
}

}  // namespace gpuraid::kern
