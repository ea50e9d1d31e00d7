#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "engine/stripe_lock.h"

using namespace gpuraid;

TEST(StripeLock, WaitersAreGrantedInOrder) {
  StripeLockTable t(16);
  StripeLockNode a, b, c, other;
  EXPECT_TRUE(t.acquire(&a, 7));
  EXPECT_FALSE(t.acquire(&b, 7));
  EXPECT_FALSE(t.acquire(&c, 7));
  EXPECT_TRUE(t.acquire(&other, 8));  // another stripe is independent
  EXPECT_EQ(t.release(&a), &b);
  EXPECT_EQ(t.release(&b), &c);
  EXPECT_EQ(t.release(&c), nullptr);
  EXPECT_TRUE(t.acquire(&a, 7));
  EXPECT_EQ(t.release(&a), nullptr);
  EXPECT_EQ(t.release(&other), nullptr);
}

TEST(StripeLock, AbsorbTakesLeadingWaiters) {
  StripeLockTable t(16);
  StripeLockNode h, w1, w2, w3;
  int tag1 = 1, tag2 = 2, tag3 = 3;
  w1.owner = &tag1;
  w2.owner = &tag2;
  w3.owner = &tag3;
  ASSERT_TRUE(t.acquire(&h, 1));
  t.acquire(&w1, 1);
  t.acquire(&w2, 1);
  t.acquire(&w3, 1);
  std::vector<int> taken;
  t.absorb(&h, [](StripeLockNode* n) { return *static_cast<int*>(n->owner) != 2; },
           [&](StripeLockNode* n) { taken.push_back(*static_cast<int*>(n->owner)); });
  EXPECT_EQ(taken, std::vector<int>{1});  // stops at the first refused: order is kept
  EXPECT_EQ(t.release(&h), &w2);
  EXPECT_EQ(t.release(&w2), &w3);
  EXPECT_EQ(t.release(&w3), nullptr);
}

TEST(StripeLock, ManyThreadsNeverShareAStripe) {
  StripeLockTable t(64);
  std::atomic<int> inside[8] = {};
  std::atomic<bool> bad{false};
  std::atomic<bool> granted[4] = {};
  auto worker = [&](int id) {
    StripeLockNode n;
    n.owner = &granted[id];  // a releaser hands the stripe over by setting our flag
    for (int i = 0; i < 20000; i++) {
      uint64_t key = uint64_t(i * 7 + id) % 8;
      if (!t.acquire(&n, key)) {
        while (!granted[id].load()) std::this_thread::yield();
        granted[id] = false;
      }
      if (inside[key].fetch_add(1) != 0) bad = true;
      inside[key].fetch_sub(1);
      if (StripeLockNode* next = t.release(&n)) static_cast<std::atomic<bool>*>(next->owner)->store(true);
    }
  };
  std::vector<std::thread> th;
  for (int i = 0; i < 4; i++) th.emplace_back(worker, i);
  for (auto& x : th) x.join();
  EXPECT_FALSE(bad);
}
