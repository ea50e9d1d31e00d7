// A reactor whose parity backend completes jobs later (the GPU's batching
// backend; here its host-shim twin, same code path) sleeps while jobs are in
// flight and wakes when they finish: the backend's event fd is polled in the
// ring (docs/ARCHITECTURE.md, "Parity on the GPU"). Counted in turns, not
// timed: a reactor that spins instead turns thousands of times while a batch
// waits out its window.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "engine/codec.h"
#include "engine/reactor.h"
#include "kernels/kernel_cpu_backend.h"

namespace gpuraid {
namespace {

TEST(ReactorParityWait, SleepsWhileAJobIsInFlightAndWakesWhenItIsDone) {
  KernelCpuOptions o;
  o.batch.window_us = 50000;     // the batch waits 50 ms for company
  o.batch.watchdog_us = 10000;   // and the backend's watchdog wakes every 10 ms
  Reactor r(0, 1 << 20, make_kernel_cpu_backend(o), 64, 4);
  r.claim();

  const Codec code(CodeKind::Xor, 2, 1);
  std::vector<uint8_t> a(4096, 0x5a), b(4096, 0x0f), p(4096, 0);
  ParityJob job;
  job.op = ParityOp::Encode;
  job.codec = &code;
  job.len = 4096;
  job.src[0] = a.data();
  job.src[1] = b.data();
  job.dst[0] = p.data();
  bool done = false;
  job.ctx = &done;
  job.done = [](ParityJob* j) { *static_cast<bool*>(j->ctx) = true; };
  ParityJob* jobs[] = {&job};
  r.parity().submit(jobs, 1);
  ASSERT_FALSE(done) << "the batching backend completes jobs from poll(), never inside submit()";
  ASSERT_EQ(r.parity().in_flight(), 1u);

  int turns = 0;
  while (!done && turns < 100000) {
    r.poll(/*block=*/true, /*timeout_ms=*/1000);
    turns++;
  }
  ASSERT_TRUE(done) << "the job did not complete in " << turns << " turns";
  EXPECT_EQ(job.status, 0);
  EXPECT_EQ(p[0], uint8_t(0x5a ^ 0x0f));
  // Asleep in the ring: woken by the window's timer, the watchdog and the
  // completion (a few dozen turns at most). Spinning: one turn every few
  // microseconds for 50 ms.
  EXPECT_LT(turns, 100) << "the reactor spun while the parity job was in flight";
}

}  // namespace
}  // namespace gpuraid
