// Per-reactor I/O buffers: one 4 KiB-aligned arena, registered with every
// reactor's io_uring as a fixed buffer, carved into power-of-two blocks
// (4 KiB .. 1 MiB) that are recycled through free lists, so the steady
// state allocates nothing. Not thread-safe: only its reactor uses it.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace gpuraid {

class BufferPool {
 public:
  static constexpr uint32_t kMinShift = 12;  // 4 KiB
  static constexpr uint32_t kMaxShift = 20;  // 1 MiB
  explicit BufferPool(size_t arena_bytes);
  ~BufferPool();
  BufferPool(const BufferPool&) = delete;
  BufferPool& operator=(const BufferPool&) = delete;

  uint8_t* base() const { return base_; }
  size_t size() const { return size_; }
  bool contains(const void* p) const {
    return p >= base_ && static_cast<const uint8_t*>(p) < base_ + size_;
  }
  // A block of at least `bytes` (<= 1 MiB), or nullptr when the arena is
  // used up (the caller waits for frees and retries).
  uint8_t* get(uint32_t bytes);
  void put(uint8_t* p, uint32_t bytes);
  // Long-lived allocation from the top of the arena (bench/test request
  // buffers). Reserved space is a stack: take reserved_mark() first, and
  // release_reserved(mark) gives back everything reserved since.
  uint8_t* reserve(size_t bytes);
  size_t reserved_mark() const { return top_; }
  void release_reserved(size_t mark);
  size_t outstanding() const { return outstanding_; }

 private:
  static uint32_t class_of(uint32_t bytes);
  uint8_t* base_ = nullptr;
  size_t size_ = 0;
  size_t bump_ = 0;      // next never-used byte from the bottom
  size_t top_ = 0;       // reserved region starts here
  size_t outstanding_ = 0;
  std::vector<std::vector<uint8_t*>> free_;  // per size class
  // Per 4 KiB page: 1 while a block starting there is handed out. Checks
  // that a block comes back once, whole, and only to the pool it came from.
  std::vector<uint8_t> handed_out_;
};

}  // namespace gpuraid
