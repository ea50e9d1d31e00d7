// Which stripes have had a log entry with partial parity in this run of the
// group (docs/ON-DISK.md "Write-hole guard", full-stripe writes): the set
// that decides whether a full-stripe write of a one-parity-row group must
// log its (payload-free) entry to supersede an older one.
//
// Conservative by construction: a stripe is marked before its entry is
// written and never unmarked in the run (an entry stays replayable until the
// ring overwrites it, which nothing here tracks), and where the set would
// pass its memory cap one bit stands for several neighbouring stripes. So a
// stripe reads unmarked only if no entry with partial parity was ever made
// for it this run; the replay ignores earlier runs' entries (the floor).
//
// Any thread: a stripe's writes are ordered by its stripe lock (acquire and
// release), so a mark made under one holder is seen by the next; relaxed
// atomics suffice for the bits themselves.
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>

namespace gpuraid {

class PplPartialStripes {
 public:
  // At most max_bits bits (a power of two): 2^25 bits, 4 MiB, by default.
  explicit PplPartialStripes(uint64_t stripes, uint64_t max_bits = uint64_t(1) << 25) {
    while ((stripes >> shift_) > max_bits) shift_++;
    words_ = ((stripes >> shift_) + 64) / 64;
    bits_.reset(new std::atomic<uint64_t>[words_]());
  }

  void mark(uint64_t stripe) {
    const uint64_t b = stripe >> shift_;
    std::atomic<uint64_t>& w = bits_[word(b)];
    const uint64_t bit = uint64_t(1) << (b & 63);
    // Read first: the common case (marked already) writes no shared line.
    if (!(w.load(std::memory_order_relaxed) & bit)) w.fetch_or(bit, std::memory_order_relaxed);
  }
  bool marked(uint64_t stripe) const {
    const uint64_t b = stripe >> shift_;
    return bits_[word(b)].load(std::memory_order_relaxed) >> (b & 63) & 1;
  }
  // Stripes per bit (1 below the cap).
  uint64_t stripes_per_bit() const { return uint64_t(1) << shift_; }

 private:
  // Past the end (a stripe beyond the count given): the last word, which
  // only errs towards logging.
  uint64_t word(uint64_t b) const { return b / 64 < words_ ? b / 64 : words_ - 1; }

  uint32_t shift_ = 0;
  uint64_t words_ = 0;
  std::unique_ptr<std::atomic<uint64_t>[]> bits_;
};

}  // namespace gpuraid
