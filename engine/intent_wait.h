// A write waiting for the write-intent bitmap (Volume::Hooks::write_begin):
// embedded in the op; the bitmap's worker calls ready() once the region's
// bit is on disk (or could not be written on `failed` members).
#pragma once
#include <cstdint>

namespace gpuraid {

struct IntentWait {
  // Runs on the bitmap's worker thread: it must only hand the write back
  // to its reactor (resume_on_home), never run it there.
  void (*ready)(IntentWait* w, uint64_t failed) = nullptr;
  IntentWait* next = nullptr;
  void* owner = nullptr;  // the waiting op
};

}  // namespace gpuraid
