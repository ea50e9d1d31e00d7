#include "bench/load_generator.h"

#include "engine/clock.h"

#include <time.h>

#include <cstring>
#include <stdexcept>

namespace gpuraid::bench {

uint64_t now_ns() { return mono_ns(); }

LoadGenerator::LoadGenerator(Target& t, Reactor& r, const Workload& w, uint32_t thread, uint32_t threads,
                             uint64_t seed)
    : t_(t), r_(r), w_(w), rng_(seed * 1000003 + thread), slots_(w.iodepth) {
  // Sequential streams: each thread walks its own share of the target.
  const uint64_t pieces = t.size() / w.bs;
  region_len_ = std::max<uint64_t>(1, pieces / threads) * w.bs;
  region_start_ = uint64_t(thread) * region_len_;
  if (region_start_ + region_len_ > t.size()) region_start_ = 0;
  for (auto& s : slots_) {
    s.gen = this;
    s.buf = r.pool().reserve(w.bs);  // request buffers live in the registered arena
    if (!s.buf) throw std::runtime_error("the reactor's buffer arena is too small for iodepth x bs");
    for (uint32_t i = 0; i < w.bs; i += 8) {
      uint64_t v = rng_();
      memcpy(s.buf + i, &v, 8);
    }
    s.req.buf = s.buf;
    s.req.ctx = &s;
    s.req.done = on_done;
  }
}

uint64_t LoadGenerator::next_offset(bool* is_write) {
  switch (w_.rw) {
    case Rw::RandRead: *is_write = false; break;
    case Rw::RandWrite: *is_write = true; break;
    case Rw::RandRw: *is_write = rng_() % 100 >= w_.rwmixread; break;
    case Rw::SeqRead: *is_write = false; break;
    case Rw::SeqWrite: *is_write = true; break;
  }
  if (is_random(w_.rw)) return rng_() % (t_.size() / w_.bs) * w_.bs;
  uint64_t off = region_start_ + cursor_;
  cursor_ += w_.bs;
  if (cursor_ >= region_len_) cursor_ = 0;
  return off;
}

// A rate cap spaces issues evenly: the n-th I/O waits for n / rate seconds.
bool LoadGenerator::may_issue() {
  if (!w_.rate_iops) return true;
  const uint64_t t = now_ns();
  if (!first_ns_) first_ns_ = t;
  return double(issued_) <= double(t - first_ns_) * 1e-9 * double(w_.rate_iops);
}

void LoadGenerator::issue(Slot& s) {
  if (!may_issue()) {
    idle_.push_back(&s);
    return;
  }
  issued_++;
  bool wr;
  s.req.offset = next_offset(&wr);
  s.req.op = wr ? IoRequest::Write : IoRequest::Read;
  s.req.length = w_.bs;
  s.t0 = now_ns();
  if (t_.submit(r_, &s.req) != 0) throw std::runtime_error("the target refused a request");
  in_flight_++;
}

void LoadGenerator::on_done(IoRequest* r) {
  Slot& s = *static_cast<Slot*>(r->ctx);
  LoadGenerator* g = s.gen;
  g->in_flight_--;
  const uint64_t t1 = now_ns();
  if (t1 >= g->clock_->start_ns.load(std::memory_order_relaxed) && t1 < g->clock_->end_ns.load(std::memory_order_relaxed)) {
    if (r->result < 0) g->res_.errors++;
    g->res_.ops++;
    g->res_.bytes += r->length;
    g->res_.lat.add(t1 - s.t0);
  }
  if (t1 >= g->clock_->end_ns.load(std::memory_order_relaxed)) g->stopping_ = true;
  if (!g->stopping_) g->issue(s);
}

void LoadGenerator::run(const RunClock& clock) {
  clock_ = &clock;
  for (auto& s : slots_) issue(s);
  while (in_flight_ > 0 || (!idle_.empty() && !stopping_)) {
    r_.poll(false);  // busy-poll, as SPDK's bdevperf does
    if (!idle_.empty() && !stopping_ && may_issue()) {
      Slot* s = idle_.back();
      idle_.pop_back();
      issue(*s);
    }
    if (now_ns() >= clock.end_ns.load(std::memory_order_relaxed)) stopping_ = true;
  }
}

}  // namespace gpuraid::bench
