// Discard, TRIM and WRITE_ZEROES for frontends: writes of zeroes through
// the engine, in chunks of up to 1 MiB issued one after another, so that a
// huge discard neither needs a huge buffer nor floods the reactor.
#pragma once
#include <cstdint>

#include "engine/block_target.h"
#include "engine/io_request.h"

namespace gpuraid {

class ZeroFill {
 public:
  static constexpr uint32_t kChunk = 1u << 20;
  // Starts zeroing [offset, offset + len) (4 KiB aligned) on reactor r, the
  // caller's thread. done(ctx, result) runs on r: 0 or -errno. Returns
  // -errno (nothing started, done not called) when the first chunk is refused.
  int start(BlockTarget* t, Reactor& r, uint64_t offset, uint64_t len, bool fua,
            void (*done)(void* ctx, int result), void* ctx);

 private:
  static void chunk_done(IoRequest* req);
  int issue();

  BlockTarget* t_ = nullptr;
  Reactor* r_ = nullptr;
  uint64_t next_ = 0, end_ = 0;
  bool fua_ = false;
  void (*done_)(void*, int) = nullptr;
  void* ctx_ = nullptr;
  IoRequest req_;
};

// A process-wide read-only block of kChunk zero bytes, 4 KiB aligned.
const uint8_t* zero_block();

}  // namespace gpuraid
