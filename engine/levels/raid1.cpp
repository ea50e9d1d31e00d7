// RAID 1: every member holds a copy of the one data strip of each stripe.
#include "engine/levels/units.h"

namespace gpuraid {

namespace {

class Raid1 : public LevelLayout {
 public:
  const LevelDescription& description() const override {
    static const LevelDescription d{
      .level = Level::R1,
      .name = "raid1",
      .number = "1",
      .api_value = 2,  // RAID_LEVEL_1
      .min_members = 2,
      .write_path = WritePath::Mirror,
    };
    return d;
  }
  uint32_t data_strips(const Geometry&) const override { return 1; }
  uint32_t copies(const Geometry& g) const override { return g.members; }
  uint32_t data_member(const Geometry&, uint64_t, uint32_t, uint32_t copy) const override { return copy; }
  // One domain: the data lives while one member does.
  FailureDomains redundancy(const Geometry& g) const override { return {g.members, g.members - 1}; }
};

}  // namespace

const LevelLayout& raid1_level() {
  static const Raid1 unit;
  return unit;
}

}  // namespace gpuraid
