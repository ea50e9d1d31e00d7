// RAID 6: P (XOR) and Q (md's Reed-Solomon) rows per stripe, md's
// left-symmetric layout.
#include "engine/levels/parity_layout.h"
#include "engine/levels/units.h"

namespace gpuraid {

const LevelLayout& raid6_level() {
  static const LevelDescription d{
    .level = Level::R6,
    .name = "raid6",
    .number = "6",
    .api_value = 5,  // RAID_LEVEL_6
    .min_members = 4,
    .parity = 2,
    .code = CodeKind::PQ,
    .write_path = WritePath::Parity,
  };
  static const ParityLayout unit(d);
  return unit;
}

}  // namespace gpuraid
