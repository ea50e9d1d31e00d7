// Invariants stay on in release builds: each broken one stops the process
// at once with a message naming what broke (death tests: each runs in a
// child process).
#include <gtest/gtest.h>

#include <thread>

#include "engine/buffer_pool.h"
#include "engine/engine.h"
#include "engine/ops/op.h"
#include "engine/stripe_lock.h"

using namespace gpuraid;

namespace {

std::unique_ptr<Engine> one_reactor() {
  std::string err;
  EngineConfig c;
  c.arena_bytes = 4u << 20;
  auto e = Engine::create(c, &err);
  if (!e) ADD_FAILURE() << err;
  return e;
}

void nothing(Task*) {}

class Invariants : public ::testing::Test {
 protected:
  void SetUp() override { GTEST_FLAG_SET(death_test_style, "threadsafe"); }
};

TEST_F(Invariants, ATaskPostedTwiceStops) {
  auto e = one_reactor();
  Task t;
  t.run = nothing;
  e->reactor(0).post(&t);
  EXPECT_DEATH(e->reactor(0).post(&t), "invariant broken: reactor 0: task .* posted while already queued");
}

TEST_F(Invariants, ATaskCanBePostedAgainOnceItRan) {
  auto e = one_reactor();
  Reactor& r = e->reactor(0);
  static int runs;
  runs = 0;
  Task t;
  t.run = [](Task*) { runs++; };
  r.post(&t);
  EXPECT_FALSE(r.post_once(&t)) << "queued already: post_once coalesces";
  r.poll(false);
  EXPECT_EQ(1, runs);
  EXPECT_TRUE(r.post_once(&t));
  r.poll(false);
  EXPECT_EQ(2, runs);
}

TEST_F(Invariants, ADeferredTaskPostedStops) {
  auto e = one_reactor();
  Reactor& r = e->reactor(0);
  Reactor::set_current(&r);
  Task t;
  t.run = nothing;
  r.defer(&t);
  EXPECT_DEATH(r.post(&t), "posted while already queued");
}

TEST_F(Invariants, DataPathCallsFromAThreadThatDoesNotOwnTheReactorStop) {
  auto e = one_reactor();
  Reactor::set_current(nullptr);
  EXPECT_DEATH(e->reactor(0).alloc_io(), "reactor 0: alloc_io called from a thread that owns no reactor");
}

TEST_F(Invariants, TwoThreadsPollingOneReactorStop) {
  auto e = one_reactor();
  Reactor& r = e->reactor(0);
  EXPECT_DEATH(
      {
        std::thread t([&] { r.poll(true, 3000); });  // sleeps in the ring
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        r.poll(false);
        t.join();
      },
      "reactor 0 polled by thread .* while thread .* polls it");
}

TEST_F(Invariants, ABufferReturnedTwiceStops) {
  BufferPool p(4u << 20);
  uint8_t* b = p.get(8192);
  ASSERT_NE(nullptr, b);
  p.put(b, 8192);
  EXPECT_DEATH(p.put(b, 8192), "returned twice, or never handed out");
  uint8_t other[64];
  EXPECT_DEATH(p.put(other, 4096), "returned to a pool it is not from");
}

TEST_F(Invariants, AnOpFreedTwiceStops) {
  OpPool pool(nullptr, nullptr, 32, 16);
  Op* op = pool.get(OpClass::Foreground);
  ASSERT_NE(nullptr, op);
  pool.put(op);
  EXPECT_DEATH(pool.put(op), "op .* freed twice");
}

TEST_F(Invariants, AnOpFreedWithIoPendingStops) {
  OpPool pool(nullptr, nullptr, 32, 16);
  Op* op = pool.get(OpClass::Foreground);
  op->pending = 2;
  EXPECT_DEATH(pool.put(op), "freed with 2 member I/Os pending");
  op->pending = 0;
  pool.put(op);
}

TEST_F(Invariants, APoolGivesRequestsAtMostItsShare) {
  OpPool pool(nullptr, nullptr, 32, 16);
  std::vector<Op*> ops;
  while (Op* op = pool.get(OpClass::Foreground)) ops.push_back(op);
  EXPECT_EQ(16u, ops.size());
  while (Op* op = pool.get(OpClass::Maintenance)) ops.push_back(op);
  EXPECT_EQ(32u, ops.size()) << "maintenance may use the reserve";
  Op* retry = pool.get(OpClass::Retry);
  EXPECT_NE(nullptr, retry) << "retries are never refused";
  ops.push_back(retry);
  for (Op* op : ops) pool.put(op);
  EXPECT_EQ(0u, pool.in_use());
}

TEST_F(Invariants, ReleasingAStripeNotHeldStops) {
  StripeLockTable t(64);
  StripeLockNode held, stranger;
  ASSERT_TRUE(t.acquire(&held, 5));
  stranger.key = 5;
  EXPECT_DEATH(t.release(&stranger), "stripe 5 released by .* which does not hold it");
  t.release(&held);
}

}  // namespace
