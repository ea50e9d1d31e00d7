// Injects the member faults a real drive cannot be made to produce on
// demand: EIO on read or write, short transfers, added latency, vanishing,
// an unreadable range (a medium error).
// Armed by tests and the bench; consulted by the reactor when it issues a
// member I/O and again when it completes (so a fault armed while an I/O is
// in flight hits it too), and by the drive's synchronous path (metadata:
// superblocks, bitmap, the flushes before checkpoints; see on_sync). All
// fields are atomics: any thread may arm.
#pragma once
#include <atomic>
#include <cstdint>

namespace gpuraid {

class FaultInjector {
 public:
  enum Mode : uint32_t {
    kNone = 0,
    kFailReads = 1u << 0,      // reads complete with -EIO, no I/O done
    kFailWrites = 1u << 1,     // writes complete with -EIO, no I/O done
    kShortTransfer = 1u << 2,  // the I/O moves 4 KiB less than asked
    kVanished = 1u << 3,       // every I/O fails with -ENODEV
    // The synchronous path alone (Drive::sync_write / sync_flush), so that a
    // metadata write can fail while the member's data I/O still works.
    kFailSyncWrites = 1u << 4,   // sync writes fail with -EIO, nothing written
    kFailSyncFlushes = 1u << 5,  // sync flushes fail with -EIO
    // Writes without FUA report success but write nothing; FUA writes (the
    // write-hole guard's log entries) land: what a crash between a stripe's
    // log and its data/parity writes leaves (a torn stripe, on purpose).
    kDropPlainWrites = 1u << 6,
    // Synchronous writes and flushes (metadata) never answer until this is
    // disarmed: a device behind a lost path, a hung controller. The data
    // path is untouched. (Drive's metadata lane gives up on them after its
    // time limit; see meta_lane.h.)
    kHangSyncWrites = 1u << 7,
  };
  enum class SyncKind { Read, Write, Flush };
  enum class Action { Issue, FailEio, FailNoDev, FailMedium, Shorten, Drop };

  void arm(uint32_t modes) { modes_.fetch_or(modes); }
  void set_latency_us(uint32_t us) { latency_us_.store(us); }
  // Arms `modes` after `n` more member I/Os have been issued (mid-request
  // failure); synchronous ones count too.
  void arm_after(uint32_t n, uint32_t modes) {
    pending_modes_.store(modes);
    countdown_.store(n + 1);
  }
  // Reads overlapping [off, off + len) of the drive fail with -ENODATA
  // (BLK_STS_MEDIUM: what the block layer reports for an NVMe Unrecovered
  // Read Error) until a write covers the range, as a drive remaps a
  // sector it cannot read once it is written. len 0: none.
  void set_unreadable(uint64_t off, uint64_t len) {
    bad_off_.store(off);
    bad_len_.store(len);
  }
  bool unreadable() const { return bad_len_.load(std::memory_order_relaxed) != 0; }
  void clear() {
    bad_len_.store(0);
    modes_.store(0);
    pending_modes_.store(0);
    countdown_.store(0);
    latency_us_.store(0);
  }
  bool active() const {
    return modes_.load(std::memory_order_relaxed) || countdown_.load(std::memory_order_relaxed) ||
           latency_us_.load(std::memory_order_relaxed) || bad_len_.load(std::memory_order_relaxed);
  }
  uint32_t latency_us() const { return latency_us_.load(std::memory_order_relaxed); }

  // At issue time: what to do with this I/O of len bytes at off.
  Action on_issue(bool is_write, bool fua, uint64_t off = 0, uint64_t len = 0);
  // At completion: the result to report instead of `res` (which it returns
  // unchanged unless a fault is armed now).
  int on_complete(bool is_write, int res);
  // Whether a synchronous I/O of kind k must hang now (kHangSyncWrites).
  bool hangs(SyncKind k) const {
    return k != SyncKind::Read && (modes_.load(std::memory_order_relaxed) & kHangSyncWrites);
  }
  void disarm(uint32_t modes) { modes_.fetch_and(~modes); }
  // Synchronous I/Os waiting in a hang now (tests wait for one to begin).
  uint32_t hanging() const { return hanging_.load(); }
  void hang_begins() { hanging_.fetch_add(1); }
  void hang_ends() { hanging_.fetch_sub(1); }
  // A synchronous I/O of len bytes at off (no latency added): 0 to do it,
  // or the error to return instead (a short transfer there is -EIO, as
  // Drive reports it; a read of the unreadable range -ENODATA).
  int on_sync(SyncKind k, uint64_t off = 0, uint64_t len = 0);

 private:
  uint32_t modes_now();
  // Whether a read meets the unreadable range; a write that covers it
  // makes it readable again (and meets nothing).
  bool meets_unreadable(bool is_write, uint32_t m, uint64_t off, uint64_t len);
  std::atomic<uint32_t> modes_{0};
  std::atomic<uint32_t> pending_modes_{0};
  std::atomic<uint32_t> countdown_{0};
  std::atomic<uint32_t> latency_us_{0};
  std::atomic<uint32_t> hanging_{0};
  std::atomic<uint64_t> bad_off_{0}, bad_len_{0};
};

}  // namespace gpuraid
