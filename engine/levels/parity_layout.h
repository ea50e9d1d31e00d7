// The layout every parity level shares (raid5, raid6, ec): md's default
// left-symmetric rotation. Parity row 0 starts on the last member and moves
// one member left per stripe; data follows the parity rows, wrapping around.
// For m = 1 this is md's raid5 ALGORITHM_LEFT_SYMMETRIC (pd = n-1 - s%n,
// dd = (pd+1+i)%n); for m = 2 md's raid6 one (qd = pd+1, dd = (pd+2+i)%n).
#pragma once
#include "engine/geometry.h"
#include "engine/levels/level.h"

namespace gpuraid {

class ParityLayout : public LevelLayout {
 public:
  explicit ParityLayout(const LevelDescription& d) : d_(d) {}
  const LevelDescription& description() const override { return d_; }
  uint32_t data_strips(const Geometry& g) const override { return g.members - g.parity; }
  uint32_t data_member(const Geometry& g, uint64_t stripe, uint32_t di, uint32_t) const override {
    return (parity_member(g, stripe, 0) + g.parity + di) % g.members;
  }
  uint32_t parity_member(const Geometry& g, uint64_t stripe, uint32_t j) const override {
    const uint32_t pd = g.members - 1 - uint32_t(stripe % g.members);
    return (pd + j) % g.members;
  }
  // Any `parity` members of the one domain may fail.
  FailureDomains redundancy(const Geometry& g) const override { return {g.members, g.parity}; }

 private:
  const LevelDescription& d_;
};

}  // namespace gpuraid
