// RAID 0: data strips across every member, no redundancy.
#include "engine/levels/units.h"

namespace gpuraid {

namespace {

class Raid0 : public LevelLayout {
 public:
  const LevelDescription& description() const override {
    static const LevelDescription d{
      .level = Level::R0,
      .name = "raid0",
      .number = "0",
      .api_value = 1,  // RAID_LEVEL_0
      .min_members = 1,
      .spares = false,
      .write_path = WritePath::Direct,
    };
    return d;
  }
  uint32_t data_strips(const Geometry& g) const override { return g.members; }
  uint32_t data_member(const Geometry&, uint64_t, uint32_t di, uint32_t) const override { return di; }
  // One domain that survives no failure.
  FailureDomains redundancy(const Geometry& g) const override { return {g.members, 0}; }
};

}  // namespace

const LevelLayout& raid0_level() {
  static const Raid0 unit;
  return unit;
}

}  // namespace gpuraid
