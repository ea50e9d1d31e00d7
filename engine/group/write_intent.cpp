#include "engine/group/write_intent.h"


#include "engine/group/metadata_io.h"

#include "engine/clock.h"

namespace gpuraid {

WriteIntent::WriteIntent(uint64_t regions, uint64_t region_bytes, uint32_t strip_bytes,
                         std::function<std::vector<Drive*>()> writable)
    : regions_(regions), region_bytes_(region_bytes), strip_(strip_bytes), writable_(std::move(writable)),
      bits_((regions + 7) / 8, 0), inflight_(new std::atomic<uint32_t>[regions]()),
      dirty_(new std::atomic<uint8_t>[regions]()), last_ns_(new std::atomic<uint64_t>[regions]()),
      suspect_(new std::atomic<uint8_t>[regions]()), missed_(new std::atomic<uint8_t>[regions]()) {}

bool WriteIntent::write_block(uint64_t region, std::string* err) {
  const uint64_t block = region / 8 / 4096;
  bool ok = true;
  for (Drive* d : writable_()) {
    std::string e;
    // A member that cannot take its bitmap write is failing; its own I/O
    // errors will fail it. The write goes on while one copy lands.
    if (!write_bitmap_block(*d, bits_.data(), bits_.size(), block, &e)) {
      ok = false;
      if (err) *err = e;
    }
  }
  return ok;
}

void WriteIntent::begin(uint64_t stripe) {
  const uint64_t r = region_of_stripe(stripe);
  inflight_[r].fetch_add(1, std::memory_order_seq_cst);
  if (dirty_[r].load(std::memory_order_seq_cst)) return;
  std::lock_guard<std::mutex> g(mu_);
  if (dirty_[r].load()) return;
  bits_[r / 8] |= uint8_t(1u << (r % 8));
  write_block(r, nullptr);
  dirty_[r].store(1, std::memory_order_seq_cst);
}

void WriteIntent::end(uint64_t stripe) {
  const uint64_t r = region_of_stripe(stripe);
  last_ns_[r].store(mono_ns(), std::memory_order_relaxed);
  // After the member writes, so that a write which skipped a member gone
  // missing meanwhile (tracking is on before that member counts as failed)
  // is recorded; before the count drops, so clear_idle sees it.
  if (tracking_.load(std::memory_order_seq_cst)) missed_[r].store(1, std::memory_order_seq_cst);
  inflight_[r].fetch_sub(1, std::memory_order_seq_cst);
}

size_t WriteIntent::clear_idle(uint64_t idle_ns, const std::function<bool()>& flush) {
  std::lock_guard<std::mutex> g(mu_);
  const uint64_t now = mono_ns();
  std::vector<uint64_t> cleared;
  for (uint64_t r = 0; r < regions_; r++) {
    if (!dirty_[r].load() || suspect_[r].load() || missed_[r].load() || now - last_ns_[r].load() < idle_ns) continue;
    // Dekker-style with begin(): we clear the flag, then look for writers;
    // a writer raises its count, then looks at the flag. One sees the other.
    // A writer marks the region missed before its count drops: looked at again.
    dirty_[r].store(0, std::memory_order_seq_cst);
    if (inflight_[r].load(std::memory_order_seq_cst) || missed_[r].load(std::memory_order_seq_cst)) {
      dirty_[r].store(1, std::memory_order_seq_cst);
      continue;
    }
    cleared.push_back(r);
  }
  if (cleared.empty()) return 0;
  if (!flush()) {  // not durable yet: keep the bits
    for (uint64_t r : cleared) dirty_[r].store(1);
    return 0;
  }
  for (uint64_t r : cleared) bits_[r / 8] &= uint8_t(~(1u << (r % 8)));
  uint64_t last_block = UINT64_MAX;
  for (uint64_t r : cleared) {
    uint64_t b = r / 8 / 4096;
    if (b != last_block) write_block(r, nullptr);
    last_block = b;
  }
  return cleared.size();
}

bool WriteIntent::clear_all(std::string* err) {
  std::lock_guard<std::mutex> g(mu_);
  for (uint64_t r = 0; r < regions_; r++) dirty_[r].store(0);
  std::fill(bits_.begin(), bits_.end(), 0);
  bool ok = true;
  for (uint64_t b = 0; b * 4096 < bits_.size() || b == 0; b++) ok &= write_block(b * 8 * 4096, err);
  return ok;
}

void WriteIntent::set_suspect(const std::vector<uint8_t>& bits) {
  uint64_t n = 0;
  for (uint64_t r = 0; r < regions_; r++) {
    bool s = r / 8 < bits.size() && (bits[r / 8] >> (r % 8) & 1);
    suspect_[r].store(s);
    n += s;
    if (s) {  // stays dirty on disk until resynced and idle
      std::lock_guard<std::mutex> g(mu_);
      bits_[r / 8] |= uint8_t(1u << (r % 8));
      dirty_[r].store(1);
    }
  }
  suspect_count_.store(n);
}

void WriteIntent::region_resynced(uint64_t r) {
  if (suspect_[r].exchange(0)) suspect_count_.fetch_sub(1);
}

uint64_t WriteIntent::missed_regions() const {
  uint64_t n = 0;
  for (uint64_t r = 0; r < regions_; r++) n += missed_[r].load();
  return n;
}

void WriteIntent::clear_missed() {
  for (uint64_t r = 0; r < regions_; r++) missed_[r].store(0, std::memory_order_seq_cst);
}

uint64_t WriteIntent::dirty_regions() const {
  uint64_t n = 0;
  for (uint64_t r = 0; r < regions_; r++) n += dirty_[r].load();
  return n;
}

}  // namespace gpuraid
