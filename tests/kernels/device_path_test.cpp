// The GPU's data path with the host shim standing in for the device on
// threads (KernelCpuOptions::async): batches finish after their launch
// returns, completions are read off a polled marker (or an event fd), a
// batch that hangs past its time limit is given up through the commit gate
// and its jobs run on the CPU, and a failed batch pauses the device, which
// is taken back after retry_ms. Buffers are registered, as the engine's are.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "engine/clock.h"
#include "engine/reactor.h"
#include "kernels/kernel_cpu_backend.h"
#include "parity_harness.h"
#include "tests/support/parity_wait.h"

namespace gpuraid {
namespace {

using test::codec;

// One RAID 6 encode on registered memory whose result the test can check
// and overwrite.
struct Stripe {
  static constexpr uint32_t k = 4, len = 8192;
  alignas(4096) uint8_t data[k][len];
  alignas(4096) uint8_t parity[2][len];
  ParityJob job;
  int done = 0;
  ParityBackend& be;

  explicit Stripe(ParityBackend& b, uint8_t seed) : be(b) {
    std::string err;
    EXPECT_TRUE(be.register_memory(this, sizeof *this, &err)) << err;
    for (uint32_t i = 0; i < k; i++)
      for (uint32_t x = 0; x < len; x++) data[i][x] = uint8_t(seed + i * 31 + x * 7 + (x >> 9));
    memset(parity, 0, sizeof parity);
    job.codec = codec(CodeKind::PQ, k, 2);
    job.len = len;
    for (uint32_t i = 0; i < k; i++) job.src[i] = data[i];
    job.dst[0] = parity[0];
    job.dst[1] = parity[1];
    job.ctx = this;
    job.done = [](ParityJob* j) { static_cast<Stripe*>(j->ctx)->done++; };
  }
  ~Stripe() { be.unregister_memory(this); }
  void submit() {
    ParityJob* j = &job;
    be.submit(&j, 1);
  }
  bool right() const {
    auto cpu = make_cpu_backend();
    alignas(64) static uint8_t want[2][len];
    ParityJob w = job;
    w.dst[0] = want[0];
    w.dst[1] = want[1];
    w.done = [](ParityJob*) {};
    ParityJob* wp = &w;
    cpu->submit(&wp, 1);
    return memcmp(want, parity, sizeof want) == 0;
  }
};

// Polls as a reactor does until every job is done or the deadline passes.
bool run_until_done(ParityBackend& be, double seconds) {
  const uint64_t until = mono_ns() + uint64_t(seconds * 1e9);
  while (be.in_flight() > 0 && mono_ns() < until) {
    if (be.poll() > 0) continue;
    test::wait_for_parity(be, 10000000);
  }
  return be.in_flight() == 0;
}

KernelCpuOptions device(uint32_t timeout_ms = 500) {
  KernelCpuOptions o;
  o.async = true;
  o.batch.timeout_ms = timeout_ms;
  o.faults = std::make_shared<ShimFaults>();  // the test's handle on injected hangs
  return o;
}

TEST(DevicePath, AsyncDeviceMatchesIsalPolledAndEvent) {
  for (auto mode : {kern::Completion::Poll, kern::Completion::Event}) {
    KernelCpuOptions o = device();
    o.batch.completion = mode;
    o.batch.max_batch_jobs = 40;  // many batches in flight on several slots
    auto be = make_kernel_cpu_backend(o);
    EXPECT_EQ(be->event_fd() >= 0, mode == kern::Completion::Event);
    const auto specs = test::mixed_specs(800, 9000, 55);
    test::RunOptions ro;
    ro.submit_chunk = 40;
    test::expect_matches_isal(*be, specs, test::registered_allocator(*be), ro);
    const ParityCounters c = be->counters();
    EXPECT_EQ(c.device_jobs, specs.size());
    EXPECT_EQ(c.staged_batches, 0u);
    EXPECT_GT(c.zero_copy_batches, 1u);
    EXPECT_FALSE(c.on_cpu);
  }
}

// A polled batch is not waited for by sleeping past it: the owner learns
// how long batches take and spins only near the end.
TEST(DevicePath, PollWithinFollowsTheBatch) {
  auto be = make_kernel_cpu_backend(device());
  Stripe s(*be, 1);
  EXPECT_EQ(be->poll_within_ns(), UINT64_MAX) << "nothing pending: sleep as long as you like";
  s.submit();
  EXPECT_EQ(be->poll_within_ns(), 0u) << "an open batch launches at the end of the owner's turn";
  be->poll();  // launches it
  ASSERT_TRUE(run_until_done(*be, 10));
  EXPECT_EQ(s.done, 1);
  EXPECT_TRUE(s.right());
  EXPECT_EQ(be->poll_within_ns(), UINT64_MAX);
}

// The device stops before the commit and the batch overruns its limit: its
// job runs on the CPU (right result), the backend pauses the device, and
// when the device wakes up its commit finds the gate closed and writes
// nothing over what the buffers hold by then.
TEST(DevicePath, HangBeforeCommitIsGivenUpSafely) {
  KernelCpuOptions o = device(50);
  o.hang_before_commit_at = 0;
  o.batch.retry_ms = 60000;
  auto be = make_kernel_cpu_backend(o);
  {
    Stripe s(*be, 2);
    s.submit();
    ASSERT_TRUE(run_until_done(*be, 10)) << "the hung batch's job was not finished on the CPU";
    EXPECT_EQ(s.done, 1);
    EXPECT_TRUE(s.right());
    ParityCounters c = be->counters();
    EXPECT_EQ(c.device_timeouts, 1u);
    EXPECT_EQ(c.fallback_jobs, 1u);
    EXPECT_TRUE(c.on_cpu);
    std::string why;
    EXPECT_TRUE(be->fell_back(&why));
    EXPECT_NE(why.find("did not finish within 50 ms"), std::string::npos) << why;
    // Paused: the next job runs on the CPU at once.
    Stripe t(*be, 3);
    t.submit();
    ASSERT_TRUE(run_until_done(*be, 10));
    EXPECT_TRUE(t.right());
    EXPECT_EQ(be->counters().fallback_jobs, 2u);

    // The buffer is someone else's now; the device wakes up.
    memset(s.parity, 0xee, sizeof s.parity);
    ASSERT_TRUE(o.faults->wait_hung(1000));
    o.faults->release();
    const uint64_t until = mono_ns() + 2000000000ull;
    while (be->poll_within_ns() != UINT64_MAX && mono_ns() < until) {
      be->poll();
      usleep(1000);
    }
    for (auto& row : s.parity)
      for (uint8_t b : row) ASSERT_EQ(b, 0xee) << "a given-up batch wrote after its gate closed";
  }
}

// The device stalls after its commit passed the gate: the batch cannot be
// given up (its outputs are being written) and is waited for; when the
// device goes on, the job completes with the device's result, once.
TEST(DevicePath, HangInCommitIsWaitedFor) {
  KernelCpuOptions o = device(50);
  o.hang_in_commit_at = 0;
  auto be = make_kernel_cpu_backend(o);
  Stripe s(*be, 4);
  s.submit();
  be->poll();
  ASSERT_TRUE(o.faults->wait_hung(2000));
  EXPECT_FALSE(run_until_done(*be, 0.2)) << "finished while its commit was stalled";
  EXPECT_EQ(s.done, 0);
  EXPECT_EQ(be->counters().device_timeouts, 1u);
  o.faults->release();
  ASSERT_TRUE(run_until_done(*be, 10));
  EXPECT_EQ(s.done, 1);
  EXPECT_TRUE(s.right());
  EXPECT_EQ(be->counters().fallback_jobs, 0u);
  EXPECT_EQ(be->counters().device_jobs, 1u);
}

// An error on the device is not the end of it: the batch reruns on the CPU,
// jobs go to the CPU for retry_ms, then the device is used again.
TEST(DevicePath, TransientErrorPausesThenTheDeviceIsTakenBack) {
  KernelCpuOptions o = device();
  o.fail_after_kernel_at = 0;
  o.batch.retry_ms = 20;
  o.batch.watchdog_us = 200;
  auto be = make_kernel_cpu_backend(o);
  Stripe a(*be, 5);
  a.submit();
  ASSERT_TRUE(run_until_done(*be, 10));
  EXPECT_TRUE(a.right());
  EXPECT_TRUE(be->on_cpu());
  EXPECT_EQ(be->counters().device_errors, 1u);
  EXPECT_EQ(be->counters().fallback_jobs, 1u);
  std::this_thread::sleep_for(std::chrono::milliseconds(40));
  Stripe b(*be, 6);
  b.submit();  // still paused until the owner polls past retry_ms
  ASSERT_TRUE(run_until_done(*be, 10));
  Stripe c(*be, 7);
  c.submit();
  ASSERT_TRUE(run_until_done(*be, 10));
  EXPECT_TRUE(b.right());
  EXPECT_TRUE(c.right());
  EXPECT_FALSE(be->on_cpu()) << "the device was not taken back";
  EXPECT_EQ(be->counters().device_resumes, 1u);
  EXPECT_GE(be->counters().device_jobs, 1u);
}

// Routing: batches below the threshold run on the CPU (counted), the rest
// on the device; the cap sends what is beyond it to the CPU.
TEST(DevicePath, SmallBatchesRouteToTheCpuAndTheCapHolds) {
  KernelCpuOptions o = device();
  o.batch.routing = kern::Routing::Below;
  o.batch.route_below_bytes = 64 * 1024;  // one Stripe batch: 6 x 8 KiB = 48 KiB
  auto be = make_kernel_cpu_backend(o);
  {
    Stripe s(*be, 8);
    s.submit();
    ASSERT_TRUE(run_until_done(*be, 10));
    EXPECT_TRUE(s.right());
    EXPECT_EQ(be->counters().routed_jobs, 1u);
    EXPECT_EQ(be->counters().device_jobs, 0u);
    Stripe t1(*be, 9), t2(*be, 10);  // 96 KiB in one turn: the device
    t1.submit();
    t2.submit();
    ASSERT_TRUE(run_until_done(*be, 10));
    EXPECT_TRUE(t1.right() && t2.right());
    EXPECT_EQ(be->counters().device_jobs, 2u);
  }
  KernelCpuOptions capped = device();
  capped.batch.max_gbps = 1e-6;  // 1 KB/s: every batch is beyond it
  capped.batch.max_batch_bytes = 16 * 1024;
  auto cb = make_kernel_cpu_backend(capped);
  Stripe s(*cb, 11);
  s.submit();
  ASSERT_TRUE(run_until_done(*cb, 10));
  EXPECT_TRUE(s.right());
  EXPECT_EQ(cb->counters().capped_jobs, 1u);
}

// The measured rule: with a launch said to cost a second of CPU, the CPU
// computes every batch cheaper.
TEST(DevicePath, MeasuredRoutingPicksTheCheaperSide) {
  KernelCpuOptions o = device();
  o.batch.routing = kern::Routing::Measured;
  o.batch.launch_ns_guess = 1000000000;
  auto be = make_kernel_cpu_backend(o);
  Stripe s(*be, 12);
  s.submit();
  ASSERT_TRUE(run_until_done(*be, 10));
  EXPECT_TRUE(s.right());
  EXPECT_EQ(be->counters().routed_jobs, 1u);
  EXPECT_GT(be->estimates().cpu_ns_per_byte, 0.0);
}

// A reactor with a polled backend: no event fd to sleep on, the job still
// completes, and the reactor does not spin through its wait.
TEST(DevicePath, ReactorCompletesPolledJobs) {
  KernelCpuOptions o = device();
  o.batch.window_us = 20000;  // the batch waits 20 ms for company: the reactor sleeps through it
  Reactor r(0, 1 << 20, make_kernel_cpu_backend(o), 64, 4);
  r.claim();
  ASSERT_EQ(r.parity().event_fd(), -1);
  Stripe s(r.parity(), 13);
  s.submit();
  int turns = 0;
  const uint64_t until = mono_ns() + 10000000000ull;
  while (s.done == 0 && mono_ns() < until) {
    r.poll(true, 1000);
    turns++;
  }
  ASSERT_EQ(s.done, 1);
  EXPECT_TRUE(s.right());
  EXPECT_LT(turns, 2000) << "the reactor spun through the batch's window";
}

}  // namespace
}  // namespace gpuraid
