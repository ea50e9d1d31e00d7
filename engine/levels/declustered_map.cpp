#include "engine/levels/declustered_map.h"

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>

namespace gpuraid {

namespace {
// splitmix64: a fixed, portable sequence from the seed (the map is on-disk
// format: std::mt19937's distributions are not specified bit for bit).
uint64_t next(uint64_t* s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
}  // namespace

bool DeclusteredMap::make(uint32_t drives, uint32_t data, uint32_t parity, uint32_t min_spares, uint64_t seed,
                          DeclusteredMap* out, std::string* err) {
  const uint32_t w = data + parity;
  if (data < 1 || parity < 1 || parity > 3)
    return *err = "a declustered stripe has 1 or more data strips and 1 to 3 parity strips", false;
  if (drives > kMaxDrives) return *err = "at most " + std::to_string(kMaxDrives) + " drives", false;
  if (min_spares < 1) return *err = "a declustered group keeps at least one spare's room", false;
  if (drives < w + min_spares)
    return *err = std::to_string(drives) + " drives cannot hold a stripe of " + std::to_string(w) + " and " +
                  std::to_string(min_spares) + " spare(s)",
           false;
  DeclusteredMap m;
  m.n_ = drives;
  m.w_ = w;
  m.d_ = data;
  m.k_ = (drives - min_spares) / w;
  m.perm_.resize(size_t(kPermutations) * drives);
  uint64_t s = seed;
  for (uint32_t b = 0; b < kPermutations; b++) {
    uint32_t* p = &m.perm_[size_t(b) * drives];
    for (uint32_t i = 0; i < drives; i++) p[i] = i;
    for (uint32_t i = drives - 1; i > 0; i--) std::swap(p[i], p[next(&s) % (i + 1)]);  // Fisher-Yates
  }
  *out = std::move(m);
  return true;
}

uint64_t DeclusteredMap::seed_of(uint32_t drives, uint32_t data, uint32_t parity, uint32_t min_spares) {
  // "draid" in ASCII, then the shape: on-disk format, never change it.
  return 0x6472616964000000ull ^ (uint64_t(drives) << 24 | uint64_t(data) << 16 | uint64_t(parity) << 8 | min_spares);
}

const DeclusteredMap* DeclusteredMap::shared(uint32_t drives, uint32_t data, uint32_t parity, uint32_t min_spares,
                                             std::string* err) {
  static std::mutex mu;
  static std::map<std::tuple<uint32_t, uint32_t, uint32_t, uint32_t>, std::unique_ptr<DeclusteredMap>> maps;
  std::lock_guard<std::mutex> lk(mu);
  auto& slot = maps[{drives, data, parity, min_spares}];
  if (!slot) {
    auto m = std::make_unique<DeclusteredMap>();
    if (!make(drives, data, parity, min_spares, seed_of(drives, data, parity, min_spares), m.get(), err)) {
      maps.erase({drives, data, parity, min_spares});
      return nullptr;
    }
    slot = std::move(m);
  }
  return slot.get();
}

bool DeclusteredMap::holds_stripe_strip(uint64_t row, uint32_t drive) const {
  for (uint32_t pos = k_ * w_; pos < n_; pos++)  // the fewer: the row's spare strips
    if (at(row, pos) == drive) return false;
  return true;
}

int DeclusteredMap::spare_for(uint64_t row, const uint32_t* failed, size_t n, size_t j) const {
  if (j >= n || n > kMaxDrives) return -1;
  const uint32_t spares = spares_per_row();  // < kMaxDrives: the bits of `taken`
  int at_spare[kMaxDrives];  // the spare strip (index) each failure's strip is on
  std::fill(at_spare, at_spare + n, -1);
  uint64_t taken = 0;
  auto failed_by = [&](uint32_t drive, size_t e) { return std::find(failed, failed + e + 1, drive) != failed + e + 1; };
  auto first_free = [&](size_t e) {
    for (uint32_t i = 0; i < spares; i++)
      if (!(taken >> i & 1) && !failed_by(spare_drive(row, i), e)) {
        taken |= 1ull << i;
        return int(i);
      }
    return -1;
  };
  for (size_t e = 0; e < n; e++) {
    const uint32_t x = failed[e];
    if (holds_stripe_strip(row, x)) {
      at_spare[e] = first_free(e);
      continue;
    }
    for (size_t f = 0; f < e; f++)  // x held a spare strip: the one strip put on it moves
      if (at_spare[f] >= 0 && spare_drive(row, uint32_t(at_spare[f])) == x) {
        at_spare[f] = first_free(e);
        break;
      }
  }
  return at_spare[j] < 0 ? -1 : int(spare_drive(row, uint32_t(at_spare[j])));
}

}  // namespace gpuraid
