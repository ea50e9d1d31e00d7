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
  if (drives > 64) return *err = "at most 64 drives", false;
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

int DeclusteredMap::spare_for(uint64_t row, const std::vector<uint32_t>& failed, size_t j) const {
  auto holds_stripe_strip = [&](uint32_t drive) {
    for (uint32_t pos = 0; pos < k_ * w_; pos++)
      if (at(row, pos) == drive) return true;
    return false;
  };
  auto is_failed = [&](uint32_t drive) { return std::find(failed.begin(), failed.end(), drive) != failed.end(); };
  // Spare strips in order, each to the first failure (in failure order) that needs one.
  uint32_t next_spare = 0;
  for (size_t f = 0; f <= j && f < failed.size(); f++) {
    if (!holds_stripe_strip(failed[f])) {
      if (f == j) return -1;
      continue;
    }
    while (next_spare < spares_per_row() && is_failed(spare_drive(row, next_spare))) next_spare++;
    if (next_spare == spares_per_row()) return -1;
    if (f == j) return int(spare_drive(row, next_spare));
    next_spare++;
  }
  return -1;
}

}  // namespace gpuraid
