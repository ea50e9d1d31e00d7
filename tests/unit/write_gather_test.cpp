// Stripe gathering (engine/ops/stripe_gather.h): a sequential stream of
// parity writes at queue depth becomes full-stripe writes with no member
// reads, and one of degraded reads reconstructs each stripe once; a
// submitter at depth 1 and random I/O are never held waiting; a held write
// goes on after the hold time when nothing else brings its stripe's rest.
#include <gtest/gtest.h>

#include <random>

#include "tests/support/test_array.h"

using namespace gpuraid;
using namespace gpuraid::test;

namespace {

// Keeps `depth` writes (or reads, into `out`) in flight, each submitted
// from the completion of an earlier one, as fio or a ublk queue does.
struct Stream {
  TestArray& a;
  AlignedBuf& data;
  uint64_t bs;
  uint32_t depth;
  std::vector<uint64_t> offsets;  // in submission order
  std::vector<IoRequest> reqs;
  size_t next = 0, done = 0;
  AlignedBuf* out = nullptr;  // reads land here

  void submit_next(IoRequest* r) {
    const uint64_t off = offsets[next++];
    r->op = out ? IoRequest::Read : IoRequest::Write;
    r->offset = off;
    r->length = bs;
    r->buf = (out ? out : &data)->data() + off;
    r->ctx = this;
    r->done = [](IoRequest* q) {
      auto* s = static_cast<Stream*>(q->ctx);
      EXPECT_EQ(q->result, 0);
      s->done++;
      if (s->next < s->offsets.size()) s->submit_next(q);
    };
    ASSERT_EQ(0, a.vol().submit(a.reactor(), r));
  }
  void run() {
    reqs.resize(depth);
    for (uint32_t i = 0; i < depth && next < offsets.size(); i++) submit_next(&reqs[i]);
    while (done < offsets.size()) a.reactor().poll(true, 10);
  }
};

ArrayOptions options(Level level) {
  ArrayOptions o;
  o.level = level;
  o.members = level == Level::R6 ? 10 : 8;
  o.strip = 65536;
  o.member_bytes = 4u << 20;
  // Lockstep: the hold time runs on the logical clock (10 us a turn), so
  // how fast this machine happens to be cannot make a hold run out.
  o.lockstep = true;
  return o;
}

void expect_reads_back(TestArray& a, AlignedBuf& data) {
  AlignedBuf got(data.size());
  ASSERT_EQ(0, a.read(0, data.size(), got.data()));
  EXPECT_EQ(0, memcmp(got.data(), data.data(), data.size()));
}

}  // namespace

TEST(WriteGather, SequentialStreamAtDepthWritesFullStripes) {
  for (Level level : {Level::R5, Level::R6}) {
    TestArray a(options(level));
    const uint64_t size = a.vol().size_bytes(), bs = 128 << 10;
    AlignedBuf data(size);
    fill_random(data.data(), size, 7);
    Stream s{a, data, bs, 16, {}, {}};
    for (uint64_t off = 0; off + bs <= size; off += bs) s.offsets.push_back(off);
    const uint64_t reads_before = a.reactor().stats().member_reads;
    s.run();
    const VolumeStats& st = a.vol().stats();
    const uint64_t stripes = size / a.vol().geometry().stripe_data_bytes();
    // The stream's first request is not known to be one: its stripe may be
    // written in pieces. Every other stripe is written whole, reading nothing.
    EXPECT_GE(st.full_stripe_writes, stripes - 1) << level_name(level);
    EXPECT_LE(st.rmw_writes + st.rcw_writes, 2u) << level_name(level);
    EXPECT_LE(a.reactor().stats().member_reads - reads_before, 2u * a.vol().geometry().members)
        << level_name(level);
    EXPECT_EQ(st.held_expired, 0u) << level_name(level);
    expect_reads_back(a, data);
  }
}

// Depth 1: every write in flight is the held one, so it goes on at once.
TEST(WriteGather, DepthOneIsNeverKeptWaiting) {
  TestArray a(options(Level::R5));
  const uint64_t bs = 128 << 10, size = 32 * bs;
  AlignedBuf data(size);
  fill_random(data.data(), size, 8);
  Stream s{a, data, bs, 1, {}, {}};
  for (uint64_t off = 0; off < size; off += bs) s.offsets.push_back(off);
  s.run();
  EXPECT_EQ(a.vol().stats().held_expired, 0u);
  expect_reads_back(a, data);
}

TEST(WriteGather, RandomWritesAreNotHeld) {
  TestArray a(options(Level::R5));
  const uint64_t size = a.vol().size_bytes(), bs = 4096;
  AlignedBuf data(size);
  fill_random(data.data(), size, 9);
  ASSERT_EQ(0, a.write(0, size, data.data()));
  Stream s{a, data, bs, 16, {}, {}};
  std::mt19937_64 rng(3);
  for (int i = 0; i < 4000; i++) s.offsets.push_back(rng() % (size / bs) * bs);
  const uint64_t held_before = a.vol().stats().held_writes;
  s.run();
  EXPECT_EQ(a.vol().stats().held_writes - held_before, 0u);
  expect_reads_back(a, data);
}

// A stream's write held at the start of stripe 1 (stripe 0 is written
// whole first, so it continues a stream), while a slow write elsewhere
// (injected member latency) keeps a parity write in flight.
struct HeldWrite {
  TestArray a;
  uint64_t stripe, bs = 128 << 10;
  AlignedBuf data;
  IoRequest slow, held;
  int done = 0;

  HeldWrite() : a([] {
    ArrayOptions o = options(Level::R5);
    o.write_gather_us = 2000;
    return o;
  }()), stripe(a.vol().geometry().stripe_data_bytes()), data(a.vol().size_bytes()) {
    fill_random(data.data(), data.size(), 10);
    EXPECT_EQ(0, a.write(0, stripe, data.data()));
    for (uint32_t m = 0; m < a.vol().geometry().members; m++) a.drive(m).faults().set_latency_us(50000);
    submit(&slow, 8 * stripe, false);
    a.reactor().poll(false);
    for (uint32_t m = 0; m < a.vol().geometry().members; m++) a.drive(m).faults().set_latency_us(0);
    submit(&held, stripe, false);
    EXPECT_EQ(a.vol().stats().held_writes, 1u);
  }
  void submit(IoRequest* r, uint64_t off, bool fua) {
    *r = IoRequest{};
    r->op = IoRequest::Write;
    r->offset = off;
    r->length = bs;
    r->buf = data.data() + off;
    r->fua = fua;
    r->ctx = &done;
    r->done = [](IoRequest* q) {
      EXPECT_EQ(q->result, 0);
      ++*static_cast<int*>(q->ctx);
    };
    ASSERT_EQ(0, a.vol().submit(a.reactor(), r));
  }
  void wait_and_check(int writes, uint64_t bytes) {
    while (done < writes) a.reactor().poll(true, 10);
    AlignedBuf got(bytes);
    ASSERT_EQ(0, a.read(0, bytes, got.data()));
    EXPECT_EQ(0, memcmp(got.data(), data.data(), bytes));
  }
};

// The held write's stripe's rest never comes: it waits the hold time and
// then goes on alone.
TEST(WriteGather, AHeldWriteGoesOnWhenTheHoldTimeRunsOut) {
  HeldWrite h;
  h.wait_and_check(2, h.stripe + h.bs);
  EXPECT_EQ(h.a.vol().stats().held_expired, 1u);
}

// A FUA write that rides on a held write (the stream goes on with a
// forced-unit-access write, as a journal commit does) releases it at once:
// nobody waits the hold time for a write the submitter wants durable now.
TEST(WriteGather, AFuaRiderReleasesTheHeldWriteAtOnce) {
  HeldWrite h;
  IoRequest fua;
  h.submit(&fua, h.stripe + h.bs, true);
  h.wait_and_check(3, h.stripe + 2 * h.bs);
  EXPECT_EQ(h.a.vol().stats().merged_writes, 1u) << "the FUA write did not ride on the held one";
  EXPECT_EQ(h.a.vol().stats().held_expired, 0u) << "the held write waited the hold time under a FUA rider";
}

// Degraded reads, member 1 failed: a 128K stream at depths 4 and 16 reads
// each survivor strip once for all of the stripe's readers (k strips a
// stripe: as many bytes as the volume holds), however the stream's
// batches cut the stripes; ungathered, a stripe's first readers read every
// survivor for the lost strip and its later ones read theirs again. At
// depth 2 (256K in flight, less than a stripe) the rest of a stripe comes
// only once its first reads are done, so nothing is held for it: the
// stream is read right, never waiting the hold time.
TEST(ReadGather, DegradedStreamReadsEachSurvivorOnce) {
  for (Level level : {Level::R5, Level::R6})
    for (uint32_t depth : {2u, 4u, 16u}) {
      TestArray a(options(level));
      const Geometry& g = a.vol().geometry();
      const uint64_t size = a.vol().size_bytes(), bs = 128 << 10;
      AlignedBuf data(size), got(size);
      fill_random(data.data(), size, 11);
      ASSERT_EQ(0, a.write(0, size, data.data()));
      ASSERT_TRUE(a.vol().fail_member(1, -EIO));
      Stream s{a, data, bs, depth, {}, {}};
      s.out = &got;
      for (uint64_t off = 0; off + bs <= size; off += bs) s.offsets.push_back(off);
      const uint64_t before = a.reactor().stats().member_bytes_read;
      s.run();
      EXPECT_EQ(0, memcmp(got.data(), data.data(), size)) << level_name(level) << " depth " << depth;
      // The stream's first request is not known to be one: its stripe may
      // be read twice.
      if (depth > 2) {
        EXPECT_LE(a.reactor().stats().member_bytes_read - before, size + uint64_t(g.members) * g.strip_bytes)
            << level_name(level) << " depth " << depth;
      }
      EXPECT_EQ(a.vol().stats().held_expired, 0u) << level_name(level) << " depth " << depth;
    }
}

TEST(ReadGather, RandomDegradedReadsAreNotHeld) {
  TestArray a(options(Level::R5));
  const uint64_t size = a.vol().size_bytes(), bs = 4096;
  AlignedBuf data(size), got(size);
  fill_random(data.data(), size, 12);
  ASSERT_EQ(0, a.write(0, size, data.data()));
  ASSERT_TRUE(a.vol().fail_member(1, -EIO));
  Stream s{a, data, bs, 16, {}, {}};
  s.out = &got;
  std::mt19937_64 rng(4);
  std::vector<bool> seen(size / bs);
  for (int i = 0; i < 4000; i++) {
    const uint64_t piece = rng() % (size / bs);
    if (i && s.offsets.back() + bs == piece * bs) continue;  // by chance sequential: not random
    s.offsets.push_back(piece * bs);
    seen[piece] = true;
  }
  s.run();
  EXPECT_EQ(a.vol().stats().held_reads, 0u);
  for (uint64_t p = 0; p < seen.size(); p++)
    if (seen[p]) {
      ASSERT_EQ(0, memcmp(got.data() + p * bs, data.data() + p * bs, bs)) << "piece " << p;
    }
}
