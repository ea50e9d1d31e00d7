#include "bench/parity/stripe_buffers.h"

#include <sys/mman.h>

#include <cstdlib>
#include <cstring>
#include <new>

namespace gpuraid::parity_bench {

const std::vector<Mode>& all_modes() {
  // As in shared/notes/parity.md: 256 KiB of data in one stripe (L2), and
  // 64 MiB / 512 MiB in 64 KiB strips walked in order (DRAM).
  static const std::vector<Mode> modes = {
      {"L2", 256u << 10, 0}, {"64M", 64u << 20, 64u << 10}, {"512M", 512u << 20, 64u << 10}};
  return modes;
}

AlignedBuffer::AlignedBuffer(size_t bytes) : p(nullptr, free) {
  constexpr size_t kAlign = 2u << 20;
  const size_t n = (bytes + kAlign - 1) / kAlign * kAlign;
  p.reset(static_cast<uint8_t*>(aligned_alloc(kAlign, n)));
  if (!p) throw std::bad_alloc();
  madvise(p.get(), n, MADV_HUGEPAGE);
  for (size_t i = 0; i < n; i += 64) p.get()[i] = uint8_t(i * 2654435761u >> 24);  // pre-fault, non-zero
}

StripeBuffers::StripeBuffers(const Mode& mode, uint32_t k, uint32_t m)
    : k_(k), m_(m), strip_(mode.strip_for(k)), stripes_(mode.data_bytes / (size_t(k) * strip_)),
      data_(stripes_ * k * size_t(strip_)), parity_(stripes_ * m * size_t(strip_)),
      spare_(stripes_ * m * size_t(strip_)) {}

std::vector<uint8_t*> StripeBuffers::rows(size_t stripe) const {
  std::vector<uint8_t*> v;
  for (uint32_t i = 0; i < k_; i++) v.push_back(data(stripe, i));
  for (uint32_t r = 0; r < m_; r++) v.push_back(parity(stripe, r));
  return v;
}

}  // namespace gpuraid::parity_bench
