#include "engine/group/write_intent.h"

#include <algorithm>
#include <bit>
#include <condition_variable>
#include <cstring>

#include "engine/group/metadata_io.h"

#include "engine/clock.h"

namespace gpuraid {

// The in-flight counters of all shards together stay under this.
constexpr uint64_t kInflightBudgetBytes = 64ull << 20;

bool WriteIntent::pick_region(uint64_t want, uint32_t strip, uint64_t member_bytes, uint64_t* out,
                              std::string* err) {
  if (want < strip || (want & (want - 1))) {
    if (err) *err = "bitmap region must be a power of two of at least one strip (" + std::to_string(strip) + " bytes)";
    return false;
  }
  while ((member_bytes + want - 1) / want > kBitmapMaxBytes * 8) want *= 2;
  *out = want;
  return true;
}

uint32_t WriteIntent::shards_for(uint64_t regions, uint32_t reactors) {
  const uint64_t fit = kInflightBudgetBytes / (std::max<uint64_t>(regions, 1) * sizeof(uint32_t));
  return uint32_t(std::clamp<uint64_t>(fit, 1, std::max<uint32_t>(reactors, 1)));
}

WriteIntent::WriteIntent(uint64_t regions, uint64_t region_bytes, uint32_t strip_bytes,
                         std::function<std::vector<BitmapCopy>()> writable, uint32_t shards)
    : regions_(regions), region_bytes_(region_bytes), strip_(strip_bytes), writable_(std::move(writable)),
      bits_((regions + 7) / 8, 0),
      dirty_(new std::atomic<uint8_t>[regions]()), touched_(new std::atomic<uint8_t>[regions]()),
      last_ns_(new std::atomic<uint64_t>[regions]()),
      suspect_(new std::atomic<uint8_t>[regions]()), missed_(new std::atomic<uint8_t>[regions]()) {
  if (region_bytes % strip_bytes == 0 && std::has_single_bit(region_bytes / strip_bytes))
    region_shift_ = std::countr_zero(region_bytes / strip_bytes);
  // Each shard its own allocation, padded by a cache line so that no two
  // shards share one.
  constexpr size_t kPad = 64 / sizeof(std::atomic<uint32_t>);
  for (uint32_t s = 0; s < std::max<uint32_t>(shards, 1); s++)
    inflight_.emplace_back(new std::atomic<uint32_t>[regions + kPad]());
}

bool WriteIntent::any_inflight(uint64_t r) const {
  uint32_t n = 0;  // a write may end on another shard than it began: the sum counts
  for (const auto& s : inflight_) n += s[r].load(std::memory_order_seq_cst);
  return n != 0;
}

WriteIntent::BlockWrite WriteIntent::write_block(uint64_t region, std::string* why) {
  const uint64_t block = region / 8 / 4096;
  const std::vector<BitmapCopy> to = writable_();
  // Every member's write and flush at once, on their own lanes: one slow
  // or hung member costs the round one time limit, not one per member.
  std::vector<MetaLane::Ticket> t(to.size());
  const uint64_t off = block * 4096;
  uint8_t img[4096] = {};
  if (off < bits_.size()) memcpy(img, bits_.data() + off, std::min<uint64_t>(4096, bits_.size() - off));
  for (size_t i = 0; i < to.size(); i++)
    if (MetaLane* lane = to[i].drive->meta_lane())
      t[i] = lane->submit([off](const MetaTarget& d, uint8_t* b) {
        const int r = d.write(b, 4096, kBitmapOffset + off);
        return r ? r : d.flush();
      }, 4096, img);
  const uint64_t deadline = MetaLane::deadline_after(Drive::metadata_timeout_ns());
  BlockWrite w;
  for (size_t i = 0; i < to.size(); i++) {
    const int r = t[i] ? to[i].drive->meta_lane()->wait(t[i], deadline) : -EBADF;
    if (r == 0) {
      w.landed++;
      continue;
    }
    if (why && why->empty())
      *why = "member " + std::to_string(to[i].member) + ": cannot write the write-intent bitmap of " +
             to[i].drive->path() + ": " + strerror(-r);
    w.failed |= 1ull << to[i].member;
  }
  return w;
}

bool WriteIntent::begin(uint64_t stripe, uint32_t reactor, IntentWait* w) {
  const uint64_t r = region_of_stripe(stripe);
  inflight(reactor, r).fetch_add(1, std::memory_order_seq_cst);
  if (dirty_[r].load(std::memory_order_seq_cst)) return true;
  bool post = false;
  {
    std::lock_guard<std::mutex> g(wait_mu_);
    // The round marks regions dirty before it takes their waiters (under
    // wait_mu_): seen dirty here, or this waiter is taken by that round.
    if (dirty_[r].load(std::memory_order_seq_cst)) return true;
    asked_.push_back(r);
    waiting_.emplace_back(r, w);
    post = !round_queued_;
    round_queued_ = true;
  }
  if (post && inline_) dirty_round();
  else if (post) worker_.post([this] { dirty_round(); });
  return false;
}

void WriteIntent::dirty_round() {
  std::vector<uint64_t> regions;
  {
    std::lock_guard<std::mutex> g(wait_mu_);
    round_queued_ = false;
    regions.swap(asked_);
  }
  std::sort(regions.begin(), regions.end());
  regions.erase(std::unique(regions.begin(), regions.end()), regions.end());
  std::vector<std::pair<uint64_t, uint64_t>> result;  // region, members failed
  {
    std::lock_guard<std::mutex> g(mu_);
    for (uint64_t r : regions) bits_[r / 8] |= uint8_t(1u << (r % 8));
    // One write per bitmap block (a block covers 32768 regions).
    for (size_t i = 0; i < regions.size();) {
      const uint64_t block = regions[i] / 8 / 4096;
      size_t j = i;
      while (j < regions.size() && regions[j] / 8 / 4096 == block) j++;
      bool all_dirty = true;  // asked twice, dirtied by the first round: nothing to write
      for (size_t x = i; x < j; x++) all_dirty &= dirty_[regions[x]].load() != 0;
      const BlockWrite w = all_dirty ? BlockWrite{1, 0} : write_block(regions[i], nullptr);
      for (size_t x = i; x < j; x++) {
        // With no copy landed (no writable member left) the next writer tries again.
        if (w.landed) dirty_[regions[x]].store(1, std::memory_order_seq_cst);
        result.emplace_back(regions[x], w.failed);
      }
      i = j;
    }
  }
  std::vector<std::pair<IntentWait*, uint64_t>> ready;
  {
    std::lock_guard<std::mutex> g(wait_mu_);
    for (auto it = waiting_.begin(); it != waiting_.end();) {
      auto hit = std::lower_bound(result.begin(), result.end(), std::make_pair(it->first, uint64_t(0)),
                                  [](const auto& a, const auto& b) { return a.first < b.first; });
      if (hit == result.end() || hit->first != it->first) {
        ++it;
        continue;
      }
      ready.emplace_back(it->second, hit->second);
      it = waiting_.erase(it);
    }
  }
  for (auto& [w, failed] : ready) w->ready(w, failed);
}

uint64_t WriteIntent::begin_wait(uint64_t stripe, uint32_t reactor) {
  struct Wait : IntentWait {
    std::mutex mu;
    std::condition_variable cv;
    bool done = false;
    uint64_t failed = 0;
  } w;
  w.ready = [](IntentWait* iw, uint64_t failed) {
    auto* x = static_cast<Wait*>(iw);
    std::lock_guard<std::mutex> l(x->mu);
    x->failed = failed;
    x->done = true;
    x->cv.notify_all();
  };
  if (begin(stripe, reactor, &w)) return 0;
  std::unique_lock<std::mutex> l(w.mu);
  w.cv.wait(l, [&] { return w.done; });
  return w.failed;
}

void WriteIntent::end(uint64_t stripe, uint32_t reactor) {
  const uint64_t r = region_of_stripe(stripe);
  // For the idle rule only (seconds): clear_idle() dates it.
  if (!touched_[r].load(std::memory_order_relaxed)) touched_[r].store(1, std::memory_order_relaxed);
  // After the member writes, so that a write which skipped a member gone
  // missing meanwhile (tracking is on before that member counts as failed)
  // is recorded; before the count drops, so clear_idle sees it.
  if (tracking_.load(std::memory_order_seq_cst)) {
    missed_[r].store(kMissedKeptDirty, std::memory_order_seq_cst);
  } else if (tracking_failed_.load(std::memory_order_seq_cst)) {
    uint8_t none = kNotMissed;
    missed_[r].compare_exchange_strong(none, kMissedInMemory, std::memory_order_seq_cst);
  }
  inflight(reactor, r).fetch_sub(1, std::memory_order_seq_cst);
}

WriteIntent::ClearResult WriteIntent::clear_idle(uint64_t idle_ns, const std::function<uint64_t()>& flush) {
  std::lock_guard<std::mutex> g(mu_);
  const uint64_t now = mono_ns();
  std::vector<uint64_t> cleared;
  for (uint64_t r = 0; r < regions_; r++) {
    if (touched_[r].load(std::memory_order_relaxed) && touched_[r].exchange(0, std::memory_order_relaxed))
      last_ns_[r].store(now, std::memory_order_relaxed);
    if (!dirty_[r].load() || suspect_[r].load() || missed_[r].load() == kMissedKeptDirty ||
        now - last_ns_[r].load() < idle_ns)
      continue;
    // Dekker-style with begin(): we clear the flag, then look for writers;
    // a writer raises its count, then looks at the flag. One sees the other.
    // A writer marks the region missed before its count drops: looked at again.
    dirty_[r].store(0, std::memory_order_seq_cst);
    if (any_inflight(r) ||
        missed_[r].load(std::memory_order_seq_cst) == kMissedKeptDirty) {
      dirty_[r].store(1, std::memory_order_seq_cst);
      continue;
    }
    cleared.push_back(r);
  }
  ClearResult res;
  if (cleared.empty()) return res;
  if ((res.failed = flush())) {  // not durable on those members: keep the bits until they are failed
    for (uint64_t r : cleared) dirty_[r].store(1);
    return res;
  }
  for (uint64_t r : cleared) bits_[r / 8] &= uint8_t(~(1u << (r % 8)));
  // A member whose clearing write fails may keep set bits (harmless: an
  // extra resync) or hold a torn block; it is failing and gets failed.
  uint64_t last_block = UINT64_MAX;
  for (uint64_t r : cleared) {
    uint64_t b = r / 8 / 4096;
    if (b != last_block) res.failed |= write_block(r, nullptr).failed;
    last_block = b;
  }
  res.cleared = cleared.size();
  return res;
}

uint64_t WriteIntent::clear_all(std::string* why) {
  std::lock_guard<std::mutex> g(mu_);
  std::fill(bits_.begin(), bits_.end(), 0);
  for (uint64_t r = 0; r < regions_; r++) {
    const bool keep = suspect_[r].load();  // still waits for its resync
    dirty_[r].store(keep);
    if (keep) bits_[r / 8] |= uint8_t(1u << (r % 8));
  }
  uint64_t failed = 0;
  for (uint64_t b = 0; b * 4096 < bits_.size() || b == 0; b++) failed |= write_block(b * 8 * 4096, why).failed;
  return failed;
}

bool WriteIntent::copy_to(Drive& d, std::string* err) {
  std::lock_guard<std::mutex> g(mu_);
  for (uint64_t b = 0; b * 4096 < bits_.size() || b == 0; b++)
    if (!write_bitmap_block(d, bits_.data(), bits_.size(), b, err)) return false;
  return true;
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
  for (uint64_t r = 0; r < regions_; r++) n += missed_[r].load() != kNotMissed;
  return n;
}

void WriteIntent::set_tracking(bool on) {
  tracking_.store(on, std::memory_order_seq_cst);
  if (on) return;
  // Nobody missing: what is still missed (by a failed member) is known in
  // memory only, and its bits may clear once idle.
  for (uint64_t r = 0; r < regions_; r++) {
    uint8_t kept = kMissedKeptDirty;
    missed_[r].compare_exchange_strong(kept, kMissedInMemory, std::memory_order_seq_cst);
  }
}

void WriteIntent::clear_missed() {
  for (uint64_t r = 0; r < regions_; r++) missed_[r].store(kNotMissed, std::memory_order_seq_cst);
}

uint64_t WriteIntent::dirty_regions() const {
  uint64_t n = 0;
  for (uint64_t r = 0; r < regions_; r++) n += dirty_[r].load();
  return n;
}

}  // namespace gpuraid
