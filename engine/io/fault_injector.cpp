#include "engine/io/fault_injector.h"

#include <cerrno>

namespace gpuraid {

uint32_t FaultInjector::modes_now() {
  uint32_t c = countdown_.load(std::memory_order_relaxed);
  while (c > 0) {
    if (countdown_.compare_exchange_weak(c, c - 1)) {
      if (c == 1) modes_.fetch_or(pending_modes_.load());
      break;
    }
  }
  return modes_.load(std::memory_order_relaxed);
}

bool FaultInjector::meets_unreadable(bool is_write, uint32_t m, uint64_t off, uint64_t len) {
  const uint64_t bad_len = bad_len_.load();
  if (!bad_len) return false;
  const uint64_t bad = bad_off_.load();
  if (!is_write) return off < bad + bad_len && bad < off + len && !(m & kFailReads);
  if (!(m & (kFailWrites | kDropPlainWrites)) && off <= bad && bad + bad_len <= off + len)
    bad_len_.store(0);  // written over: readable again
  return false;
}

FaultInjector::Action FaultInjector::on_issue(bool is_write, bool fua, uint64_t off, uint64_t len) {
  uint32_t m = modes_now();
  if (m & kVanished) return Action::FailNoDev;
  if (meets_unreadable(is_write, m, off, len)) return Action::FailMedium;
  if ((m & kFailReads) && !is_write) return Action::FailEio;
  if ((m & kFailWrites) && is_write) return Action::FailEio;
  if ((m & kDropPlainWrites) && is_write && !fua) return Action::Drop;
  if (m & kShortTransfer) return Action::Shorten;
  return Action::Issue;
}

int FaultInjector::on_complete(bool is_write, int res) {
  uint32_t m = modes_.load(std::memory_order_relaxed);
  if (m & kVanished) return -ENODEV;
  if ((m & kFailReads) && !is_write) return -EIO;
  if ((m & kFailWrites) && is_write) return -EIO;
  return res;  // (a dropped write completes as it was reported: done)
}

int FaultInjector::on_sync(SyncKind k, uint64_t off, uint64_t len) {
  const uint32_t m = modes_now();
  if (m & kVanished) return -ENODEV;
  switch (k) {
    case SyncKind::Read:
      if (meets_unreadable(false, m, off, len)) return -ENODATA;
      return m & (kFailReads | kShortTransfer) ? -EIO : 0;
    case SyncKind::Write:
      if (m & (kFailWrites | kFailSyncWrites | kShortTransfer)) return -EIO;
      meets_unreadable(true, m, off, len);
      return 0;
    case SyncKind::Flush: return m & (kFailWrites | kFailSyncFlushes) ? -EIO : 0;
  }
  return 0;
}

}  // namespace gpuraid
