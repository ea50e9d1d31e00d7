// The layout RAID 50 and RAID 60 share: RAID 0 over G equal parity
// sub-groups (RAID 5 / RAID 6), as md RAID 0 over md RAID 5/6 arrays with
// the RAID 0 chunk one sub-group stripe wide. Stripe s lives in sub-group
// s % G (members [sg*w, sg*w + w), w = n / G), as that sub-group's row
// s / G in the left-symmetric layout of parity_layout.h. A stripe uses only
// its sub-group's members; each sub-group is a failure domain that survives
// losing `parity` of its members.
#pragma once
#include "engine/levels/parity_layout.h"

namespace gpuraid {

class GroupedParityLayout : public LevelLayout {
 public:
  explicit GroupedParityLayout(const LevelDescription& d) : d_(d) {}
  const LevelDescription& description() const override { return d_; }
  uint32_t data_strips(const Geometry& g) const override { return g.group_members() - g.parity; }
  uint32_t data_member(const Geometry& g, uint64_t stripe, uint32_t di, uint32_t) const override {
    const uint32_t w = g.group_members();
    return first_member(g, stripe) + left_symmetric_data(w, g.parity, g.group_row(stripe), di);
  }
  uint32_t parity_member(const Geometry& g, uint64_t stripe, uint32_t j) const override {
    return first_member(g, stripe) + left_symmetric_parity(g.group_members(), g.group_row(stripe), j);
  }
  FailureDomains redundancy(const Geometry& g) const override { return {g.group_members(), g.parity}; }

 private:
  static uint32_t first_member(const Geometry& g, uint64_t stripe) {
    return uint32_t(stripe % g.subgroups) * g.group_members();
  }
  const LevelDescription& d_;
};

}  // namespace gpuraid
