// The layout every parity level shares (raid5, raid6, ec): md's default
// left-symmetric rotation. Parity row 0 starts on the last member and moves
// one member left per stripe; data follows the parity rows, wrapping around.
// For m = 1 this is md's raid5 ALGORITHM_LEFT_SYMMETRIC (pd = n-1 - s%n,
// dd = (pd+1+i)%n); for m = 2 md's raid6 one (qd = pd+1, dd = (pd+2+i)%n).
#pragma once
#include "engine/geometry.h"
#include "engine/levels/level.h"

namespace gpuraid {

// Left-symmetric over `width` members, in row `row`: the member (0..width-1)
// of parity row j, and of data strip di behind `parity` parity rows.
// (pd + j < 2 * width: a subtraction instead of a second division.)
inline uint32_t left_symmetric_parity(uint32_t width, uint64_t row, uint32_t j) {
  const uint32_t x = width - 1 - uint32_t(row % width) + j;
  return x >= width ? x - width : x;
}
inline uint32_t left_symmetric_data(uint32_t width, uint32_t parity, uint64_t row, uint32_t di) {
  return left_symmetric_parity(width, row, parity + di);
}

class ParityLayout : public LevelLayout {
 public:
  explicit ParityLayout(const LevelDescription& d) : d_(d) {}
  const LevelDescription& description() const override { return d_; }
  uint32_t data_strips(const Geometry& g) const override { return g.members - g.parity; }
  uint32_t data_member(const Geometry& g, uint64_t stripe, uint32_t di, uint32_t) const override {
    return left_symmetric_data(g.members, g.parity, stripe, di);
  }
  uint32_t parity_member(const Geometry& g, uint64_t stripe, uint32_t j) const override {
    return left_symmetric_parity(g.members, stripe, j);
  }
  // Any `parity` members of the one domain may fail.
  FailureDomains redundancy(const Geometry& g) const override { return {g.members, g.parity}; }

 private:
  const LevelDescription& d_;
};

}  // namespace gpuraid
