// Bounded op pools: a volume never has more ops on a reactor than its pool
// allows; requests that find it dry wait and are split further as ops come
// back, in order, with every byte where it belongs.
#include <gtest/gtest.h>

#include <random>

#include "engine/ops/op_pool.h"
#include "tests/support/test_array.h"

using namespace gpuraid;
using namespace gpuraid::test;

namespace {

struct Pending {
  int left = 0;
  int first_error = 0;
};

void submit_all(TestArray& a, std::vector<IoRequest>& reqs, Pending& p) {
  for (IoRequest& q : reqs) {
    q.ctx = &p;
    q.done = [](IoRequest* r) {
      auto* pp = static_cast<Pending*>(r->ctx);
      if (r->result && !pp->first_error) pp->first_error = r->result;
      pp->left--;
    };
    p.left++;
    ASSERT_EQ(0, a.vol().submit(a.reactor(), &q));
  }
  while (p.left) a.reactor().poll(true, 5);
}

// 40 concurrent 44-KiB writes over 4 KiB strips (12 stripes each, 480 ops
// wanted at once) through a pool of 32 (16 for requests), then one 1 MiB
// read that alone needs more ops than the pool has.
TEST(OpPool, RequestsWaitForOpsAndAllLandInPlace) {
  ArrayOptions o;
  o.level = Level::R6;
  o.members = 5;
  o.strip = 4096;
  o.ops_per_reactor = 32;
  TestArray a(o);
  Volume& v = a.vol();
  const uint64_t span = 44 * 1024;
  std::vector<uint8_t> model(v.size_bytes(), 0);
  std::vector<AlignedBuf> bufs;
  std::vector<IoRequest> reqs(40);
  for (size_t i = 0; i < reqs.size(); i++) {
    bufs.emplace_back(span);
    fill_random(bufs.back().data(), span, i + 1);
    reqs[i].op = IoRequest::Write;
    reqs[i].offset = i * span;
    reqs[i].length = span;
    reqs[i].buf = bufs.back().data();
    memcpy(model.data() + i * span, bufs.back().data(), span);
  }
  Pending p;
  submit_all(a, reqs, p);
  ASSERT_EQ(0, p.first_error);
  EXPECT_EQ(16u, v.op_pool(0).peak()) << "requests wanted 480 ops at once: they must have waited at the pool's share";
  EXPECT_EQ(0u, v.op_pool(0).in_use());

  AlignedBuf rd(1u << 20);
  std::vector<IoRequest> one(1);
  one[0].op = IoRequest::Read;
  one[0].offset = 0;
  one[0].length = rd.size();
  one[0].buf = rd.data();
  Pending q;
  submit_all(a, one, q);
  ASSERT_EQ(0, q.first_error);
  EXPECT_EQ(0, memcmp(rd.data(), model.data(), rd.size()));
  EXPECT_LE(v.op_pool(0).peak(), 16u);
}

// A read redone degraded after a member failed under it gets its ops even
// when requests have every op of the pool.
TEST(OpPool, DegradedRetriesProceedWhenThePoolIsFull) {
  ArrayOptions o;
  o.level = Level::R5;
  o.members = 4;
  o.strip = 4096;
  o.ops_per_reactor = 32;
  TestArray a(o);
  Volume& v = a.vol();
  AlignedBuf w(v.size_bytes());
  fill_random(w.data(), w.size(), 7);
  ASSERT_EQ(0, a.write(0, w.size(), w.data()));
  a.drive(2).faults().arm(FaultInjector::kFailReads);
  std::vector<AlignedBuf> bufs;
  std::vector<IoRequest> reqs(64);
  const uint64_t span = 96 * 1024;
  for (size_t i = 0; i < reqs.size(); i++) {
    bufs.emplace_back(span);
    reqs[i].op = IoRequest::Read;
    reqs[i].offset = (i * span) % (v.size_bytes() - span) / 4096 * 4096;
    reqs[i].length = span;
    reqs[i].buf = bufs.back().data();
  }
  Pending p;
  submit_all(a, reqs, p);
  ASSERT_EQ(0, p.first_error);
  EXPECT_EQ(1u, v.failed_mask() >> 2 & 1);
  for (size_t i = 0; i < reqs.size(); i++)
    ASSERT_EQ(0, memcmp(bufs[i].data(), w.data() + reqs[i].offset, span)) << "request " << i;
}

}  // namespace
