// Every level and geometry through the real engine (io_uring on mem and
// file drives), checked against a plain scalar reference of the layout:
// the bytes on every member must be exactly where md's layout and the
// code's matrix put them.
#include <gtest/gtest.h>

#include <random>

#include "engine/gf256.h"
#include "tests/support/test_array.h"

using namespace gpuraid;
using namespace gpuraid::test;

namespace {

struct Case {
  Level level;
  uint32_t members, parity, strip;
};

std::string name(const Case& c) {
  return std::string(level_name(c.level)) + "_n" + std::to_string(c.members) + "_m" +
         std::to_string(c.parity) + "_s" + std::to_string(c.strip / 1024) + "k";
}

// Reference: what every member must hold, computed from the logical image
// with gf::mul and the geometry's placement functions only.
void check_layout(TestArray& a, const std::vector<uint8_t>& image) {
  Volume& v = a.vol();
  const Geometry& g = v.geometry();
  const uint32_t k = g.data_strips(), strip = g.strip_bytes;
  std::vector<std::vector<uint8_t>> member(g.members);
  for (uint32_t m = 0; m < g.members; m++) member[m] = a.member_bytes(m, v.data_offset(), g.member_data_bytes);
  const Codec& c = v.codec();
  for (uint64_t s = 0; s < g.stripes(); s++) {
    const uint8_t* row = image.data() + s * g.stripe_data_bytes();
    for (uint32_t i = 0; i < k; i++)
      for (uint32_t cp = 0; cp < g.copies(); cp++) {
        uint32_t m = g.data_member(s, i, cp);
        ASSERT_EQ(0, memcmp(member[m].data() + s * strip, row + size_t(i) * strip, strip))
            << "stripe " << s << " data " << i << " copy " << cp << " on member " << m;
      }
    if (g.is_mirror()) continue;
    for (uint32_t r = 0; r < g.parity; r++) {
      uint32_t m = g.parity_member(s, r);
      for (uint32_t b = 0; b < strip; b++) {
        uint8_t x = 0;
        for (uint32_t i = 0; i < k; i++) x ^= gf::mul(c.coeff(r, i), row[size_t(i) * strip + b]);
        ASSERT_EQ(member[m][s * strip + b], x) << "stripe " << s << " parity " << r << " byte " << b;
      }
    }
  }
}

class VolumeLayout : public ::testing::TestWithParam<Case> {};

TEST_P(VolumeLayout, WritesLandWhereTheReferenceSays) {
  const Case c = GetParam();
  ArrayOptions o;
  o.level = c.level;
  o.members = c.members;
  o.parity = c.parity;
  o.strip = c.strip;
  o.member_bytes = 16 * c.strip + 8192;
  o.data_offset = 8192;
  o.drive_type = c.members % 2 ? DriveType::File : DriveType::Mem;
  TestArray a(o);
  const uint64_t size = a.vol().size_bytes();
  std::vector<uint8_t> image(size, 0);
  AlignedBuf buf(size);
  std::mt19937_64 rng(c.members * 1000 + c.strip);
  // Random writes of random sizes, then whole-volume writes in odd pieces.
  for (int t = 0; t < 60; t++) {
    uint64_t blocks = size / 4096;
    uint64_t off = rng() % blocks * 4096;
    uint64_t len = std::min<uint64_t>((1 + rng() % 40) * 4096, size - off);
    fill_random(buf.data(), len, rng());
    ASSERT_EQ(0, a.write(off, len, buf.data()));
    memcpy(image.data() + off, buf.data(), len);
  }
  ASSERT_EQ(0, a.flush());
  AlignedBuf got(size);
  ASSERT_EQ(0, a.read(0, size, got.data()));
  ASSERT_EQ(0, memcmp(got.data(), image.data(), size));
  check_layout(a, image);
  // Sequential whole-stripe writes (full-stripe path), then the check again.
  fill_random(buf.data(), size, 42);
  for (uint64_t off = 0; off < size;) {
    uint64_t len = std::min<uint64_t>(size - off, a.vol().geometry().stripe_data_bytes() * (1 + off % 3));
    ASSERT_EQ(0, a.write(off, len, buf.data() + off));
    off += len;
  }
  memcpy(image.data(), buf.data(), size);
  check_layout(a, image);
  EXPECT_TRUE(a.failed_events.empty());
}

INSTANTIATE_TEST_SUITE_P(
    Geometries, VolumeLayout,
    ::testing::Values(Case{Level::R0, 3, 0, 4096}, Case{Level::R0, 4, 0, 65536}, Case{Level::R1, 2, 0, 16384},
                      Case{Level::R1, 3, 0, 4096}, Case{Level::R10, 4, 0, 8192}, Case{Level::R10, 6, 0, 65536},
                      Case{Level::R5, 3, 0, 4096}, Case{Level::R5, 4, 0, 65536}, Case{Level::R5, 8, 0, 16384},
                      Case{Level::R6, 4, 0, 4096}, Case{Level::R6, 5, 0, 65536}, Case{Level::R6, 10, 0, 8192},
                      Case{Level::EC, 5, 1, 8192}, Case{Level::EC, 7, 3, 4096}, Case{Level::EC, 8, 4, 16384},
                      Case{Level::EC, 12, 2, 4096}),
    [](const auto& info) { return name(info.param); });

TEST(Volume, LargeStrip) {
  ArrayOptions o;
  o.level = Level::R6;
  o.members = 4;
  o.strip = 1u << 20;
  o.member_bytes = 4u << 20;
  TestArray a(o);
  AlignedBuf w(2u << 20), r(2u << 20);
  fill_random(w.data(), w.size(), 1);
  ASSERT_EQ(0, a.write(1u << 20, 2u << 20, w.data()));
  ASSERT_EQ(0, a.read(1u << 20, 2u << 20, r.data()));
  EXPECT_EQ(0, memcmp(w.data(), r.data(), w.size()));
}

TEST(Volume, RefusesBadRequests) {
  ArrayOptions o;
  TestArray a(o);
  AlignedBuf b(8192);
  std::string why;
  IoRequest req;
  req.op = IoRequest::Read;
  req.buf = b.data();
  req.done = [](IoRequest*) { FAIL() << "a refused request must not complete"; };
  req.offset = 512;
  req.length = 4096;
  EXPECT_EQ(-EINVAL, a.vol().submit(a.reactor(), &req, &why));
  EXPECT_NE(why.find("aligned"), std::string::npos) << why;
  req.offset = 0;
  req.length = 100;
  EXPECT_EQ(-EINVAL, a.vol().submit(a.reactor(), &req, &why));
  req.length = 0;
  EXPECT_EQ(-EINVAL, a.vol().submit(a.reactor(), &req, &why));
  req.offset = a.vol().size_bytes() - 4096;
  req.length = 8192;
  EXPECT_EQ(-EINVAL, a.vol().submit(a.reactor(), &req, &why));
  EXPECT_NE(why.find("past the end"), std::string::npos) << why;
  req.offset = UINT64_MAX - 4095;  // overflow must not wrap around
  req.length = 8192;
  EXPECT_EQ(-EINVAL, a.vol().submit(a.reactor(), &req, &why));
  req.offset = 0;
  req.length = 4096;
  req.buf = nullptr;
  EXPECT_EQ(-EINVAL, a.vol().submit(a.reactor(), &req, &why));
  req.buf = b.data() + 512;  // O_DIRECT member I/O would fail the member with EINVAL
  EXPECT_EQ(-EINVAL, a.vol().submit(a.reactor(), &req, &why));
  EXPECT_NE(why.find("buffer must be 4 KiB-aligned"), std::string::npos) << why;
  req.buf = b.data();
  req.op = IoRequest::Op(9);
  EXPECT_EQ(-EINVAL, a.vol().submit(a.reactor(), &req, &why));
  // The volume still works.
  fill_random(b.data(), 8192, 3);
  EXPECT_EQ(0, a.write(0, 8192, b.data()));
}

TEST(Volume, RefusesBadMembers) {
  std::string err;
  EngineConfig ec;
  auto e = Engine::create(ec, &err);
  ASSERT_TRUE(e) << err;
  std::vector<std::unique_ptr<Drive>> d;
  std::vector<Drive*> p;
  for (uint64_t sz : {4u << 20, 4u << 20, 2u << 20}) {
    DriveSpec s;
    s.type = DriveType::Mem;
    s.size_bytes = sz;
    d.push_back(Drive::open(s, &err));
    p.push_back(d.back().get());
  }
  Geometry g;
  std::string note;
  ASSERT_TRUE(Volume::fit_geometry(Level::R5, 0, 65536, p, 0, &g, &note, &err)) << err;
  EXPECT_NE(note.find("smallest"), std::string::npos) << note;
  EXPECT_EQ(g.member_data_bytes, 2u << 20);
  Geometry big;
  ASSERT_TRUE(Geometry::make(Level::R5, 3, 0, 65536, 4u << 20, &big, &err));
  EXPECT_FALSE(Volume::create(*e, big, p, 0, &err));
  EXPECT_NE(err.find("too small"), std::string::npos) << err;
  EXPECT_FALSE(Volume::create(*e, g, {p[0], p[0], p[1]}, 0, &err));
  EXPECT_NE(err.find("twice"), std::string::npos) << err;
  EXPECT_FALSE(Volume::create(*e, g, {p[0], p[1]}, 0, &err));
  EXPECT_FALSE(Volume::fit_geometry(Level::R6, 0, 65536, p, 0, &g, &note, &err));
  EXPECT_NE(err.find("at least 4"), std::string::npos) << err;
  EXPECT_FALSE(Volume::fit_geometry(Level::R5, 0, 65536, p, 2u << 20, &g, &note, &err));
}

TEST(Volume, FlushAndFuaReachMembers) {
  ArrayOptions o;
  o.drive_type = DriveType::File;
  TestArray a(o);
  AlignedBuf b(65536);
  fill_random(b.data(), b.size(), 5);
  EXPECT_EQ(0, a.io(IoRequest::Write, 0, 65536, b.data(), /*fua=*/true));
  EXPECT_EQ(0, a.flush());
  uint64_t flushes = a.reactor().stats().member_flushes;
  EXPECT_EQ(flushes, 4u);  // one per member
}

TEST(Volume, SequentialSmallWritesMergeIntoFullStripes) {
  ArrayOptions o;
  o.level = Level::R5;
  o.members = 5;
  o.strip = 16384;
  o.member_bytes = 4u << 20;
  TestArray a(o);
  const uint64_t stripe = a.vol().geometry().stripe_data_bytes();  // 64 KiB
  AlignedBuf data(stripe * 8);
  fill_random(data.data(), data.size(), 9);
  // 128 in-flight 4 KiB sequential writes submitted in one go.
  std::vector<IoRequest> reqs(stripe * 8 / 4096);
  int done = 0;
  for (size_t i = 0; i < reqs.size(); i++) {
    reqs[i].op = IoRequest::Write;
    reqs[i].offset = i * 4096;
    reqs[i].length = 4096;
    reqs[i].buf = data.data() + i * 4096;
    reqs[i].ctx = &done;
    reqs[i].done = [](IoRequest* r) {
      EXPECT_EQ(r->result, 0);
      ++*static_cast<int*>(r->ctx);
    };
    ASSERT_EQ(0, a.vol().submit(a.reactor(), &reqs[i]));
  }
  while (done < int(reqs.size())) a.reactor().poll(true, 10);
  EXPECT_GT(a.vol().stats().merged_writes, reqs.size() / 2);
  // Only the stream's first write, before it is known to be one, is written
  // alone; every later stripe waits for its rest (ops/stripe_gather.h).
  EXPECT_EQ(a.vol().stats().rmw_writes, 1u);
  EXPECT_EQ(a.vol().stats().full_stripe_writes, 7u);
  AlignedBuf got(data.size());
  ASSERT_EQ(0, a.read(0, data.size(), got.data()));
  EXPECT_EQ(0, memcmp(got.data(), data.data(), data.size()));
}

TEST(Volume, LargeReadsAreMergedPerMember) {
  ArrayOptions o;
  o.level = Level::R0;
  o.members = 4;
  o.strip = 4096;
  o.member_bytes = 4u << 20;
  TestArray a(o);
  AlignedBuf b(1u << 20);
  uint64_t before = a.reactor().stats().member_reads;
  ASSERT_EQ(0, a.read(0, 1u << 20, b.data()));
  // 256 strips of 4 KiB, but one request per member.
  EXPECT_EQ(a.reactor().stats().member_reads - before, 4u);
}

}  // namespace

// Issue 14: a sequential stream over a stripe that lost a member reads each
// survivor once. The reads of one stripe submitted in one batch gather (the
// first waits one turn for the rest, which ride along), so one stripe costs
// k member reads, not k for the lost strip plus the healthy strips again.
TEST(Volume, DegradedSequentialReadsReadEachSurvivorOnce) {
  for (Level level : {Level::R5, Level::R6}) {
    ArrayOptions o;
    o.level = level;
    o.members = 8;
    o.strip = 65536;
    o.member_bytes = 8u << 20;
    TestArray a(o);
    const Geometry& g = a.vol().geometry();
    const uint64_t stripe = g.stripe_data_bytes();
    const uint32_t k = g.data_strips();
    AlignedBuf data(stripe * 4);
    fill_random(data.data(), data.size(), 5);
    ASSERT_EQ(0, a.write(0, data.size(), data.data()));
    ASSERT_TRUE(a.vol().fail_member(3, -EIO));
    // 128 KiB reads, as a sequential stream at queue depth 16 sends them.
    const uint64_t bs = 128 << 10, n = data.size() / bs;
    AlignedBuf got(data.size());
    std::vector<IoRequest> reqs(n);
    int done = 0;
    const uint64_t reads_before = a.reactor().stats().member_reads;
    for (uint64_t i = 0; i < n; i++) {
      reqs[i].op = IoRequest::Read;
      reqs[i].offset = i * bs;
      reqs[i].length = bs;
      reqs[i].buf = got.data() + i * bs;
      reqs[i].ctx = &done;
      reqs[i].done = [](IoRequest* r) {
        EXPECT_EQ(r->result, 0);
        ++*static_cast<int*>(r->ctx);
      };
      ASSERT_EQ(0, a.vol().submit(a.reactor(), &reqs[i]));
    }
    while (done < int(n)) a.reactor().poll(true, 10);
    EXPECT_EQ(0, memcmp(got.data(), data.data(), data.size())) << level_name(level);
    // Each of the 4 stripes: its k survivors (data strips and P), once.
    EXPECT_EQ(a.reactor().stats().member_reads - reads_before, 4u * k) << level_name(level);
    EXPECT_GT(a.vol().stats().merged_reads, 0u) << level_name(level);
  }
}
