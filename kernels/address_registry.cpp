#include "kernels/address_registry.h"

#include <mutex>

namespace gpuraid::kern {

AddressRegistry::Add AddressRegistry::add(void* p, size_t len, Mapper& m) {
  const uint64_t a = reinterpret_cast<uint64_t>(p);
  std::unique_lock lock(mu_);
  auto it = ranges_.find(a);
  if (it != ranges_.end()) {
    if (it->second.len != len) return Add::Overlaps;
    it->second.refs++;
    return Add::Counted;
  }
  auto next = ranges_.lower_bound(a);
  if (next != ranges_.end() && next->first < a + len) return Add::Overlaps;
  if (next != ranges_.begin()) {
    auto prev = std::prev(next);
    if (prev->first + prev->second.len > a) return Add::Overlaps;
  }
  // Mapped under the lock: two threads registering one range must not both map it.
  uint64_t dev = 0;
  if (!m.map(p, len, &dev)) return Add::Refused;
  ranges_.emplace(a, Range{len, dev, 1});
  gen_.fetch_add(1, std::memory_order_release);
  return Add::Added;
}

bool AddressRegistry::remove(void* p, Mapper& m) {
  std::unique_lock lock(mu_);
  auto it = ranges_.find(reinterpret_cast<uint64_t>(p));
  if (it == ranges_.end()) return false;
  if (--it->second.refs == 0) {
    ranges_.erase(it);
    gen_.fetch_add(1, std::memory_order_release);
    m.unmap(p);
  }
  return true;
}

bool AddressRegistry::translate(uint64_t host, size_t len, uint64_t* dev) const {
  std::shared_lock lock(mu_);
  auto it = ranges_.upper_bound(host);
  if (it == ranges_.begin()) return false;
  --it;
  const uint64_t start = it->first;
  if (host + len > start + it->second.len) return false;
  *dev = it->second.dev + (host - start);
  return true;
}

std::vector<AddressRegistry::Entry> AddressRegistry::snapshot() const {
  std::shared_lock lock(mu_);
  std::vector<Entry> v;
  v.reserve(ranges_.size());
  for (auto& [host, r] : ranges_) v.push_back(Entry{host, r.len, r.dev});
  return v;
}

bool AddressView::translate(uint64_t host, size_t len, uint64_t* dev) {
  if (identity_) {
    *dev = host;
    return true;
  }
  const uint64_t g = r_.generation();
  if (g != gen_) {
    // The generation is read before the copy: a change during it makes the
    // next lookup copy again.
    v_ = r_.snapshot();
    gen_ = g;
    last_ = 0;
  }
  auto inside = [&](const AddressRegistry::Entry& e) { return host >= e.host && host + len <= e.host + e.len; };
  if (last_ < v_.size() && inside(v_[last_])) {
    *dev = v_[last_].dev + (host - v_[last_].host);
    return true;
  }
  size_t lo = 0, hi = v_.size();  // first entry starting above host
  while (lo < hi) {
    const size_t mid = (lo + hi) / 2;
    if (v_[mid].host <= host) lo = mid + 1;
    else hi = mid;
  }
  if (lo == 0 || !inside(v_[lo - 1])) return false;
  last_ = lo - 1;
  *dev = v_[last_].dev + (host - v_[last_].host);
  return true;
}

size_t AddressRegistry::ranges() const {
  std::shared_lock lock(mu_);
  return ranges_.size();
}

}  // namespace gpuraid::kern
