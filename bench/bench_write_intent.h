// --write-intent: the RAID side's writes take the write-intent bitmap, as a
// drive group's do (its default 64 MiB regions, counters per reactor), so
// that the figure includes what every daemon write pays for it.
#pragma once
#include <memory>
#include <string>

#include "engine/group/write_intent.h"

namespace gpuraid {

class Engine;
class Volume;

class BenchWriteIntent {
 public:
  // Hooks the bitmap into vol's writes. Its blocks go to a mem drive of the
  // bench's own, not to the members (null drives hold no metadata, and
  // the bench's members have no metadata area): a region is dirtied once,
  // then every write takes the fast path, which is what is measured.
  bool attach(Engine& e, Volume& vol, std::string* err);
  // Hooks it into vol's writes or takes it out (between runs: nothing in flight).
  void enable(Volume& vol, bool on);
  uint64_t dirty_regions() const { return wi_ ? wi_->dirty_regions() : 0; }

 private:
  std::unique_ptr<Drive> bitmap_drive_;
  std::unique_ptr<WriteIntent> wi_;
};

}  // namespace gpuraid
