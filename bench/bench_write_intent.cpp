#include "bench/bench_write_intent.h"

#include "engine/engine.h"
#include "engine/group/group.h"
#include "engine/group/superblock.h"
#include "engine/volume.h"

namespace gpuraid {

bool BenchWriteIntent::attach(Engine& e, Volume& vol, std::string* err) {
  const Geometry& g = vol.geometry();
  const uint64_t bytes = g.stripes() * g.strip_bytes;
  uint64_t region = 0;
  if (!WriteIntent::pick_region(GroupConfig{}.bitmap_region_bytes, g.strip_bytes, bytes, &region, err)) return false;
  const uint64_t regions = (bytes + region - 1) / region;
  // The bitmap sits where a member's does (metadata_io.h).
  bitmap_drive_ = Drive::open(DriveSpec{DriveType::Mem, "", kMetadataBytes, true}, err);
  if (!bitmap_drive_) return false;
  Drive* d = bitmap_drive_.get();
  wi_ = std::make_unique<WriteIntent>(regions, region, g.strip_bytes,
                                      [d] { return std::vector<BitmapCopy>{{0, d}}; },
                                      WriteIntent::shards_for(regions, e.reactor_count()));
  enable(vol, true);
  return true;
}

void BenchWriteIntent::enable(Volume& vol, bool on) {
  WriteIntent* wi = wi_.get();
  if (!on || !wi) {
    vol.hooks.write_begin = nullptr;
    vol.hooks.write_end = nullptr;
    return;
  }
  vol.hooks.write_begin = [wi](uint64_t stripe, uint32_t reactor, IntentWait* w) { return wi->begin(stripe, reactor, w); };
  vol.hooks.write_end = [wi](uint64_t stripe, uint32_t reactor) { wi->end(stripe, reactor); };
}

}  // namespace gpuraid
