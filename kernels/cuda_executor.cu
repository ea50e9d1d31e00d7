#include "kernels/cuda_executor.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>

#include "kernels/cuda_launch.h"
#include "kernels/cuda_memory.h"

namespace gpuraid::kern {
namespace {

std::string cuda_msg(const char* what, cudaError_t e) {
  return std::string(what) + ": " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")";
}

uint64_t round_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

}  // namespace

CudaExecutor::CudaExecutor(const CudaBackendOptions& o, bool ats)
    : device_(o.device),
      path_(o.path),
      blob_bytes_(o.batch.max_blob_bytes),
      bounce_bytes_(o.bounce_bytes),
      view_(cuda_registry(), ats) {}

std::unique_ptr<CudaExecutor> CudaExecutor::create(const CudaBackendOptions& o, std::string* err) {
  cudaError_t e = cudaSetDevice(o.device);
  if (e != cudaSuccess) return *err = cuda_msg("cudaSetDevice", e), nullptr;
  int can_map = 0, ats = 0, pools = 0;
  if ((e = cudaDeviceGetAttribute(&can_map, cudaDevAttrCanMapHostMemory, o.device)) != cudaSuccess ||
      // With ATS (e.g. Grace Hopper) the device reads any host page in place.
      // Plain HMM is not used: it would migrate the engine's pages to the GPU.
      (e = cudaDeviceGetAttribute(&ats, cudaDevAttrPageableMemoryAccessUsesHostPageTables, o.device)) !=
          cudaSuccess ||
      (e = cudaDeviceGetAttribute(&pools, cudaDevAttrMemoryPoolsSupported, o.device)) != cudaSuccess)
    return *err = cuda_msg("cudaDeviceGetAttribute", e), nullptr;
  if (!can_map) return *err = "the device cannot map host memory (zero-copy)", nullptr;
  std::unique_ptr<CudaExecutor> x(new CudaExecutor(o, ats != 0));
  x->pools_ = pools != 0;
  x->max_blocks_ = o.max_blocks ? o.max_blocks : cuda_parity_max_blocks(o.device, &e);
  if (x->max_blocks_ == 0) return *err = cuda_msg("parity kernel occupancy", e), nullptr;
  int least = 0, greatest = 0;
  if ((e = cudaDeviceGetStreamPriorityRange(&least, &greatest)) != cudaSuccess)
    return *err = cuda_msg("cudaDeviceGetStreamPriorityRange", e), nullptr;
  for (uint32_t i = 0; i < std::max(1u, o.slots); i++) {
    auto s = std::make_unique<Slot>();
    Slot& sl = *s;
    x->slots_.push_back(std::move(s));
    const char* step = "cudaStreamCreateWithPriority";
    e = cudaStreamCreateWithPriority(&sl.stream, cudaStreamNonBlocking, o.low_priority ? least : greatest);
    void* p = nullptr;
    if (e == cudaSuccess) {
      step = "cudaHostAlloc (slot words)";
      e = cudaHostAlloc(&p, sizeof(SlotCtrl), cudaHostAllocMapped | cudaHostAllocPortable);
    }
    if (e == cudaSuccess) {
      sl.mem.ctrl = static_cast<SlotCtrl*>(p);
      memset(p, 0, sizeof(SlotCtrl));
      step = "cudaHostGetDevicePointer (slot words)";
      void* d = nullptr;
      e = cudaHostGetDevicePointer(&d, p, 0);
      sl.mem.ctrl_dev = reinterpret_cast<uint64_t>(d);
    }
    if (e == cudaSuccess) {
      step = "cudaHostAlloc (descriptors)";
      e = cudaHostAlloc(&p, x->blob_bytes_, cudaHostAllocDefault);
      if (e == cudaSuccess) sl.mem.blob = static_cast<uint8_t*>(p), sl.mem.blob_cap = x->blob_bytes_;
    }
    if (e == cudaSuccess) {
      step = "cudaMalloc (descriptors)";
      e = cudaMalloc(&p, x->blob_bytes_);
      if (e == cudaSuccess) sl.mem.dev_blob = reinterpret_cast<uint64_t>(p);
    }
    if (e == cudaSuccess && !x->pools_) {
      // No stream-ordered allocator: scratch for the largest batch now.
      step = "cudaMalloc (scratch)";
      e = cudaMalloc(&p, o.batch.max_batch_bytes);
      if (e == cudaSuccess) sl.mem.scratch_dev = reinterpret_cast<uint64_t>(p), sl.mem.scratch_cap = o.batch.max_batch_bytes;
    }
    if (e != cudaSuccess) return *err = cuda_msg(step, e), nullptr;
  }
  return x;
}

void CudaExecutor::free_slot(Slot& s) {
  auto check = [](cudaError_t e, const char* what) {
    if (e != cudaSuccess) fprintf(stderr, "gpuraid: %s: %s\n", what, cudaGetErrorString(e));
  };
  if (s.mem.scratch_dev)
    check(pools_ ? cudaFreeAsync(reinterpret_cast<void*>(s.mem.scratch_dev), s.stream)
                 : cudaFree(reinterpret_cast<void*>(s.mem.scratch_dev)),
          "freeing scratch");
  if (s.stream) check(cudaStreamSynchronize(s.stream), "cudaStreamSynchronize");
  if (s.mem.dev_blob) check(cudaFree(reinterpret_cast<void*>(s.mem.dev_blob)), "cudaFree");
  if (s.mem.blob) check(cudaFreeHost(s.mem.blob), "cudaFreeHost");
  if (s.mem.bounce) check(cudaFreeHost(s.mem.bounce), "cudaFreeHost");
  if (s.mem.ctrl) check(cudaFreeHost(s.mem.ctrl), "cudaFreeHost");
  if (s.stream) check(cudaStreamDestroy(s.stream), "cudaStreamDestroy");
}

// Only once the device let go of every slot (the backend leaks the executor
// otherwise): freeing memory a stalled batch may still write would be worse.
CudaExecutor::~CudaExecutor() {
  if (cudaSetDevice(device_) != cudaSuccess) return;
  for (auto& s : slots_) free_slot(*s);
}

bool CudaExecutor::register_memory(void* p, size_t len, std::string* err) {
  const cudaError_t e = cudaSetDevice(device_);
  if (e != cudaSuccess) return *err = cuda_msg("cudaSetDevice", e), false;
  return cuda_host_register(p, len, err);
}

void CudaExecutor::unregister_memory(void* p) {
  if (cudaSetDevice(device_) == cudaSuccess) cuda_host_unregister(p);
}

void CUDART_CB CudaExecutor::on_done(void* self) { static_cast<CudaExecutor*>(self)->wake(); }

// The slot is idle: its last batch ended, so the old scratch is free to go
// (and stream order keeps the free behind anything still queued).
cudaError_t CudaExecutor::grow_scratch(Slot& s, uint64_t need) {
  if (!pools_) return cudaErrorMemoryAllocation;  // sized for the largest batch at creation
  const uint64_t n = round_up(std::max(need, s.mem.scratch_cap * 2), uint64_t(1) << 20);
  void* p = nullptr;
  cudaError_t e = cudaMallocAsync(&p, n, s.stream);
  if (e != cudaSuccess) return e;
  if (s.mem.scratch_dev) e = cudaFreeAsync(reinterpret_cast<void*>(s.mem.scratch_dev), s.stream);
  s.mem.scratch_dev = reinterpret_cast<uint64_t>(p);
  s.mem.scratch_cap = n;
  return e;
}

cudaError_t CudaExecutor::ensure_bounce(Slot& s) {
  if (s.mem.bounce) return cudaSuccess;
  void* p = nullptr;
  cudaError_t e = cudaHostAlloc(&p, bounce_bytes_, cudaHostAllocMapped | cudaHostAllocPortable);
  if (e != cudaSuccess) return e;
  void* d = nullptr;
  if ((e = cudaHostGetDevicePointer(&d, p, 0)) != cudaSuccess) {
    (void)cudaFreeHost(p);
    return e;
  }
  s.mem.bounce = static_cast<uint8_t*>(p);
  s.mem.bounce_dev = reinterpret_cast<uint64_t>(d);
  s.mem.bounce_cap = bounce_bytes_;
  return cudaSuccess;
}

bool CudaExecutor::slot_idle(Slot& s) {
  if (!s.tainted) return true;
  const cudaError_t e = cudaStreamQuery(s.stream);
  if (e == cudaErrorNotReady) return false;
  s.tainted = false;
  return true;
}

// The batch's launches, in stream order (slot_program.h).
cudaError_t CudaExecutor::enqueue(Slot& s, const char** step) {
  const SlotLaunch& l = s.launch;
  cudaError_t r;
  *step = "cudaMemcpyAsync (descriptors)";
  if ((r = cudaMemcpyAsync(reinterpret_cast<void*>(s.mem.dev_blob), s.mem.blob, l.blob_bytes,
                           cudaMemcpyHostToDevice, s.stream)))
    return r;
  *step = "parity kernel launch";
  if ((r = cuda_launch_parity_kernel(l.main, l.main_grid, s.stream))) return r;
  *step = "commit launch";
  if (l.has_commit && (r = cuda_launch_parity_kernel(l.commit, l.commit_grid, s.stream))) return r;
  *step = "signal launch";
  if ((r = cuda_launch_signal_kernel(l.signal, s.stream))) return r;
  *step = "cudaLaunchHostFunc";
  return signals() ? cudaLaunchHostFunc(s.stream, on_done, this) : cudaSuccess;
}

LaunchResult CudaExecutor::launch(uint32_t slot, HostBatch& b, bool* staged, std::string* err) {
  Slot& s = *slots_[slot];
  cudaError_t e = cudaSetDevice(device_);
  if (e != cudaSuccess) return *err = cuda_msg("cudaSetDevice", e), LaunchResult::Failed;
  if (!slot_idle(s)) return LaunchResult::Refused;
  const SlotProgram::Needs need = s.prog.plan(b, view_, path_ == CudaDataPath::Staged);
  if (need.blob > s.mem.blob_cap) return LaunchResult::Refused;  // the backend caps batches below this
  if (need.bounce > 0) {
    if ((e = ensure_bounce(s)) != cudaSuccess) return *err = cuda_msg("bounce memory", e), LaunchResult::Failed;
    if (need.bounce > s.mem.bounce_cap) return LaunchResult::Refused;
  }
  if (need.scratch > s.mem.scratch_cap && (e = grow_scratch(s, need.scratch)) != cudaSuccess)
    return *err = cuda_msg("scratch memory", e), LaunchResult::Failed;
  if (++seq_ == 0) seq_ = 1;
  s.prog.start(b, s.mem, seq_, max_blocks_, &s.launch);
  *staged = need.staged;
  const char* step = "";
  e = enqueue(s, &step);
  if (e == cudaSuccess) return LaunchResult::Launched;
  *err = cuda_msg(step, e);
  s.tainted = true;
  // Part of the batch may be queued. Closed gate: nothing reaches host
  // memory; the jobs can run elsewhere.
  if (s.prog.abort(s.mem)) return LaunchResult::Failed;
  // The commit is running: let it end; if the stream then finished, only
  // the signal is missing and the batch is done.
  if (cudaStreamSynchronize(s.stream) == cudaSuccess) {
    __atomic_store_n(&s.mem.ctrl->marker, s.prog.seq(), __ATOMIC_RELEASE);
    s.tainted = false;
    return LaunchResult::Launched;
  }
  return LaunchResult::Failed;  // residual risk: a device fault during the commit copy
}

int CudaExecutor::query(uint32_t slot, HostBatch& b, bool deep, std::string* err) {
  Slot& s = *slots_[slot];
  if (s.prog.finished(s.mem)) {
    s.prog.complete(b, s.mem);
    return 1;
  }
  if (!deep) return 0;
  cudaError_t e = cudaSetDevice(device_);
  if (e == cudaSuccess) e = cudaStreamQuery(s.stream);
  if (e == cudaErrorNotReady) return 0;
  if (s.prog.finished(s.mem)) {  // it ended between the two looks
    s.prog.complete(b, s.mem);
    return 1;
  }
  *err = e == cudaSuccess ? "the stream went idle without the batch's completion marker" : cuda_msg("batch", e);
  (void)s.prog.abort(s.mem);  // an error stops the stream: keep anything left of it from writing
  s.tainted = true;
  return -1;
}

bool CudaExecutor::abort(uint32_t slot) {
  Slot& s = *slots_[slot];
  return s.prog.abort(s.mem);
}

bool CudaExecutor::quiesce(uint64_t timeout_ns) {
  if (cudaSetDevice(device_) != cudaSuccess) return false;
  const auto until = std::chrono::steady_clock::now() + std::chrono::nanoseconds(timeout_ns);
  for (auto& s : slots_) {
    for (;;) {
      const cudaError_t e = cudaStreamQuery(s->stream);
      if (e != cudaErrorNotReady) break;  // idle, or failed (then it runs nothing more)
      if (std::chrono::steady_clock::now() >= until) return false;
      usleep(100);
    }
  }
  return true;
}

}  // namespace gpuraid::kern
