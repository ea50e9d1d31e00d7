#include "engine/group/background.h"


#include <algorithm>
#include <thread>

#include "engine/clock.h"
#include "engine/ops/rebuild_run.h"

namespace gpuraid {

namespace {
// Stripes in flight per kind: rebuild keeps runs in flight for about
// kRebuildInFlightBytes per member, at least two (one reads while another
// writes; see window()); resync goes one stripe at a time, init and scrub
// overlap four.
constexpr uint32_t kWindow[int(Work::kCount)] = {0, 1, 4, 4};
// The share of the reactor's buffer arena one rebuild run may take.
constexpr size_t kRunArenaShare = 4;
// The volume counts as busy this long after its last foreground request.
constexpr uint64_t kBusyNs = 200'000'000;
}  // namespace

struct BackgroundWork::Slot {
  IoRequest req;
  Volume::MaintenanceResult res;
  std::unique_ptr<RebuildRun> run;  // rebuild: made on first use, reused
  Work kind = Work::Scrub;
  uint64_t stripe = 0;
  uint32_t stripes = 1;  // in flight for this slot (a rebuild run's length)
  BackgroundWork* bw = nullptr;
};

BackgroundWork::BackgroundWork(Volume& v, WriteIntent& wi) : v_(v), wi_(wi) {
  kick_task_.arg = this;
  kick_task_.run = on_kick;
}

BackgroundWork::~BackgroundWork() {
  for (Slot* s : free_slots_) delete s;
}

void BackgroundWork::attach(Reactor& r) {
  const Geometry& g = v_.geometry();
  run_stripes_ = rebuild_run_stripes(g, v_.engine().rebuild_run_bytes(), r.pool().size() / kRunArenaShare);
  const uint32_t run_bytes = run_stripes_ * g.strip_bytes;
  const uint32_t scale = rebuild_window_scale(g);
  const uint32_t runs = std::max<uint32_t>(2, (kRebuildInFlightBytes + run_bytes - 1) / run_bytes) * scale;
  const uint32_t cap = std::min(kMaxRebuildStripesInFlight * scale, v_.engine().ops_per_reactor() / 2);
  rebuild_window_ = std::max(run_stripes_, std::min(runs * run_stripes_, cap / run_stripes_ * run_stripes_));
  r_ = &r;
  kick();
}

uint32_t BackgroundWork::window(Work w) const { return w == Work::Rebuild ? rebuild_window_ : kWindow[int(w)]; }

// The task lives in this object, which may be freed right after shutdown:
// live_ counts the kick tasks queued or running (and running completions,
// on_done), and shutdown waits for none.
void BackgroundWork::kick() {
  Reactor* r = r_.load();
  if (!r || stopping_.load()) return;
  live_.fetch_add(1);
  if (!r->post_once(&kick_task_)) live_.fetch_sub(1);  // one is queued already: it will run
}

void BackgroundWork::on_kick(Task* t) {
  auto* b = static_cast<BackgroundWork*>(t->arg);
  if (!b->stopping_) b->run();
  b->live_.fetch_sub(1);  // the last touch
}

// Starts a kind of work over `total` stripes from `from`; it runs once active and kicked.
void BackgroundWork::arm(Work w, uint64_t total, uint64_t from, bool active) {
  WorkProgress& p = prog_[int(w)];
  p.total_stripes = total;
  p.done_stripes = from;
  p.throttle_base_stripes = from;
  p.started_ns = 0;
  cursor_[int(w)] = from;
  p.active = active;
  kick();
}

void BackgroundWork::arm_rebuild(uint64_t from_stripe) {
  v_.rebuild_broken().store(false);  // a new attempt: its stripes may wait for the checkpoint again
  arm(Work::Rebuild, v_.geometry().stripes(), from_stripe, true);
}

void BackgroundWork::arm_resync() {
  const uint64_t total = wi_.suspect_regions() * wi_.stripes_per_region();
  arm(Work::Resync, total, 0, total > 0);
}

void BackgroundWork::arm_init(uint64_t from_stripe) {
  init_cp_ = from_stripe;
  init_done_window_.clear();
  arm(Work::Init, v_.geometry().stripes(), from_stripe, from_stripe < v_.geometry().stripes());
}

void BackgroundWork::arm_scrub(bool repair) {
  {
    std::lock_guard<std::mutex> g(scrub_mu_);
    scrub_now_ = ScrubSummary{};
  }
  scrub_repair_ = repair;
  stop_scrub_ = false;
  arm(Work::Scrub, v_.geometry().stripes(), 0, true);
}

bool BackgroundWork::idle() const {
  for (const auto& p : prog_)
    if (p.active) return false;
  return in_flight_ == 0;
}

ScrubSummary BackgroundWork::last_scrub() const {
  std::lock_guard<std::mutex> g(scrub_mu_);
  return prog_[int(Work::Scrub)].active ? scrub_now_ : scrub_last_;
}

bool BackgroundWork::shutdown(double timeout_s) {
  stopping_ = true;
  const uint64_t deadline = mono_ns() + uint64_t(timeout_s * 1e9);
  while (in_flight_ > 0 || live_ > 0) {
    if (mono_ns() > deadline) return false;
    if (Reactor* r = r_.load(); r && Reactor::current() == r) r->poll(true, 5);
    else std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

uint64_t BackgroundWork::next_stripe(Work w, uint32_t* count) {
  const uint64_t stripes = v_.geometry().stripes();
  const uint32_t want = *count;
  *count = 0;
  uint64_t& c = cursor_[int(w)];
  switch (w) {
    case Work::Rebuild:
      if (v_.rebuilding_member() < 0) c = stripes;
      break;
    case Work::Resync:
      while (c < stripes && !wi_.suspect_region(wi_.region_of_stripe(c)))
        c = (wi_.region_of_stripe(c) + 1) * wi_.stripes_per_region();
      break;
    case Work::Init:
    case Work::Scrub: break;
    case Work::kCount: break;
  }
  if (c >= stripes || (w == Work::Scrub && stop_scrub_)) return 0;
  *count = uint32_t(std::min<uint64_t>(want, stripes - c));
  c += *count;
  return c - *count;
}

bool BackgroundWork::issue_one(Work w) {
  uint32_t count = w == Work::Rebuild ? std::min(run_stripes_, window(w) - in_flight_) : 1;
  uint64_t stripe = next_stripe(w, &count);
  if (!count) return false;
  Slot* s;
  if (free_slots_.empty()) {
    s = new Slot();  // at most the largest window, reused afterwards
    s->bw = this;
  } else {
    s = free_slots_.back();
    free_slots_.pop_back();
  }
  s->kind = w;
  s->stripe = stripe;
  s->req = IoRequest{};
  s->req.ctx = s;
  s->req.done = on_done;
  int taken;
  if (w == Work::Rebuild) {
    if (!s->run) s->run = std::make_unique<RebuildRun>();
    s->run->n = count;
    taken = v_.submit_rebuild_run(*r_, &s->req, stripe, s->run.get());
  } else {
    Volume::Maintenance m = w == Work::Scrub ? (scrub_repair_ ? Volume::Maintenance::ScrubRepair : Volume::Maintenance::Scrub)
                                             : Volume::Maintenance::Resync;
    taken = v_.submit_maintenance(*r_, &s->req, m, stripe, &s->res) == 0 ? 1 : -1;
  }
  if (taken <= 0) {
    // Refused (every op in use, or the rebuild ended): the stripes are not
    // done, so the cursor goes back to them; the next kick tries again.
    cursor_[int(w)] = stripe;
    free_slots_.push_back(s);
    return false;
  }
  s->stripes = uint32_t(taken);  // req->done never runs inside a submit
  in_flight_ += s->stripes;
  if (w == Work::Rebuild) rebuild_in_flight_ += s->stripes;
  cursor_[int(w)] = stripe + s->stripes;  // the pool may have given fewer ops than asked
  return true;
}

void BackgroundWork::run() {
  if (stopping_ || !r_) return;
  for (int wi = 0; wi < int(Work::kCount); wi++) {
    Work w = Work(wi);
    WorkProgress& p = prog_[wi];
    if (!p.active) continue;
    if (w == Work::Rebuild && v_.rebuilding_member() < 0) {  // the member failed again
      p.active = false;
      continue;
    }
    if (p.paused) return;  // a paused kind holds the ones below it back too
    const uint64_t rate = rate_now(p);
    while (in_flight_ < window(w)) {
      if (rate) {  // the housekeeping tick kicks again later
        const double secs = double(mono_ns() - p.started_ns) / 1e9;
        const double allowed = double(rate) * secs / v_.geometry().strip_bytes;
        if (double(p.done_stripes - p.throttle_base_stripes + in_flight_) >= allowed + 1) return;
      }
      if (!issue_one(w)) break;
    }
    return;  // one kind at a time
  }
}

// md's policy: the work goes at its maximum (rate_bytes_s) while the volume
// is idle and is held to its minimum while foreground requests come in.
uint64_t BackgroundWork::rate_now(WorkProgress& p) {
  const uint64_t now = mono_ns();
  const uint64_t fg = v_.foreground_requests();
  if (fg != fg_seen_) {
    fg_seen_ = fg;
    fg_seen_ns_ = now;
  }
  const uint64_t max = p.rate_bytes_s, min = p.min_rate_bytes_s;
  const bool busy = fg_seen_ns_ && now - fg_seen_ns_ < kBusyNs;
  const uint64_t rate = busy && min && (!max || min < max) ? min : max;
  if (!p.started_ns || rate != p.applied_rate) {  // the throttle counts from here
    p.started_ns = now;
    p.throttle_base_stripes = p.done_stripes;
    p.applied_rate = rate;
  }
  return rate;
}

void BackgroundWork::on_done(IoRequest* req) {
  Slot* s = static_cast<Slot*>(req->ctx);
  BackgroundWork* b = s->bw;
  b->live_.fetch_add(1);  // before in_flight_ falls: shutdown waits for both
  b->done(s, req->result);
  b->live_.fetch_sub(1);  // the last touch
}

// A kind of work that ends tells so (its callback) before it stops reading
// as active: whoever sees it over (dg show --watch) finds its end told.
void BackgroundWork::done(Slot* s, int result) {
  in_flight_ -= s->stripes;
  const uint64_t stripes = v_.geometry().stripes();
  WorkProgress& p = prog_[int(s->kind)];
  switch (s->kind) {
    case Work::Rebuild:
      if (result < 0) {
        // -ECANCELED: a stripe rebuilt past one that failed (finish_maintenance), not a failure of its own.
        if (result != -ECANCELED && cb_.rebuild_failed) cb_.rebuild_failed(result, s->stripe, s->stripes);
        p.active = false;
        rebuild_in_flight_ -= s->stripes;  // after: a new attempt armed once it is 0 stays active
        break;
      }
      rebuild_in_flight_ -= s->stripes;
      p.done_stripes = v_.rebuild_checkpoint();
      if (p.done_stripes >= stripes && in_flight_ == 0) {
        v_.finish_rebuild();
        if (cb_.rebuild_done) cb_.rebuild_done();
        p.active = false;
      }
      break;
    case Work::Resync: {
      // One stripe at a time, in order: a region is resynced when its last
      // stripe is, unless one of its stripes failed.
      p.done_stripes++;
      if (result < 0) resync_region_failed_ = true;
      const uint64_t region = wi_.region_of_stripe(s->stripe);
      if (s->stripe + 1 == stripes || wi_.region_of_stripe(s->stripe + 1) != region) {
        if (!resync_region_failed_) wi_.region_resynced(region);
        resync_region_failed_ = false;
      }
      if (result < 0) {  // the rest waits for the next assembly (the regions stay dirty)
        if (cb_.resync_failed) cb_.resync_failed(result);
        p.active = false;
      } else if (wi_.suspect_regions() == 0) {
        if (cb_.resync_done) cb_.resync_done();
        p.active = false;
      }
      break;
    }
    case Work::Init: {
      if (result < 0) {  // the checkpoint stays below this stripe
        if (cb_.init_failed) cb_.init_failed(result);
        p.active = false;
        break;
      }
      // The checkpoint moves over stripes finished in order.
      init_done_window_.push_back(s->stripe);
      uint64_t cp = init_cp_;
      for (auto it = std::find(init_done_window_.begin(), init_done_window_.end(), cp);
           it != init_done_window_.end(); it = std::find(init_done_window_.begin(), init_done_window_.end(), cp)) {
        init_done_window_.erase(it);
        cp++;
      }
      init_cp_ = cp;
      p.done_stripes = cp;
      if (cp >= stripes) {
        if (cb_.init_done) cb_.init_done();
        p.active = false;
      }
      break;
    }
    case Work::Scrub: {
      std::unique_lock<std::mutex> g(scrub_mu_);
      p.done_stripes++;
      if (result < 0) {  // the stripe could not be checked or repaired: the scrub stops
        if (!scrub_now_.failed++) scrub_now_.err = result;
        stop_scrub_ = true;
        s->res.repaired = s->res.made_consistent = false;
      } else if (s->res.skipped) {
        scrub_now_.skipped++;
      } else {
        scrub_now_.checked++;
      }
      if (s->res.mismatch_rows) {
        scrub_now_.mismatched++;
        if (s->res.repaired) scrub_now_.repaired++;
        if (s->res.made_consistent) scrub_now_.made_consistent++;
        g.unlock();
        if (cb_.scrub_mismatch) cb_.scrub_mismatch(s->stripe, s->res);
        g.lock();
      }
      const bool end = cursor_[int(Work::Scrub)] >= stripes || stop_scrub_;
      if (end && in_flight_ == 0) {
        scrub_last_ = scrub_now_;
        ScrubSummary sum = scrub_last_;
        g.unlock();
        if (cb_.scrub_done) cb_.scrub_done(sum);
        p.active = false;
      }
      break;
    }
    case Work::kCount: break;
  }
  free_slots_.push_back(s);
  run();
}

}  // namespace gpuraid
