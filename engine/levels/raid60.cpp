// RAID 60: RAID 0 over RAID 6 sub-groups (P and Q rows per stripe in its
// sub-group); the layout is grouped_layout.h's.
#include "engine/levels/grouped_layout.h"
#include "engine/levels/units.h"

namespace gpuraid {

const LevelLayout& raid60_level() {
  static const LevelDescription d{
    .level = Level::R60,
    .name = "raid60",
    .number = "60",
    .api_value = 241,  // RAID_LEVEL_60
    .min_members = 8,
    .parity = 2,
    .min_group_members = 4,
    .code = CodeKind::PQ,
    .write_path = WritePath::Parity,
  };
  static const GroupedParityLayout unit(d);
  return unit;
}

}  // namespace gpuraid
