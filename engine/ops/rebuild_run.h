// A rebuild run: consecutive stripes of a parity level rebuilt together, so
// that member I/O is about 1 MiB instead of one strip and the recovery of
// the whole run is one batched submit to the parity backend (which is what
// lets a GPU backend pay off). Each stripe keeps its own op and its own
// stripe lock, so foreground I/O orders against each stripe exactly as
// with single-stripe rebuild, and the checkpoint still moves stripe by
// stripe. The caller (group/background.cpp) owns the run and reuses it.
#pragma once
#include <cstdint>

#include "engine/geometry.h"
#include "engine/parity/parity_backend.h"
#include "engine/volume.h"

namespace gpuraid {

struct Op;

// Stripes per run at most; the run's length is chosen so that each member
// I/O is about EngineConfig::rebuild_run_bytes.
constexpr uint32_t kMaxRunStripes = 32;
// Rebuild stripes in flight at most (the op pools keep that many ops for
// maintenance), and the member bytes in flight the runs aim at: real NVMe
// wants several large I/Os queued per drive.
constexpr uint32_t kMaxRebuildStripesInFlight = 2 * kMaxRunStripes;
constexpr uint32_t kRebuildInFlightBytes = 2u << 20;
// What a geometry keeps in flight, in stripes: the above, or for a
// declustered level twice as many rows (2k stripes each): its rebuild
// writes into every survivor, not one drive, and a row holds the rebuilt
// member in one of its k stripes at most (a window of stripes alone kept
// the same few rows in flight at 24 drives as at 48, and its rate flat).
inline uint32_t rebuild_window_scale(const Geometry& g) {
  return g.description().declustered ? 2 * g.row_stripes() : 1;
}

struct RebuildRun {
  Op* ops[kMaxRunStripes] = {};  // ops[i] rebuilds stripe first + i; ops[0] leads (phases, buffers)
  // Per op: its result (mirror levels run each stripe as single-stripe
  // maintenance, which fills it; a parity run reports through the counters).
  Volume::MaintenanceResult res[kMaxRunStripes];
  uint32_t n = 0;
  int member = -1;  // the member being rebuilt when the run was made (each op's target may differ: the room)
  // Execution state (the home reactor only).
  uint32_t locked = 0;      // ops that hold their stripe lock
  uint64_t todo = 0;        // bit i: stripe i is rebuilt
  uint64_t held = 0;        // bit i: stripe i is skipped: the member holds it (back from a path loss)
  uint64_t copied = 0;      // bit i: a copy-back's stripe i: its target's strip is read and written, no parity
  uint64_t avoid = 0;       // survivors whose read met an unreadable block: recovered around, kept
  uint64_t used[kMaxRunStripes];  // per stripe: its members (RAID 50/60: its sub-group's)
  uint32_t jobs_left = 0;
  bool job_failed = false;
  uint8_t* strip[kMaxRunStripes][kMaxMembers];  // per stripe, per member: what was read
  uint8_t* out[kMaxRunStripes];                 // per stripe: the rebuilt strip
};

// Stripes a run of `g` covers: about run_bytes per member, and buffers
// (every member's strips) within `buffer_budget` bytes.
uint32_t rebuild_run_stripes(const Geometry& g, uint32_t run_bytes, size_t buffer_budget);

}  // namespace gpuraid
