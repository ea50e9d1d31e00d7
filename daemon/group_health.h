// How much more failure a drive group can take: the figure behind the
// API's Group.redundancy_left, the gpuraid_dg_redundancy_left metric and
// gpuraid status.
#pragma once
#include <cstdint>

#include "engine/geometry.h"

namespace gpuraid::daemon {

// Further member failures that every pattern of survives, given the members
// already not online (lost_mask: failed, missing, rebuilding). parity_trusted:
// false while init or resync runs (some parity is not yet right, so a
// failure there would rebuild wrong data): 0 then. 0 when already failed.
uint32_t redundancy_left(const Geometry& g, uint64_t lost_mask, bool parity_trusted);

}  // namespace gpuraid::daemon
