#include "bench/load_generator.h"

#include "engine/clock.h"

#include <time.h>

#include <cstring>
#include <stdexcept>

namespace gpuraid::bench {

uint64_t now_ns() { return mono_ns(); }

LoadGenerator::LoadGenerator(Target& t, Reactor& r, const Workload& w, uint32_t thread, uint32_t threads,
                             uint64_t seed)
    : t_(t), r_(r), w_(w), rng_(seed * 1000003 + thread), slots_(w.iodepth), arena_mark_(r.pool().reserved_mark()) {
  // Sequential streams: each thread walks its own share of the target.
  pieces_ = t.size() / w.bs;
  region_len_ = std::max<uint64_t>(1, pieces_ / threads) * w.bs;
  region_start_ = uint64_t(thread) * region_len_;
  if (region_start_ + region_len_ > t.size()) region_start_ = 0;
  for (auto& s : slots_) {
    s.gen = this;
    s.buf = r.pool().reserve(w.bs);  // request buffers live in the registered arena
    if (!s.buf) {
      r.pool().release_reserved(arena_mark_);
      throw std::runtime_error("the reactor's buffer arena is too small for iodepth x bs");
    }
    for (uint32_t i = 0; i < w.bs; i += 8) {
      uint64_t v = rng_();
      memcpy(s.buf + i, &v, 8);
    }
    s.req.buf = s.buf;
    s.req.ctx = &s;
    s.req.done = on_done;
  }
  idle_.reserve(slots_.size());
  done_.reserve(slots_.size());
  turn_.reserve(slots_.size());
}

LoadGenerator::~LoadGenerator() { r_.pool().release_reserved(arena_mark_); }

uint64_t LoadGenerator::next_offset(bool* is_write) {
  switch (w_.rw) {
    case Rw::RandRead: *is_write = false; break;
    case Rw::RandWrite: *is_write = true; break;
    case Rw::RandRw: *is_write = rng_() % 100 >= w_.rwmixread; break;
    case Rw::SeqRead: *is_write = false; break;
    case Rw::SeqWrite: *is_write = true; break;
  }
  // A random piece by multiply-shift (Lemire), not a division: the load
  // generator's own cost shows in both sides' figures.
  if (is_random(w_.rw)) return uint64_t((unsigned __int128)rng_() * pieces_ >> 64) * w_.bs;
  uint64_t off = region_start_ + cursor_;
  cursor_ += w_.bs;
  if (cursor_ >= region_len_) cursor_ = 0;
  return off;
}

// A rate cap spaces issues evenly: the n-th I/O waits for n / rate seconds.
bool LoadGenerator::may_issue(uint64_t now) {
  if (!w_.rate_iops) return true;
  if (!first_ns_) first_ns_ = now;
  return double(issued_) <= double(now - first_ns_) * 1e-9 * double(w_.rate_iops);
}

void LoadGenerator::issue(Slot& s, uint64_t now) {
  if (!may_issue(now)) {
    idle_.push_back(&s);
    return;
  }
  issued_++;
  bool wr;
  s.req.offset = next_offset(&wr);
  s.req.op = wr ? IoRequest::Write : IoRequest::Read;
  s.req.length = w_.bs;
  s.t0 = now;
  if (t_.submit(r_, &s.req) != 0) throw std::runtime_error("the target refused a request");
  in_flight_++;
}

void LoadGenerator::on_done(IoRequest* r) {
  Slot& s = *static_cast<Slot*>(r->ctx);
  s.gen->in_flight_--;
  s.gen->done_.push_back(&s);
}

void LoadGenerator::account(uint64_t now) {
  const uint64_t start = clock_->start_ns.load(std::memory_order_relaxed);
  const uint64_t end = clock_->end_ns.load(std::memory_order_relaxed);
  if (now >= end) stopping_ = true;
  const bool counted = now >= start && now < end;
  turn_.swap(done_);  // an issue below may complete at once and note itself in done_
  for (Slot* s : turn_) {
    if (counted) {
      if (s->req.result < 0) res_.errors++;
      res_.ops++;
      res_.bytes += s->req.length;
      res_.lat.add(now - s->t0);
    }
    if (!stopping_) issue(*s, now);
  }
  turn_.clear();
}

void LoadGenerator::run(const RunClock& clock) {
  clock_ = &clock;
  uint64_t now = now_ns();
  for (auto& s : slots_) issue(s, now);
  // With nothing completing, the clock is still read now and then, so the
  // end of the window is seen (and a rate cap's next slot).
  uint32_t quiet_turns = 0, idle_polls = 0;
  while (in_flight_ > 0 || !done_.empty() || (!idle_.empty() && !stopping_)) {
    // Busy-poll, as SPDK's bdevperf does, while turns find work (null
    // drives complete inline). After kSpinPolls empty turns with every slot
    // in flight, only a completion can move on: block in the ring, as
    // gpuraidd's reactors do, so that io-wq workers (mem, file and block
    // drives) get the core instead of a spinning poller.
    const bool block = idle_polls >= kSpinPolls && idle_.empty();
    idle_polls = r_.poll(block, 1) ? 0 : idle_polls + 1;
    if (done_.empty() && idle_.empty() && ++quiet_turns < 64) continue;
    quiet_turns = 0;
    now = now_ns();
    account(now);
    if (!idle_.empty() && !stopping_ && may_issue(now)) {
      Slot* s = idle_.back();
      idle_.pop_back();
      issue(*s, now);
    }
  }
  clock.running.fetch_sub(1);
  while (clock.running.load() > 0) r_.poll(false);
}

}  // namespace gpuraid::bench
