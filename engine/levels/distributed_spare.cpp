#include "engine/levels/distributed_spare.h"

#include <algorithm>

namespace gpuraid {

int DistributedSpare::index_of(uint32_t member) const {
  auto it = std::find(order_.begin(), order_.end(), member);
  return it == order_.end() ? -1 : int(it - order_.begin());
}

bool DistributedSpare::take(uint32_t member, std::string* err) {
  if (member >= map_->drives()) return *err = "member " + std::to_string(member) + " is not in the group", false;
  if (holds(member)) return *err = "member " + std::to_string(member) + " is in the distributed spare room already", false;
  if (rebuilding_ || leaving_)
    return *err = "member " + std::to_string(order_.back()) + " is still being rebuilt into the distributed spare room",
           false;
  if (!room_left())
    return *err = "the distributed spare room is full (" + std::to_string(order_.size()) + " members in it)", false;
  order_.push_back(member);
  rebuilding_ = true;
  return true;
}

bool DistributedSpare::restore(const std::vector<uint32_t>& order, bool rebuilding, std::string* err) {
  DistributedSpare s(*map_);
  for (uint32_t m : order) {
    if (!s.take(m, err)) return false;
    s.finish_rebuild();
  }
  s.rebuilding_ = rebuilding && !order.empty();
  s.leaving_ = s.old_current_ = false;
  *this = s;
  return true;
}

bool DistributedSpare::leave(bool old_current, std::string* err) {
  if (order_.empty()) return *err = "the distributed spare room holds no member", false;
  if (rebuilding_)
    return *err = "member " + std::to_string(order_.back()) + " is still being rebuilt into the distributed spare room",
           false;
  if (leaving_) return *err = "member " + std::to_string(order_.back()) + " is leaving the room already", false;
  leaving_ = true;
  old_current_ = old_current;
  return true;
}

void DistributedSpare::finish_leave() {
  if (!leaving_) return;
  order_.pop_back();
  leaving_ = old_current_ = false;
}

bool DistributedSpare::rejoin(std::string* err) {
  if (!leaving_) return *err = "no member is leaving the distributed spare room", false;
  leaving_ = old_current_ = false;
  rebuilding_ = true;
  return true;
}

bool DistributedSpare::moved_by_leave(uint32_t member, uint64_t row) const {
  const int j = index_of(member);
  if (j < 0) return false;
  if (size_t(j) + 1 == order_.size()) return true;
  return before_newcomer(size_t(j), row) != map_->spare_for(row, order_, size_t(j));
}

int DistributedSpare::drive_after_leave(uint32_t member, uint64_t row) const {
  const int j = index_of(member);
  if (j < 0) return -1;
  if (size_t(j) + 1 == order_.size()) return map_->holds_stripe_strip(row, member) ? int(member) : -1;
  return before_newcomer(size_t(j), row);
}

int DistributedSpare::drive_of(uint32_t member, uint64_t row) const {
  const int j = index_of(member);
  return j < 0 ? -1 : map_->spare_for(row, order_, size_t(j));
}

int DistributedSpare::before_newcomer(size_t j, uint64_t row) const {
  return map_->spare_for(row, order_.data(), order_.size() - 1, j);
}

uint64_t DistributedSpare::unavailable(uint64_t stripe, uint64_t uncovered, uint64_t checkpoint) const {
  const uint64_t row = map_->row_of(stripe);
  const bool pending = rebuilding_ && stripe >= checkpoint;
  uint64_t out = 0;
  for (size_t j = 0; j < order_.size(); j++) {
    const uint32_t m = order_[j];
    if (!map_->in_stripe(stripe, m)) continue;  // no strip of this stripe to lose
    int at = map_->spare_for(row, order_, j);
    const bool moved = j + 1 == order_.size() || before_newcomer(j, row) != at;
    bool lost = false;
    if (leaving_ && moved) {
      if (stripe < checkpoint) at = j + 1 == order_.size() ? int(m) : before_newcomer(j, row);
      else lost = !old_current_;
    }
    lost = lost || at < 0 || (uncovered >> at & 1);
    if (pending && !lost) lost = moved;
    if (lost) out |= 1ull << m;
  }
  return out;
}

int DistributedSpare::rebuild_target(uint64_t stripe) const {
  if (!rebuilding_ && !leaving_) return -1;
  const uint64_t row = map_->row_of(stripe);
  auto in_stripe = [&](uint32_t m) { return map_->in_stripe(stripe, m); };
  const size_t last = order_.size() - 1;
  if (in_stripe(order_[last])) return int(order_[last]);
  for (size_t j = 0; j < last; j++)
    if (in_stripe(order_[j]) && before_newcomer(j, row) != map_->spare_for(row, order_, j)) return int(order_[j]);
  return -1;
}

}  // namespace gpuraid
