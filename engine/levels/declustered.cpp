// draid5 / draid6: declustered parity (issue 34, as ZFS dRAID). Stripes of
// D data strips and P parity strips (XOR; P+Q as RAID 6) spread over N
// members by the placement map of declustered_map.h, which also leaves
// spare room in every row. Any P members may fail; every stripe then lost
// at most P of its strips.
#include "engine/levels/declustered_map.h"
#include "engine/levels/level.h"
#include "engine/levels/units.h"

namespace gpuraid {

namespace {

class DeclusteredLayout : public LevelLayout {
 public:
  explicit DeclusteredLayout(const LevelDescription& d) : d_(d) {}
  const LevelDescription& description() const override { return d_; }
  uint32_t data_strips(const Geometry& g) const override { return g.declustered.data; }
  // Columns of a stripe in the map: its data strips, then its parity rows.
  uint32_t data_member(const Geometry& g, uint64_t stripe, uint32_t di, uint32_t) const override {
    return g.map().drive(stripe, di);
  }
  uint32_t parity_member(const Geometry& g, uint64_t stripe, uint32_t j) const override {
    return g.map().drive(stripe, g.declustered.data + j);
  }
  FailureDomains redundancy(const Geometry& g) const override { return {g.members, g.parity}; }

 private:
  const LevelDescription& d_;
};

}  // namespace

const LevelLayout& draid5_level() {
  static const LevelDescription d{
    .level = Level::DR5,
    .name = "draid5",
    .number = "draid5",
    .api_value = 242,  // RAID_LEVEL_DRAID5
    .min_members = 4,  // 2 data + 1 parity + 1 spare
    .parity = 1,
    .declustered = true,
    .code = CodeKind::Xor,
    .write_path = WritePath::Parity,
  };
  static const DeclusteredLayout unit(d);
  return unit;
}

const LevelLayout& draid6_level() {
  static const LevelDescription d{
    .level = Level::DR6,
    .name = "draid6",
    .number = "draid6",
    .api_value = 243,  // RAID_LEVEL_DRAID6
    .min_members = 5,  // 2 data + 2 parity + 1 spare
    .parity = 2,
    .declustered = true,
    .code = CodeKind::PQ,
    .write_path = WritePath::Parity,
  };
  static const DeclusteredLayout unit(d);
  return unit;
}

}  // namespace gpuraid
