// Buffers for the parity micro-benchmarks: `stripes` stripes of k data and
// m parity strips, laid out one stripe after another, allocated 2 MiB-
// aligned, hugepage-advised and pre-faulted (so page faults are not timed).
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace gpuraid::parity_bench {

// Where the data lives: one cache-resident stripe, or many in DRAM.
struct Mode {
  std::string name;      // "L2", "64M", "512M"
  size_t data_bytes;     // data of all stripes together
  uint32_t strip_bytes;  // 0: one stripe, strip = data_bytes / k (L2 mode)
  uint32_t strip_for(uint32_t k) const { return strip_bytes ? strip_bytes : uint32_t(data_bytes / k / 64 * 64); }
};
const std::vector<Mode>& all_modes();

struct AlignedBuffer {
  explicit AlignedBuffer(size_t bytes);
  uint8_t* data() const { return p.get(); }
  std::unique_ptr<uint8_t, void (*)(void*)> p;
};

class StripeBuffers {
 public:
  StripeBuffers(const Mode& mode, uint32_t k, uint32_t m);
  uint32_t k() const { return k_; }
  uint32_t m() const { return m_; }
  uint32_t strip() const { return strip_; }
  size_t stripes() const { return stripes_; }
  uint8_t* data(size_t stripe, uint32_t i) const { return data_.data() + (stripe * k_ + i) * size_t(strip_); }
  uint8_t* parity(size_t stripe, uint32_t r) const { return parity_.data() + (stripe * m_ + r) * size_t(strip_); }
  uint8_t* spare(size_t stripe, uint32_t i) const { return spare_.data() + (stripe * m_ + i) * size_t(strip_); }
  // Pointers of one stripe: data 0..k-1, then parity 0..m-1.
  std::vector<uint8_t*> rows(size_t stripe) const;

 private:
  uint32_t k_, m_, strip_;
  size_t stripes_;
  AlignedBuffer data_, parity_, spare_;  // spare: m strips per stripe (decode output, update deltas)
};

}  // namespace gpuraid::parity_bench
