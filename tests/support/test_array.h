// Test helpers: an engine with real member drives (mem or file) on real
// io_uring, a volume over them, and synchronous I/O for simple tests.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "engine/volume.h"

namespace gpuraid::test {

struct ArrayOptions {
  Level level = Level::R5;
  uint32_t members = 4;
  uint32_t parity = 0;          // ec only
  uint32_t subgroups = 0;       // raid50/60 only
  DeclusteredShape declustered; // draid5/6 only
  uint32_t strip = 64 * 1024;
  uint64_t member_bytes = 8u << 20;
  uint64_t data_offset = 0;
  DriveType drive_type = DriveType::Mem;
  uint32_t reactors = 1;
  size_t arena_bytes = 32u << 20;
  std::function<std::unique_ptr<ParityBackend>()> parity_factory;
  uint32_t ops_per_reactor = 1024;
  bool lockstep = false;        // EngineConfig::lockstep: deterministic runs
  uint32_t write_gather_us = 1000;  // EngineConfig::write_gather_us
};

class TestArray {
 public:
  explicit TestArray(const ArrayOptions& o);
  ~TestArray();
  Engine& engine() { return *engine_; }
  Volume& vol() { return *vol_; }
  Drive& drive(uint32_t i) { return *drives_[i]; }
  Reactor& reactor(uint32_t i = 0) { return engine_->reactor(i); }
  std::vector<uint32_t> failed_events;  // members reported failed, in order
  bool group_failed_event = false;

  // Synchronous I/O on reactor 0: submits and polls until done. Returns the
  // request result (or the submit error).
  int io(IoRequest::Op op, uint64_t off, uint64_t len, uint8_t* buf, bool fua = false);
  int write(uint64_t off, uint64_t len, uint8_t* buf) { return io(IoRequest::Write, off, len, buf); }
  int read(uint64_t off, uint64_t len, uint8_t* buf) { return io(IoRequest::Read, off, len, buf); }
  int flush() { return io(IoRequest::Flush, 0, 0, nullptr); }
  // Reads raw bytes of a member (bypassing the engine), for layout checks.
  std::vector<uint8_t> member_bytes(uint32_t m, uint64_t off, uint64_t len);

 private:
  std::string dir_;
  std::unique_ptr<Engine> engine_;
  std::vector<std::unique_ptr<Drive>> drives_;
  std::unique_ptr<Volume> vol_;
};

// 4 KiB-aligned buffer.
struct AlignedBuf {
  explicit AlignedBuf(size_t n);
  ~AlignedBuf();
  AlignedBuf(const AlignedBuf&) = delete;
  AlignedBuf& operator=(const AlignedBuf&) = delete;
  AlignedBuf(AlignedBuf&& o) noexcept : p(o.p), n(o.n) { o.p = nullptr; }
  uint8_t* data() { return p; }
  const uint8_t* data() const { return p; }
  size_t size() const { return n; }
  uint8_t* p;
  size_t n;
};

void fill_random(uint8_t* p, size_t n, uint64_t seed);

}  // namespace gpuraid::test
