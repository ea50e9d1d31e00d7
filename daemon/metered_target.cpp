#include "daemon/metered_target.h"

#include "engine/clock.h"
#include "engine/single_writer.h"

namespace gpuraid::daemon {

struct MeteredTarget::Shim {
  void (*done)(IoRequest*) = nullptr;
  void* ctx = nullptr;
  uint64_t t0 = 0;
  MeteredTarget* self = nullptr;
  uint32_t reactor = 0;
  Shim* next_free = nullptr;
  Shim* next_all = nullptr;
};

std::vector<uint64_t> IoCounters::all_latency() const {
  std::vector<uint64_t> all(LatencyHist::kBuckets, 0);
  for (const auto& h : latency) {
    auto s = h.snapshot();
    for (size_t i = 0; i < all.size(); i++) all[i] += s[i];
  }
  return all;
}

void IoCounters::merge(const IoCounters& o) {
  bump(reads, o.reads.load(std::memory_order_relaxed));
  bump(writes, o.writes.load(std::memory_order_relaxed));
  bump(flushes, o.flushes.load(std::memory_order_relaxed));
  bump(read_bytes, o.read_bytes.load(std::memory_order_relaxed));
  bump(write_bytes, o.write_bytes.load(std::memory_order_relaxed));
  bump(errors, o.errors.load(std::memory_order_relaxed));
  for (size_t op = 0; op < latency.size(); op++) latency[op].merge(o.latency[op]);
}

MeteredTarget::MeteredTarget(std::unique_ptr<BlockTarget> inner, uint32_t reactors) : inner_(std::move(inner)) {
  for (uint32_t i = 0; i < std::max<uint32_t>(reactors, 1); i++) shards_.push_back(std::make_unique<Shard>());
}

void MeteredTarget::totals(IoCounters* out) const {
  for (const auto& s : shards_) out->merge(s->c);
}

MeteredTarget::~MeteredTarget() {
  for (Shim* s = all_.load(); s;) {
    Shim* n = s->next_all;
    delete s;
    s = n;
  }
}

int MeteredTarget::submit(Reactor& r, IoRequest* req, std::string* why) {
  const uint32_t n = uint32_t(shards_.size()), shard = r.id() < n ? r.id() : r.id() % n;
  Shard& sh = *shards_[shard];
  Shim* s = sh.free_head;
  if (s) {
    sh.free_head = s->next_free;
  } else {
    s = new Shim;
    s->self = this;
    s->next_all = all_.load(std::memory_order_relaxed);
    while (!all_.compare_exchange_weak(s->next_all, s)) {
    }
  }
  s->reactor = shard;
  s->done = req->done;
  s->ctx = req->ctx;
  s->t0 = mono_ns();
  req->done = on_done;
  req->ctx = s;
  int rc = inner_->submit(r, req, why);
  if (rc != 0) {  // nothing started: give the request back as it came
    req->done = s->done;
    req->ctx = s->ctx;
    s->next_free = sh.free_head;
    sh.free_head = s;
    bump(sh.c.errors);
  }
  return rc;
}

void MeteredTarget::on_done(IoRequest* req) {
  Shim* s = static_cast<Shim*>(req->ctx);
  // On the reactor that submitted it (the request's home), whose shard this is.
  Shard& sh = *s->self->shards_[s->reactor];
  IoCounters& c = sh.c;
  MemberOp op = kOpFlush;
  switch (req->op) {
    case IoRequest::Read:
      op = kOpRead;
      bump(c.reads);
      if (req->result == 0) bump(c.read_bytes, req->length);
      break;
    case IoRequest::Write:
      op = kOpWrite;
      bump(c.writes);
      if (req->result == 0) bump(c.write_bytes, req->length);
      break;
    case IoRequest::Flush:
      bump(c.flushes);
      break;
  }
  if (req->result != 0) bump(c.errors);
  c.latency[op].add(mono_ns() - s->t0);
  req->done = s->done;
  req->ctx = s->ctx;
  s->next_free = sh.free_head;
  sh.free_head = s;
  req->done(req);
}

}  // namespace gpuraid::daemon
