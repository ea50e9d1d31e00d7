// RAID 50: RAID 0 over RAID 5 sub-groups (one XOR parity row per stripe in
// its sub-group); the layout is grouped_layout.h's.
#include "engine/levels/grouped_layout.h"
#include "engine/levels/units.h"

namespace gpuraid {

const LevelLayout& raid50_level() {
  static const LevelDescription d{
    .level = Level::R50,
    .name = "raid50",
    .number = "50",
    .api_value = 240,  // RAID_LEVEL_50
    .min_members = 6,
    .parity = 1,
    .min_group_members = 3,
    .code = CodeKind::Xor,
    .write_path = WritePath::Parity,
  };
  static const GroupedParityLayout unit(d);
  return unit;
}

}  // namespace gpuraid
