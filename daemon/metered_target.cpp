#include "daemon/metered_target.h"

#include <time.h>

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

namespace {
uint64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
}
}  // namespace

std::vector<uint64_t> IoCounters::all_latency() const {
  std::vector<uint64_t> all(LatencyHist::kBuckets, 0);
  for (const auto& h : latency) {
    auto s = h.snapshot();
    for (size_t i = 0; i < all.size(); i++) all[i] += s[i];
  }
  return all;
}

MeteredTarget::MeteredTarget(std::unique_ptr<BlockTarget> inner, uint32_t reactors)
    : inner_(std::move(inner)), free_(reactors) {}

MeteredTarget::~MeteredTarget() {
  for (Shim* s = all_.load(); s;) {
    Shim* n = s->next_all;
    delete s;
    s = n;
  }
}

int MeteredTarget::submit(Reactor& r, IoRequest* req, std::string* why) {
  FreeList& fl = free_[r.id() % free_.size()];
  Shim* s = fl.head;
  if (s) {
    fl.head = s->next_free;
  } else {
    s = new Shim;
    s->self = this;
    s->next_all = all_.load(std::memory_order_relaxed);
    while (!all_.compare_exchange_weak(s->next_all, s)) {
    }
  }
  s->reactor = r.id() % uint32_t(free_.size());
  s->done = req->done;
  s->ctx = req->ctx;
  s->t0 = now_ns();
  req->done = on_done;
  req->ctx = s;
  int rc = inner_->submit(r, req, why);
  if (rc != 0) {  // nothing started: give the request back as it came
    req->done = s->done;
    req->ctx = s->ctx;
    s->next_free = fl.head;
    fl.head = s;
    c_.errors.fetch_add(1, std::memory_order_relaxed);
  }
  return rc;
}

void MeteredTarget::on_done(IoRequest* req) {
  Shim* s = static_cast<Shim*>(req->ctx);
  MeteredTarget* self = s->self;
  IoCounters& c = self->c_;
  MemberOp op = kOpFlush;
  switch (req->op) {
    case IoRequest::Read:
      op = kOpRead;
      c.reads.fetch_add(1, std::memory_order_relaxed);
      if (req->result == 0) c.read_bytes.fetch_add(req->length, std::memory_order_relaxed);
      break;
    case IoRequest::Write:
      op = kOpWrite;
      c.writes.fetch_add(1, std::memory_order_relaxed);
      if (req->result == 0) c.write_bytes.fetch_add(req->length, std::memory_order_relaxed);
      break;
    case IoRequest::Flush:
      c.flushes.fetch_add(1, std::memory_order_relaxed);
      break;
  }
  if (req->result != 0) c.errors.fetch_add(1, std::memory_order_relaxed);
  c.latency[op].add(now_ns() - s->t0);
  req->done = s->done;
  req->ctx = s->ctx;
  FreeList& fl = self->free_[s->reactor];
  s->next_free = fl.head;
  fl.head = s;
  req->done(req);
}

}  // namespace gpuraid::daemon
