// Throttled drives (engine/io/drive_throttle.h): the completion time of
// each I/O on the drive's virtual clock, per direction (arithmetic on given
// clocks), and through a reactor the order I/Os complete in: a small one
// never waits for a whole large one. No speed here (bench/ measures it).
#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>
#include <vector>

#include "engine/clock.h"
#include "engine/engine.h"
#include "engine/io/drive.h"
#include "engine/io/drive_throttle.h"

using namespace gpuraid;

TEST(DriveThrottle, BandwidthAndIopsCapsPerDirection) {
  DriveLimits l;
  l.read_bytes_s = 2ull << 30;   // 2 GiB/s
  l.write_bytes_s = 1ull << 30;  // 1 GiB/s
  l.write_iops = 100000;         // 10 us per write at least
  DriveThrottle t(l);
  const uint64_t now = 1000000000;
  const uint64_t mib = 1u << 20;
  // 1 MiB at 2 GiB/s: 488,281 ns; the next read queues behind it.
  EXPECT_EQ(t.reserve(false, mib, now), now + 488281);
  EXPECT_EQ(t.reserve(false, mib, now), now + 2 * 488281);
  // Writes have their own clock: 1 MiB at 1 GiB/s.
  EXPECT_EQ(t.reserve(true, mib, now), now + 976562);
  // A 4 KiB write costs its IOPS share (10 us), more than its bytes (3.8 us).
  EXPECT_EQ(t.reserve(true, 4096, now), now + 976562 + 10000);
  // An idle drive starts at the issue time, not at its old clock.
  const uint64_t later = now + 5000000000ull;
  EXPECT_EQ(t.reserve(false, 4096, later), later + 4096ull * 1000000000 / (2ull << 30));
}

TEST(DriveThrottle, NoCapNoDelay) {
  DriveLimits l;
  EXPECT_FALSE(l.any());
  l.write_bytes_s = 1u << 30;
  DriveThrottle t(l);
  EXPECT_EQ(t.reserve(false, 1u << 20, 42), 42u) << "reads are not capped";
}

TEST(DriveThrottle, LaterChunksPayBytesOnly) {
  DriveLimits l;
  l.read_bytes_s = 1ull << 30;
  l.read_iops = 1000;  // 1 ms per I/O at least
  DriveThrottle t(l);
  EXPECT_EQ(t.reserve(false, 4096, 0), 1000000u) << "a first chunk pays the IOPS floor";
  EXPECT_EQ(t.reserve(false, DriveThrottle::kChunkBytes, 1000000, false),
            1000000u + uint64_t(DriveThrottle::kChunkBytes) * 1000000000 / (1ull << 30))
      << "a later chunk of the same I/O pays its bytes";
}

// Through a reactor: a 4 KiB read issued right after a 1 MiB read of a
// 16 MiB/s drive (62.5 ms of it) completes first, after one 128 KiB chunk
// of the large one and its own share; the large one still takes its time.
TEST(DriveThrottle, ASmallReadIsNotHeldBehindALargeOne) {
  EngineConfig c;
  c.arena_bytes = 4u << 20;
  std::string err;
  auto e = Engine::create(c, &err);
  ASSERT_TRUE(e) << err;
  DriveSpec spec;
  spec.type = DriveType::Mem;
  spec.size_bytes = 8u << 20;
  auto d = Drive::open(spec, &err);
  ASSERT_TRUE(d) << err;
  DriveLimits l;
  l.read_bytes_s = 16u << 20;
  d->set_limits(l);
  const int slot = e->attach(d.get(), &err);
  ASSERT_GE(slot, 0) << err;
  Reactor& r = e->reactor(0);
  r.claim();
  struct Seen {
    std::vector<uint32_t> order;
    std::vector<int> res;
  } seen;
  std::unique_ptr<uint8_t, decltype(&free)> buf(static_cast<uint8_t*>(aligned_alloc(4096, 2u << 20)), &free);
  auto read = [&](uint64_t off, uint32_t len) {
    MemberIo* m = r.alloc_io();
    m->kind = MemberIo::Read;
    m->drive = d.get();
    m->slot = uint32_t(slot);
    m->offset = off;
    m->len = len;
    m->buf = buf.get() + (off >> 1);
    m->ctx = &seen;
    m->done = [](MemberIo* x) {
      auto* s = static_cast<Seen*>(x->ctx);
      s->order.push_back(x->len);
      s->res.push_back(x->res);
      Reactor::current()->free_io(x);
    };
    r.submit(m);
  };
  const uint64_t t0 = mono_ns();
  read(0, 1u << 20);
  read(4u << 20, 4096);
  for (int i = 0; i < 1000000 && seen.order.size() < 2; i++) r.poll(true, 1);
  const uint64_t took = mono_ns() - t0;
  ASSERT_EQ(seen.order.size(), 2u) << "I/O did not complete";
  EXPECT_EQ(seen.order, (std::vector<uint32_t>{4096, 1u << 20})) << "the 4 KiB read waited for the whole 1 MiB one";
  EXPECT_EQ(seen.res, (std::vector<int>{4096, 1 << 20}));
  EXPECT_GE(took, (1ull << 20) * 1000000000 / (16u << 20)) << "the 1 MiB read finished before the drive could have";
  e->detach(slot);
}
