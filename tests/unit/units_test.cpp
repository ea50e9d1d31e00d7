// Sizes as operators write them, and counts as messages say them (engine/units.h).
#include "engine/units.h"

#include <gtest/gtest.h>

namespace gpuraid {
namespace {

TEST(Units, ParseSize) {
  uint64_t v = 0;
  EXPECT_TRUE(parse_size("64K", &v));
  EXPECT_EQ(v, 65536u);
  EXPECT_TRUE(parse_size("2GiB", &v));
  EXPECT_EQ(v, 2ull << 30);
  EXPECT_TRUE(parse_size("4096", &v));
  EXPECT_EQ(v, 4096u);
  EXPECT_FALSE(parse_size("", &v));
  EXPECT_FALSE(parse_size("-1", &v));
  EXPECT_FALSE(parse_size("1X", &v));
  EXPECT_FALSE(parse_size("99999999999P", &v));  // overflows
}

TEST(Units, FormatSize) {
  EXPECT_EQ(format_size(65536), "64KiB");
  EXPECT_EQ(format_size(1536), "1.5KiB");
  EXPECT_EQ(format_size(700), "700B");
}

// "1 regions" was in the events (issue 33, item 14).
TEST(Units, CountOfSaysOneInTheSingular) {
  EXPECT_EQ(count_of(1, "dirty region"), "1 dirty region");
  EXPECT_EQ(count_of(0, "region"), "0 regions");
  EXPECT_EQ(count_of(2, "stripe"), "2 stripes");
}

}  // namespace
}  // namespace gpuraid
