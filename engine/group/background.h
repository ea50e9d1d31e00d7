// The drive group's background work, run on one reactor: rebuild (first),
// resync of dirty regions, background init, scrub. One kind runs at a time;
// each keeps a few stripes in flight and honours its rate limit. Rebuild
// goes in runs of consecutive stripes (about 1 MiB per member I/O, see
// ops/rebuild_run.h), about 2 MiB per member in flight; its checkpoint
// moves in order. Control
// threads ask through the atomics below and kick(); all the work itself
// happens on the reactor's thread.
#pragma once
#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <vector>

#include "engine/group/write_intent.h"
#include "engine/volume.h"

namespace gpuraid {

enum class Work : uint8_t { Rebuild, Resync, Init, Scrub, kCount };

struct WorkProgress {
  std::atomic<bool> active{false}, paused{false};
  std::atomic<uint64_t> done_stripes{0}, total_stripes{0};
  // Member bytes per second, as md's speed_limit_max / _min: the rate at
  // most (0 = unlimited), and the rate the work is held to while the volume
  // serves foreground requests (0 = not held: it goes at rate_bytes_s).
  std::atomic<uint64_t> rate_bytes_s{0};
  std::atomic<uint64_t> min_rate_bytes_s{0};
  // Reactor thread only: the throttle counts from started_ns and
  // throttle_base_stripes, both reset whenever the applied rate changes.
  uint64_t started_ns = 0;
  uint64_t throttle_base_stripes = 0;
  uint64_t applied_rate = 0;
};

struct ScrubSummary {
  uint64_t checked = 0, skipped = 0, mismatched = 0, repaired = 0;
  uint64_t made_consistent = 0;  // rewritten unverified (Volume::MaintenanceResult)
  uint64_t failed = 0;  // stripes whose check or repair failed (the scrub stops there)
  int err = 0;          // the first such error
};

struct WorkCallbacks {
  // Reactor thread. Each may be empty.
  std::function<void()> rebuild_done, init_done, resync_done;
  // A stripe failed (-EIO: the group failed, or the parity backend did):
  // the work stops; init's checkpoint stays below that stripe, resync's
  // regions not done stay suspect (and dirty). A rebuild's says which run
  // of stripes failed (-ENODATA: a block in it that nothing rebuilds).
  std::function<void(int err)> init_failed, resync_failed;
  std::function<void(int err, uint64_t first_stripe, uint32_t stripes)> rebuild_failed;
  std::function<void(uint64_t stripe, const Volume::MaintenanceResult&)> scrub_mismatch;
  std::function<void(const ScrubSummary&)> scrub_done;
};

class BackgroundWork {
 public:
  BackgroundWork(Volume& v, WriteIntent& wi);
  ~BackgroundWork();
  void set_callbacks(WorkCallbacks cb) { cb_ = std::move(cb); }
  void attach(Reactor& r);
  Reactor* reactor() const { return r_; }

  // Control side (any thread): arm a kind of work, then kick().
  void arm_rebuild(uint64_t from_stripe);
  void arm_resync();
  void arm_init(uint64_t from_stripe);
  void arm_scrub(bool repair);
  void stop_scrub() { stop_scrub_.store(true); kick(); }
  void set_paused(Work w, bool p) { prog_[int(w)].paused.store(p); kick(); }
  void set_rate(Work w, uint64_t bytes_s) { prog_[int(w)].rate_bytes_s.store(bytes_s); }
  void set_min_rate(Work w, uint64_t bytes_s) { prog_[int(w)].min_rate_bytes_s.store(bytes_s); }
  // Stops issuing and waits for in-flight stripes and a queued or running
  // kick (polls the reactor when the caller owns it). False when they did
  // not finish within the time (nobody polls the reactor any more). Nobody
  // may kick() once it is called (the housekeeper is joined first).
  bool shutdown(double timeout_s = 30);
  // Wakes the work on its reactor (rate limits and pauses are re-checked).
  // Kicks coalesce: while one is queued, more add nothing.
  void kick();

  const WorkProgress& progress(Work w) const { return prog_[int(w)]; }
  // Rebuild stripes issued and not yet done: a rebuild that stopped is
  // armed again only once its last runs came back (one coming back
  // cancelled would stop the new attempt).
  uint32_t rebuild_in_flight() const { return rebuild_in_flight_.load(); }
  uint64_t init_checkpoint() const { return init_cp_.load(); }
  bool idle() const;
  ScrubSummary last_scrub() const;

 private:
  struct Slot;
  void arm(Work w, uint64_t total, uint64_t from, bool active);
  static void on_kick(Task* t);  // reactor thread
  void run();                 // reactor thread: issues what the windows and rates allow
  bool issue_one(Work w);     // reactor thread
  uint32_t window(Work w) const;  // stripes in flight at most
  uint64_t rate_now(WorkProgress& p);  // reactor thread: the rate to apply now (0 = none)
  static void on_done(IoRequest* req);
  void done(Slot* s, int result);  // on_done's work
  // The next *count stripes (fewer at the end; *count = 0: none left).
  uint64_t next_stripe(Work w, uint32_t* count);

  Volume& v_;
  WriteIntent& wi_;
  std::atomic<Reactor*> r_{nullptr};  // set by attach() while the housekeeper may already kick()
  WorkCallbacks cb_;
  WorkProgress prog_[int(Work::kCount)];
  std::atomic<bool> stopping_{false}, stop_scrub_{false}, scrub_repair_{false};
  Task kick_task_;
  // Kick tasks queued or running, and completions (on_done) running:
  // shutdown() waits for 0, so that the object, and the volume it reads,
  // are never freed under either (their last touch is the decrement).
  // in_flight_ alone was not enough: on_done lowers it first and goes on
  // (found by TSan over the daemon: a stop during a rebuild freed the
  // volume's op pools while on_done still read them).
  std::atomic<uint32_t> live_{0};
  std::atomic<uint32_t> in_flight_{0};
  std::atomic<uint32_t> rebuild_in_flight_{0};
  // Reactor-thread state.
  uint64_t cursor_[int(Work::kCount)] = {};
  uint32_t run_stripes_ = 1;     // stripes per rebuild run (ops/rebuild_run.h)
  uint32_t rebuild_window_ = 1;  // rebuild stripes in flight at most (whole runs)
  uint64_t fg_seen_ = 0, fg_seen_ns_ = 0;  // foreground requests last counted, and when they last moved
  std::vector<uint64_t> init_done_window_;  // stripes finished above the checkpoint
  bool resync_region_failed_ = false;       // a stripe of the region being resynced failed
  std::atomic<uint64_t> init_cp_{0};
  mutable std::mutex scrub_mu_;
  ScrubSummary scrub_now_, scrub_last_;
  std::vector<Slot*> free_slots_;
};

}  // namespace gpuraid
