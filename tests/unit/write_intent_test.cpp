// The write-intent bitmap on its own: which region a stripe falls in, and
// that a region with a write in flight on any reactor's shard is never
// cleared (the Dekker pair of begin() and clear_idle()).
#include "engine/group/write_intent.h"

#include <gtest/gtest.h>

#include "engine/group/superblock.h"

namespace gpuraid {
namespace {

constexpr uint32_t kStrip = 64 << 10;

struct Bitmap {
  std::unique_ptr<Drive> drive;
  std::unique_ptr<WriteIntent> wi;
  Bitmap(uint64_t regions, uint64_t region_bytes, uint32_t shards) {
    std::string err;
    drive = Drive::open(DriveSpec{DriveType::Mem, "", 4ull << 20, true}, &err);
    EXPECT_TRUE(drive) << err;
    Drive* d = drive.get();
    wi = std::make_unique<WriteIntent>(regions, region_bytes, kStrip,
                                       [d] { return std::vector<BitmapCopy>{{0, d}}; }, shards);
  }
  size_t clear() {
    return wi->clear_idle(0, [] { return uint64_t(0); }).cleared;
  }
};

TEST(WriteIntent, RegionOfStripe) {
  Bitmap pow2(16, 4 * uint64_t(kStrip), 1);  // 4 stripes a region: a shift
  EXPECT_EQ(pow2.wi->region_of_stripe(0), 0u);
  EXPECT_EQ(pow2.wi->region_of_stripe(3), 0u);
  EXPECT_EQ(pow2.wi->region_of_stripe(4), 1u);
  EXPECT_EQ(pow2.wi->region_of_stripe(63), 15u);
  Bitmap odd(16, 3 * uint64_t(kStrip), 1);  // 3 stripes a region (not as created): a division
  EXPECT_EQ(odd.wi->region_of_stripe(2), 0u);
  EXPECT_EQ(odd.wi->region_of_stripe(3), 1u);
  EXPECT_EQ(odd.wi->region_of_stripe(47), 15u);
}

TEST(WriteIntent, InFlightOnAnyShardKeepsTheRegionDirty) {
  Bitmap b(8, 4 * uint64_t(kStrip), 4);
  for (uint32_t reactor = 0; reactor < 6; reactor++) {  // 4 and 5 share shards with 0 and 1
    EXPECT_EQ(b.wi->begin_wait(4, reactor), 0u) << "reactor " << reactor;
    EXPECT_EQ(b.wi->dirty_regions(), 1u);
    EXPECT_EQ(b.clear(), 0u) << "region cleared with reactor " << reactor << "'s write in flight";
    b.wi->end(4, reactor);
    EXPECT_EQ(b.clear(), 1u) << "reactor " << reactor;
    EXPECT_EQ(b.wi->dirty_regions(), 0u);
  }
  // Two reactors in one region: dirty until both ended.
  b.wi->begin_wait(5, 1);
  b.wi->begin_wait(6, 2);
  b.wi->end(5, 1);
  EXPECT_EQ(b.clear(), 0u);
  b.wi->end(6, 2);
  EXPECT_EQ(b.clear(), 1u);
}

TEST(WriteIntent, PickRegion) {
  uint64_t region = 0;
  std::string err;
  ASSERT_TRUE(WriteIntent::pick_region(64ull << 20, kStrip, 1ull << 40, &region, &err)) << err;
  EXPECT_EQ(region, 64ull << 20);  // 16384 regions: fits
  // 2^50 bytes in 64 MiB regions would not fit the bitmap's area: doubled until it does.
  ASSERT_TRUE(WriteIntent::pick_region(64ull << 20, kStrip, 1ull << 50, &region, &err)) << err;
  EXPECT_LE((1ull << 50) / region, kBitmapMaxBytes * 8);
  EXPECT_GT((1ull << 50) / (region / 2), kBitmapMaxBytes * 8);
  for (uint64_t bad : {uint64_t(kStrip) / 2, 3 * uint64_t(kStrip)}) {
    err.clear();
    EXPECT_FALSE(WriteIntent::pick_region(bad, kStrip, 1ull << 30, &region, &err)) << bad;
    EXPECT_NE(err.find("power of two of at least one strip"), std::string::npos) << err;
  }
}

TEST(WriteIntent, ShardsFitTheBudget) {
  EXPECT_EQ(WriteIntent::shards_for(1024, 16), 16u);
  EXPECT_EQ(WriteIntent::shards_for(1024, 0), 1u);
  EXPECT_EQ(WriteIntent::shards_for(16u << 20, 16), 1u);  // the most regions a bitmap holds: one shard
  EXPECT_EQ(WriteIntent::shards_for(4u << 20, 16), 4u);   // 16 MiB a shard, 64 MiB in all
}

}  // namespace
}  // namespace gpuraid
