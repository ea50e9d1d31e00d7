// The write-intent bitmap: one bit per region of member data, set on every
// member before the first write into the region and cleared lazily once
// the region has been idle and its writes are durable. After an unclean
// stop, only regions whose bit is set need their parity recomputed.
//
// Fast path (region already dirty on disk): two atomic operations, no
// lock. Dirtying a region (rare: once per region until it is cleared
// again) never blocks the writer's reactor: the write waits, and the
// bitmap's worker thread writes the block to every member at once (each
// within the metadata time limit, Drive::metadata_timeout_ns), then hands
// the writes that waited for it back to their reactors. Regions asked for
// while a block is being written go out together in the next round.
//
// A member whose bitmap write (or flush) fails is reported to the caller,
// which fails it through the volume: this class never calls into the
// volume's failure paths itself.
#pragma once
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "engine/intent_wait.h"
#include "engine/io/drive.h"
#include "engine/meta_worker.h"

namespace gpuraid {

// A drive the bitmap goes to, and the member it is.
struct BitmapCopy {
  uint32_t member;
  Drive* drive;
};

class WriteIntent {
 public:
  // writable(): the drives the bitmap goes to now (active and rebuilding
  // members). shards: writes in flight are counted per shard, reactor r in
  // shard r % shards, so that reactors writing into the same regions do not
  // pass the counters' cache lines between them at every write (shards_for()).
  WriteIntent(uint64_t regions, uint64_t region_bytes, uint32_t strip_bytes,
              std::function<std::vector<BitmapCopy>()> writable, uint32_t shards = 1);
  // The region size for `want` (a power of two of at least one strip),
  // doubled until the bitmap of member_bytes fits its area on disk.
  static bool pick_region(uint64_t want, uint32_t strip, uint64_t member_bytes, uint64_t* out, std::string* err);
  // One shard per reactor while the counters stay within a memory budget.
  static uint32_t shards_for(uint64_t regions, uint32_t reactors);
  uint64_t regions() const { return regions_; }
  uint64_t region_of_stripe(uint64_t stripe) const {
    // Twice per write: a shift where regions are a power of two of strips (as created).
    return region_shift_ >= 0 ? stripe >> region_shift_ : stripe * strip_ / region_bytes_;
  }
  uint64_t stripes_per_region() const { return region_bytes_ / strip_; }

  // Opens a write into the stripe's region (end() closes it, whatever this
  // returned). True when the region is dirty on disk already; false when
  // its bit must be written first: w->ready(w, failed) runs on the
  // bitmap's worker once it is, with the members whose bitmap write failed
  // (the caller fails them before writing). The region counts as dirty
  // once one copy landed, so it is dirty on every member that is not
  // failed. reactor: the caller's (both calls of one write on the same one).
  bool begin(uint64_t stripe, uint32_t reactor, IntentWait* w);
  // begin() that waits here (control paths, tests): the failed members.
  uint64_t begin_wait(uint64_t stripe, uint32_t reactor = 0);
  // Lockstep engines (deterministic tests): begin() writes the bit itself,
  // so that the run stays a function of its input.
  void set_inline(bool on) { inline_ = on; }
  void end(uint64_t stripe, uint32_t reactor = 0);
  struct ClearResult {
    size_t cleared = 0;   // regions whose bit was cleared on disk
    uint64_t failed = 0;  // members whose flush or bitmap write failed (to be failed)
  };
  // Clears the bits of regions idle for at least idle_ns: flushes the
  // members first (flush() returns those whose flush failed; then nothing
  // is cleared this time), then writes the cleared blocks.
  ClearResult clear_idle(uint64_t idle_ns, const std::function<uint64_t()>& flush);
  // Clean shutdown: every bit cleared (no writes may be in flight) but
  // those of regions still waiting for their resync.
  // Returns the members whose write failed (*why: the first reason).
  uint64_t clear_all(std::string* why);
  // Regions whose parity may be stale (from the on-disk bitmap after an
  // unclean stop), until resynced.
  void set_suspect(const std::vector<uint8_t>& bits);
  bool suspect_stripe(uint64_t stripe) const {
    return suspect_count_.load(std::memory_order_acquire) &&
           suspect_[region_of_stripe(stripe)].load(std::memory_order_acquire);
  }
  bool suspect_region(uint64_t r) const { return suspect_[r].load(); }
  void region_resynced(uint64_t r);
  uint64_t suspect_regions() const { return suspect_count_.load(); }
  uint64_t dirty_regions() const;

  // While a member is missing (set_tracking) or failed
  // (set_tracking_failed), every region written (end()) is also "missed":
  // that member lacks its writes, and its return or re-add rebuilds only
  // those regions. A region missed while a member is missing stays dirty
  // (clear_idle leaves it) until clear_missed() or set_tracking(false), so
  // its bit on disk names it after a crash too; one missed by a failed
  // member only is known in memory (after a restart a re-add is in full),
  // so that a crash long after the writes is not taken for stale parity.
  void set_tracking(bool on);
  void set_tracking_failed(bool on) { tracking_failed_.store(on, std::memory_order_seq_cst); }
  bool tracking() const { return tracking_.load(std::memory_order_seq_cst); }
  bool missed_stripe(uint64_t stripe) const {
    return missed_[region_of_stripe(stripe)].load(std::memory_order_acquire) != kNotMissed;
  }
  uint64_t missed_regions() const;
  void clear_missed();
  uint64_t bitmap_bytes() const { return (regions_ + 7) / 8; }
  // Writes the whole bitmap image as it is now to a drive coming back into
  // the group (its own copy is as old as its failure).
  bool copy_to(Drive& d, std::string* err);

 private:
  struct BlockWrite {
    uint32_t landed = 0;  // copies written
    uint64_t failed = 0;  // members whose copy failed
  };
  // Writes the block holding `region`'s bit to every writable member (at
  // once, each within the metadata time limit). Under mu_.
  BlockWrite write_block(uint64_t region, std::string* why);
  // The worker's round: the regions asked for since the last one.
  void dirty_round();
  uint64_t regions_, region_bytes_;
  uint32_t strip_;
  int region_shift_ = -1;  // log2(stripes per region), or -1
  std::function<std::vector<BitmapCopy>()> writable_;
  std::mutex mu_;                    // serializes bitmap writes
  std::vector<uint8_t> bits_;        // the on-disk image (guarded by mu_)
  // Regions to dirty and the writes waiting for them (under wait_mu_).
  std::mutex wait_mu_;
  std::vector<uint64_t> asked_;
  std::vector<std::pair<uint64_t, IntentWait*>> waiting_;  // region, waiter
  bool round_queued_ = false;
  bool inline_ = false;
  std::atomic<uint32_t>& inflight(uint32_t reactor, uint64_t r) {
    const size_t n = inflight_.size();  // most often one shard per reactor: no division
    return inflight_[reactor < n ? reactor : reactor % n][r];
  }
  bool any_inflight(uint64_t r) const;
  std::vector<std::unique_ptr<std::atomic<uint32_t>[]>> inflight_;  // [shard][region]
  std::unique_ptr<std::atomic<uint8_t>[]> dirty_;  // 1: the bit is set on disk
  // The idle rule's clock, without a clock read per write: end() raises
  // touched_ (a store only when it was down, so that the line stays shared
  // between reactors), clear_idle() turns a raised flag into "written at
  // this scan" in last_ns_ (at most one scan late: a region clears later,
  // never earlier).
  std::unique_ptr<std::atomic<uint8_t>[]> touched_;
  std::unique_ptr<std::atomic<uint64_t>[]> last_ns_;
  std::unique_ptr<std::atomic<uint8_t>[]> suspect_;
  std::atomic<uint64_t> suspect_count_{0};
  std::unique_ptr<std::atomic<uint8_t>[]> missed_;
  std::atomic<bool> tracking_{false};
  std::atomic<bool> tracking_failed_{false};
  // missed_[r]: not missed; missed, known in memory only; missed and kept dirty on disk.
  static constexpr uint8_t kNotMissed = 0, kMissedInMemory = 1, kMissedKeptDirty = 2;
  MetaWorker worker_{"gpuraid-bitmap"};  // last: drained first when this goes
};

}  // namespace gpuraid
