#include "daemon/frontends/nbd_share.h"

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>

#include "engine/reactor.h"

namespace gpuraid {

NbdShare& NbdShare::of(Reactor& r) {
  static std::mutex mu;
  static std::map<const Reactor*, std::unique_ptr<NbdShare>> shares;
  std::lock_guard<std::mutex> g(mu);
  auto& s = shares[&r];
  if (!s) s = std::make_unique<NbdShare>(r.pool().size() / 2);
  return *s;
}

uint64_t NbdShare::share(uint64_t cap) const { return std::min<uint64_t>(cap, budget_ / std::max(conns_, 1u)); }

NbdShare::Verdict NbdShare::admit(uint64_t held, uint64_t len, uint64_t cap) const {
  if (held == 0) return kAdmit;  // one request always: every client makes progress
  if (held + len > share(cap)) return kOverShare;
  if (held_ + len > budget_) return kBudgetFull;
  return kAdmit;
}

}  // namespace gpuraid
