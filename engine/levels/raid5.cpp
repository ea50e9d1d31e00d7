// RAID 5: one XOR parity row per stripe, md's left-symmetric layout.
#include "engine/levels/parity_layout.h"
#include "engine/levels/units.h"

namespace gpuraid {

const LevelLayout& raid5_level() {
  static const LevelDescription d{
    .level = Level::R5,
    .name = "raid5",
    .number = "5",
    .api_value = 4,  // RAID_LEVEL_5
    .min_members = 3,
    .parity = 1,
    .code = CodeKind::Xor,
    .write_path = WritePath::Parity,
  };
  static const ParityLayout unit(d);
  return unit;
}

}  // namespace gpuraid
