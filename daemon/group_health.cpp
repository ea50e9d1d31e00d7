#include "daemon/group_health.h"

#include <algorithm>

namespace gpuraid::daemon {

uint32_t redundancy_left(const Geometry& g, uint64_t lost_mask, bool parity_trusted) {
  if (!parity_trusted || !g.survives(lost_mask)) return 0;
  const uint32_t lost = uint32_t(__builtin_popcountll(lost_mask));
  switch (g.level) {
    case Level::R0: return 0;
    case Level::R10: {
      // near-2: copies on adjacent members (2i, 2i+1); the weakest pair decides.
      uint32_t left = g.copies() - 1;
      for (uint32_t i = 0; i + 1 < g.members; i += 2) {
        uint32_t pair_lost = uint32_t(lost_mask >> i & 1) + uint32_t(lost_mask >> (i + 1) & 1);
        left = std::min(left, g.copies() - 1 - std::min(pair_lost, g.copies() - 1));
      }
      return left;
    }
    default: {
      const uint32_t total = g.guaranteed_redundancy();
      return lost >= total ? 0 : total - lost;
    }
  }
}

}  // namespace gpuraid::daemon
