// The host-shim executor: each slot runs slot_program.h's launches with the
// kernels' own source (the descriptor copy, the batch kernel, the gated
// commit, the signal kernel), at launch (sync) or on a thread per slot
// standing in for a CUDA stream (async).
#include "kernels/kernel_cpu_backend.h"

#include <cstring>
#include <deque>
#include <thread>
#include <vector>

#include "engine/invariant.h"
#include "kernels/address_registry.h"
#include "kernels/shim_launch.h"
#include "kernels/slot_program.h"

namespace gpuraid {

void ShimFaults::release() {
  std::lock_guard<std::mutex> g(mu_);
  released_ = true;
  cv_.notify_all();
}

bool ShimFaults::wait_hung(int timeout_ms) {
  std::unique_lock<std::mutex> g(mu_);
  return cv_.wait_for(g, std::chrono::milliseconds(timeout_ms), [&] { return hung_; });
}

void ShimFaults::hang() {
  std::unique_lock<std::mutex> g(mu_);
  hung_ = true;
  cv_.notify_all();
  cv_.wait(g, [&] { return released_; });
}

namespace {

using namespace kern;

// The shim's device sees host memory at host addresses: registering only
// records the range, which is what makes it readable in place.
struct ShimMapper final : AddressRegistry::Mapper {
  bool map(void* p, size_t, uint64_t* dev) override {
    *dev = reinterpret_cast<uint64_t>(p);
    return true;
  }
  void unmap(void*) override {}
};

AddressRegistry& shim_registry() {
  static AddressRegistry r;
  return r;
}

struct alignas(64) Word64 {
  uint8_t b[64];
};

class ShimExecutor final : public Executor {
 public:
  explicit ShimExecutor(const KernelCpuOptions& o) : opts_(o), view_(shim_registry()) {
    GPR_ASSERT(o.async || (o.hang_before_commit_at < 0 && o.hang_in_commit_at < 0),
               "host shim: hangs need the async device");
    const uint32_t n = o.slots ? o.slots : (o.async ? 4 : 1);
    for (uint32_t i = 0; i < n; i++) {
      auto s = std::make_unique<Slot>();
      s->blob.resize(o.batch.max_blob_bytes / 64 + 1);
      s->dev_blob.resize(s->blob.size());
      s->bounce.resize(o.bounce_bytes / 64);
      s->mem.ctrl = s->ctrl.get();
      s->mem.ctrl_dev = reinterpret_cast<uint64_t>(s->ctrl.get());
      s->mem.blob = s->blob.data()->b;
      s->mem.blob_cap = s->blob.size() * 64;
      s->mem.dev_blob = reinterpret_cast<uint64_t>(s->dev_blob.data());
      s->mem.bounce = s->bounce.empty() ? nullptr : s->bounce.data()->b;
      s->mem.bounce_dev = reinterpret_cast<uint64_t>(s->mem.bounce);
      s->mem.bounce_cap = s->bounce.size() * 64;
      slots_.push_back(std::move(s));
    }
    if (o.async)
      for (auto& s : slots_) s->thread = std::thread([this, sp = s.get()] { device_loop(*sp); });
  }

  ~ShimExecutor() override {
    for (auto& s : slots_) {
      {
        std::lock_guard<std::mutex> g(s->mu);
        s->stop = true;
        s->cv.notify_all();
      }
      if (s->thread.joinable()) s->thread.join();
    }
  }

  const char* name() const override { return "host-shim"; }
  uint32_t slots() const override { return uint32_t(slots_.size()); }

  bool register_memory(void* p, size_t len, std::string* err) override {
    if (!p || len == 0) return *err = "nothing to register", false;
    ShimMapper m;
    switch (shim_registry().add(p, len, m)) {
      case AddressRegistry::Add::Added:
      case AddressRegistry::Add::Counted: return true;
      case AddressRegistry::Add::Overlaps: return *err = "the range overlaps another registered range", false;
      case AddressRegistry::Add::Refused: break;
    }
    return *err = "refused", false;
  }
  void unregister_memory(void* p) override {
    ShimMapper m;
    shim_registry().remove(p, m);
  }

  LaunchResult launch(uint32_t slot, HostBatch& b, bool* staged, std::string* err) override {
    Slot& s = *slots_[slot];
    const int n = launches_++;
    if (n == opts_.fail_launch_at) {
      *err = "injected launch failure";
      return LaunchResult::Failed;
    }
    const SlotProgram::Needs need = s.prog.plan(b, view_, opts_.staged);
    if (need.bounce > s.mem.bounce_cap) return LaunchResult::Refused;
    GPR_ASSERT(need.blob <= s.mem.blob_cap, "host shim: a batch of %zu descriptor bytes (slot holds %zu)", need.blob,
               s.mem.blob_cap);
    if (need.scratch > s.mem.scratch_cap) {  // the slot is idle: its device is not using the old scratch
      s.scratch.assign((need.scratch + 63) / 64, Word64{});
      s.mem.scratch_dev = reinterpret_cast<uint64_t>(s.scratch.data());
      s.mem.scratch_cap = s.scratch.size() * 64;
    }
    if (++seq_ == 0) seq_ = 1;
    s.prog.start(b, s.mem, seq_, opts_.max_blocks, &s.launch);
    s.fault = n == opts_.fail_after_kernel_at ? Fault::Error
              : n == opts_.hang_before_commit_at ? Fault::HangBeforeCommit
              : n == opts_.hang_in_commit_at ? Fault::HangInCommit
                                              : Fault::None;
    s.failed.store(false, std::memory_order_relaxed);
    *staged = need.staged;
    if (!opts_.async) {
      run_device(s);
      return LaunchResult::Launched;
    }
    std::lock_guard<std::mutex> g(s.mu);
    s.pending = true;
    s.cv.notify_all();
    return LaunchResult::Launched;
  }

  int query(uint32_t slot, HostBatch& b, bool deep, std::string* err) override {
    Slot& s = *slots_[slot];
    if (s.prog.finished(s.mem)) {
      s.prog.complete(b, s.mem);
      return 1;
    }
    // As on a GPU in polling mode, only asking the device shows an error.
    if (s.failed.load(std::memory_order_acquire) && (deep || !opts_.async)) {
      *err = "injected fault after the kernel ran";
      return -1;
    }
    return 0;
  }

  bool abort(uint32_t slot) override {
    Slot& s = *slots_[slot];
    return s.prog.abort(s.mem);
  }

  bool quiesce(uint64_t timeout_ns) override {
    const auto until = std::chrono::steady_clock::now() + std::chrono::nanoseconds(timeout_ns);
    for (auto& s : slots_) {
      std::unique_lock<std::mutex> g(s->mu);
      if (!s->cv.wait_until(g, until, [&] { return !s->pending && !s->busy; })) return false;
    }
    return true;
  }

 private:
  enum class Fault : uint8_t { None, Error, HangBeforeCommit, HangInCommit };
  struct Slot {
    SlotProgram prog;
    SlotMemory mem;
    std::unique_ptr<SlotCtrl> ctrl = std::make_unique<SlotCtrl>();  // zeroed
    std::vector<Word64> blob, dev_blob, bounce, scratch;
    SlotLaunch launch;
    Fault fault = Fault::None;
    std::atomic<bool> failed{false};  // the batch hit its injected error
    std::thread thread;
    std::mutex mu;
    std::condition_variable cv;
    bool pending = false, busy = false, stop = false;
  };

  // What the device does with a launched batch, in stream order.
  void run_device(Slot& s) {
    const SlotLaunch& l = s.launch;
    memcpy(s.dev_blob.data(), s.blob.data(), l.blob_bytes);
    shim_run_parity_kernel(l.main, l.main_grid);
    if (s.fault == Fault::Error) {  // a sticky error: nothing after the kernel runs
      s.failed.store(true, std::memory_order_release);
      wake();
      return;
    }
    if (l.has_commit) {
      if (s.fault == Fault::HangBeforeCommit) faults().hang();
      KBatch c = l.commit;
      if (s.fault == Fault::HangInCommit) {
        // Block 0 passed the gate (parity_kernels.cuh), then the device stalls.
        __atomic_store_n(c.started, c.seq, __ATOMIC_RELEASE);
        __atomic_thread_fence(__ATOMIC_SEQ_CST);
        if (__atomic_load_n(c.abort, __ATOMIC_ACQUIRE) != c.seq) {
          faults().hang();
          c.started = nullptr;  // past the gate: it writes whatever the host did since
        }
      }
      shim_run_parity_kernel(c, l.commit_grid);
    }
    shim_run_signal_kernel(l.signal);
    wake();
  }

  ShimFaults& faults() {
    GPR_ASSERT(opts_.faults != nullptr, "host shim: a hang without a ShimFaults to release it");
    return *opts_.faults;
  }

  void device_loop(Slot& s) {
    std::unique_lock<std::mutex> g(s.mu);
    for (;;) {
      s.cv.wait(g, [&] { return s.pending || s.stop; });
      if (s.stop) return;
      s.pending = false;
      s.busy = true;
      g.unlock();
      run_device(s);
      g.lock();
      s.busy = false;
      s.cv.notify_all();
    }
  }

  KernelCpuOptions opts_;
  AddressView view_;
  std::vector<std::unique_ptr<Slot>> slots_;
  int launches_ = 0;
  uint32_t seq_ = 0;
};

}  // namespace

std::unique_ptr<kern::BatchingBackend> make_kernel_cpu_backend(const KernelCpuOptions& opts) {
  KernelCpuOptions o = opts;
  if (!o.faults && (o.hang_before_commit_at >= 0 || o.hang_in_commit_at >= 0)) o.faults = std::make_shared<ShimFaults>();
  return std::make_unique<kern::BatchingBackend>("kernel-cpu", std::make_unique<ShimExecutor>(o), o.batch);
}

std::unique_ptr<ParityBackend> make_kernel_cpu_backend() { return make_kernel_cpu_backend(KernelCpuOptions{}); }

std::unique_ptr<ParityBackend> make_kernel_cpu_backend(const AcceleratorSettings& s) {
  KernelCpuOptions o;
  apply_accelerator_settings(s, &o.batch);
  if (s.route_below < 0) o.batch.routing = kern::Routing::Off;
  o.async = true;
  o.slots = 2;
  if (s.max_blocks) o.max_blocks = s.max_blocks;
  return make_kernel_cpu_backend(o);
}

}  // namespace gpuraid
