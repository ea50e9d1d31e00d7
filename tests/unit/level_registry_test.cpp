// The level units and their registration (engine/levels/): every level
// finds itself by name, --level value and API value, and its failure domains
// answer survives / failures_tolerated / guaranteed_redundancy exactly as the
// per-level rules written out here (the answers before the levels were
// units) do, for every failure pattern of up to 10 members.
#include <gtest/gtest.h>

#include <bit>
#include <set>

#include "engine/levels/level.h"

using namespace gpuraid;

namespace {

const Level kAll[] = {Level::R0, Level::R1, Level::R10, Level::R5, Level::R6, Level::EC, Level::R50, Level::R60,
                        Level::DR5, Level::DR6};

// The rules as each level states them.
bool survives_rule(const Geometry& g, uint64_t f) {
  const uint32_t failed = uint32_t(std::popcount(f));
  if (f == 0) return true;
  switch (g.level) {
    case Level::R0: return false;
    case Level::R1: return failed < g.members;
    case Level::R10:
      for (uint32_t p = 0; p < g.members / 2; p++)
        if ((f >> (2 * p) & 3) == 3) return false;
      return true;
    default: return failed <= g.parity;
  }
}

uint32_t tolerated_rule(const Geometry& g, uint64_t f) {
  if (!survives_rule(g, f)) return 0;
  const uint32_t failed = uint32_t(std::popcount(f));
  switch (g.level) {
    case Level::R0: return 0;
    case Level::R1: return g.members - 1 - failed;
    case Level::R10:
      for (uint32_t p = 0; p < g.members / 2; p++)
        if (f >> (2 * p) & 3) return 0;
      return 1;
    default: return g.parity - failed;
  }
}

}  // namespace

TEST(LevelRegistry, EveryLevelFindsItself) {
  std::set<int> api;
  for (Level l : kAll) {
    const LevelDescription& d = level_description(l);
    EXPECT_EQ(d.level, l);
    EXPECT_TRUE(level_known(uint32_t(l)));
    EXPECT_EQ(level_by_name(d.name), &d);
    EXPECT_EQ(level_by_name(d.number), &d);
    EXPECT_EQ(level_by_api(d.api_value), &d);
    EXPECT_TRUE(api.insert(d.api_value).second) << d.name << " shares its API value";
  }
  EXPECT_FALSE(level_known(uint32_t(Level::DR6) + 1));
  EXPECT_EQ(level_by_name("7"), nullptr);
  EXPECT_EQ(level_by_api(0), nullptr);  // RAID_LEVEL_UNSPECIFIED
  EXPECT_EQ(level_numbers(), "0, 1, 10, 5, 6, ec, 50, 60, draid5 or draid6");
}

TEST(LevelRegistry, FailureDomainsAnswerAsTheLevelRules) {
  for (Level l : kAll) {
    for (uint32_t n = 1; n <= 10; n++) {
      for (uint32_t m = 0; m <= 3; m++) {
        if ((l == Level::EC) != (m > 0)) continue;
        Geometry g;
        // Declustered: stripes of 2 data strips and one spare's room a row.
        const DeclusteredShape shape = level_description(l).declustered ? DeclusteredShape{2, 1} : DeclusteredShape{};
        if (!Geometry::make(l, n, m, 65536, 1 << 20, &g, nullptr, 0, shape)) continue;
        SCOPED_TRACE(g.describe());
        uint32_t guaranteed = n;
        for (uint64_t f = 0; f < (1ull << n); f++) {
          ASSERT_EQ(g.survives(f), survives_rule(g, f)) << "failed 0x" << std::hex << f;
          ASSERT_EQ(g.failures_tolerated(f), tolerated_rule(g, f)) << "failed 0x" << std::hex << f;
          if (!survives_rule(g, f)) guaranteed = std::min(guaranteed, uint32_t(std::popcount(f)) - 1);
        }
        EXPECT_EQ(g.guaranteed_redundancy(), guaranteed);
      }
    }
  }
}
