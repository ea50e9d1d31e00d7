#include "engine/buffer_pool.h"

#include <sys/mman.h>

#include <bit>
#include <new>

#include "engine/invariant.h"

namespace gpuraid {

BufferPool::BufferPool(size_t arena_bytes) {
  size_ = (arena_bytes + (2u << 20) - 1) & ~size_t((2u << 20) - 1);
  void* p = mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  madvise(p, size_, MADV_HUGEPAGE);  // fewer TLB misses; fine if refused
  base_ = static_cast<uint8_t*>(p);
  top_ = size_;
  free_.resize(kMaxShift - kMinShift + 1);
  // Room for every block of each class, so that a free list never grows on the data path.
  for (uint32_t c = 0; c < free_.size(); c++) free_[c].reserve(size_ >> (c + kMinShift));
  handed_out_.assign(size_ >> kMinShift, 0);
}

BufferPool::~BufferPool() {
  if (base_) munmap(base_, size_);
}

uint32_t BufferPool::class_of(uint32_t bytes) {
  uint32_t shift = std::max<uint32_t>(kMinShift, std::bit_width(std::max<uint32_t>(bytes, 1) - 1));
  return shift - kMinShift;
}

uint8_t* BufferPool::get(uint32_t bytes) {
  GPR_ASSERT(bytes <= (1u << kMaxShift), "buffer of %u bytes asked for (at most %u)", bytes, 1u << kMaxShift);
  uint32_t c = class_of(bytes);
  auto& fl = free_[c];
  uint8_t* p = nullptr;
  if (!fl.empty()) {
    p = fl.back();
    fl.pop_back();
  } else {
    size_t sz = size_t(1) << (c + kMinShift);
    if (bump_ + sz > top_) {
      // Out of fresh space. When nothing is handed out, every block is on
      // some free list: start over so a different size mix can fit.
      if (outstanding_ != 0) return nullptr;
      for (auto& f : free_) f.clear();
      bump_ = 0;
      if (bump_ + sz > top_) return nullptr;
    }
    p = base_ + bump_;
    bump_ += sz;
  }
  outstanding_++;
  handed_out_[size_t(p - base_) >> kMinShift] = 1;
  return p;
}

void BufferPool::put(uint8_t* p, uint32_t bytes) {
  GPR_ASSERT(contains(p) && size_t(p - base_) < bump_, "buffer %p returned to a pool it is not from", (void*)p);
  uint8_t& h = handed_out_[size_t(p - base_) >> kMinShift];
  GPR_ASSERT(h == 1, "buffer %p (%u bytes) returned twice, or never handed out", (void*)p, bytes);
  h = 0;
  free_[class_of(bytes)].push_back(p);
  outstanding_--;
}

uint8_t* BufferPool::reserve(size_t bytes) {
  bytes = (bytes + 4095) & ~size_t(4095);
  if (top_ < bump_ + bytes) return nullptr;
  top_ -= bytes;
  return base_ + top_;
}

void BufferPool::release_reserved(size_t mark) {
  GPR_ASSERT(mark >= top_ && mark <= size_, "reserved space released to %zu (top %zu, arena %zu)", mark, top_, size_);
  top_ = mark;
}

}  // namespace gpuraid
