// RAID 10: md's "near=2" layout: data strip i on members 2i and 2i+1.
#include "engine/levels/units.h"

namespace gpuraid {

namespace {

class Raid10 : public LevelLayout {
 public:
  const LevelDescription& description() const override {
    static const LevelDescription d{
      .level = Level::R10,
      .name = "raid10",
      .number = "10",
      .api_value = 3,  // RAID_LEVEL_10
      .min_members = 4,
      .write_path = WritePath::Mirror,
    };
    return d;
  }
  bool check_members(uint32_t members, std::string* err) const override {
    if (members % 2 == 0) return true;
    if (err) *err = "raid10 needs an even number of members, got " + std::to_string(members);
    return false;
  }
  uint32_t data_strips(const Geometry& g) const override { return g.members / 2; }
  uint32_t copies(const Geometry&) const override { return 2; }
  uint32_t data_member(const Geometry&, uint64_t, uint32_t di, uint32_t copy) const override {
    return di * 2 + copy;  // copies are adjacent
  }
  // Each mirrored pair is a domain that survives losing one of its two.
  FailureDomains redundancy(const Geometry&) const override { return {2, 1}; }
};

}  // namespace

const LevelLayout& raid10_level() {
  static const Raid10 unit;
  return unit;
}

}  // namespace gpuraid
