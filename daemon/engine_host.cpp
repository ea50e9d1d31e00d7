#include "daemon/engine_host.h"
#include "engine/thread_name.h"

#include <pthread.h>
#include <time.h>

#include <condition_variable>
#include <cstring>
#include <mutex>

namespace gpuraid::daemon {

namespace {
// CPU clock ids are negative numbers: mark "none" apart from them.
constexpr int64_t kNoClock = INT64_MIN;
}  // namespace

std::unique_ptr<EngineHost> EngineHost::start(const EngineConfig& cfg, std::string* err) {
  std::unique_ptr<EngineHost> h(new EngineHost);
  h->engine_ = Engine::create(cfg, err);
  if (!h->engine_) return nullptr;
  h->clocks_ = std::vector<std::atomic<int64_t>>(h->engine_->reactor_count());
  for (auto& c : h->clocks_) c.store(kNoClock);
  for (uint32_t i = 0; i < h->engine_->reactor_count(); i++)
    h->threads_.emplace_back([p = h.get(), i] { p->loop(i); });
  return h;
}

EngineHost::~EngineHost() { stop(); }

void EngineHost::loop(uint32_t i) {
  clockid_t cid;
  if (pthread_getcpuclockid(pthread_self(), &cid) == 0) clocks_[i].store(int64_t(cid));
  set_thread_name("gpuraid-r" + std::to_string(i));
  Reactor& r = engine_->reactor(i);
  Reactor::set_current(&r);
  while (!stop_.load(std::memory_order_acquire)) r.poll(true, 50);
  // Let what is in flight finish, so nothing completes into freed memory.
  for (int k = 0; k < 200 && r.in_flight(); k++) r.poll(true, 10);
  clocks_[i].store(kNoClock);
}

void EngineHost::stop() {
  stop_.store(true, std::memory_order_release);
  for (auto& t : threads_)
    if (t.joinable()) t.join();
}

namespace {
struct SyncIo {
  Task task;
  IoRequest req;
  BlockTarget* target = nullptr;
  std::string why;
  int rc = 0;
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;

  void finish(int result) {
    std::lock_guard<std::mutex> g(mu);
    rc = result;
    done = true;
    cv.notify_one();
  }
};
}  // namespace

int EngineHost::io(BlockTarget& t, IoRequest::Op op, uint64_t offset, uint64_t length, uint8_t* buf,
                   bool fua, std::string* why) {
  if (stop_.load()) {
    if (why) *why = "the daemon is shutting down";
    return -ESHUTDOWN;
  }
  SyncIo s;
  s.target = &t;
  s.req.op = op;
  s.req.offset = offset;
  s.req.length = length;
  s.req.buf = buf;
  s.req.fua = fua;
  s.req.ctx = &s;
  s.req.done = [](IoRequest* q) { static_cast<SyncIo*>(q->ctx)->finish(q->result); };
  s.task.arg = &s;
  s.task.run = [](Task* tk) {
    SyncIo* x = static_cast<SyncIo*>(tk->arg);
    Reactor* r = Reactor::current();
    int rc = x->target->submit(*r, &x->req, &x->why);
    if (rc != 0) x->finish(rc);
  };
  uint32_t i = next_.fetch_add(1) % engine_->reactor_count();
  // The caller's buffer is what parity is computed from (or recovered into):
  // mapped for a GPU backend for this request, as the data path's buffers are.
  ParityBackend& pb = engine_->reactor(i).parity();
  std::string unmapped;
  const bool mapped = length > 0 && pb.register_memory(buf, length, &unmapped);
  engine_->reactor(i).post(&s.task);
  std::unique_lock<std::mutex> g(s.mu);
  s.cv.wait(g, [&] { return s.done; });
  if (mapped) pb.unregister_memory(buf);
  if (why && s.rc) *why = s.why.empty() ? strerror(-s.rc) : s.why;
  return s.rc;
}

double EngineHost::reactor_cpu_seconds() const {
  double sum = 0;
  for (auto& c : clocks_) {
    int64_t id = c.load();
    timespec ts;
    if (id != kNoClock && clock_gettime(clockid_t(id), &ts) == 0) sum += double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
  }
  return sum;
}

}  // namespace gpuraid::daemon
