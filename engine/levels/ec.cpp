// ec: k + m with m (1..kMaxParity) chosen at creation, a Cauchy code, in the
// parity levels' left-symmetric layout.
#include "engine/levels/parity_layout.h"
#include "engine/levels/units.h"

namespace gpuraid {

const LevelLayout& ec_level() {
  static const LevelDescription d{
    .level = Level::EC,
    .name = "ec",
    .number = "ec",
    .api_value = 6,  // RAID_LEVEL_EC
    .min_members = 2,
    .chosen_parity = true,
    .code = CodeKind::Cauchy,
    .write_path = WritePath::Parity,
  };
  static const ParityLayout unit(d);
  return unit;
}

}  // namespace gpuraid
