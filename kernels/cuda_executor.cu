#include "kernels/cuda_executor.h"

#include <algorithm>
#include <cstring>

#include "kernels/cuda_launch.h"
#include "kernels/cuda_memory.h"

namespace gpuraid::kern {
namespace {

std::string cuda_msg(const char* what, cudaError_t e) {
  return std::string(what) + ": " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")";
}

size_t round_up(size_t v, size_t a) { return (v + a - 1) / a * a; }

}  // namespace

cudaError_t CudaBuf::reserve(size_t need) {
  if (need <= cap_) return cudaSuccess;
  const size_t n = round_up(std::max(need, cap_ * 2), size_t(1) << 16);
  release();
  void* p = nullptr;
  const cudaError_t e = host_ ? cudaHostAlloc(&p, n, cudaHostAllocDefault) : cudaMalloc(&p, n);
  if (e != cudaSuccess) return e;
  p_ = static_cast<uint8_t*>(p);
  cap_ = n;
  return cudaSuccess;
}

void CudaBuf::release() {
  if (p_) host_ ? cudaFreeHost(p_) : cudaFree(p_);
  p_ = nullptr;
  cap_ = 0;
}

std::unique_ptr<CudaExecutor> CudaExecutor::create(const CudaBackendOptions& o, std::string* err) {
  std::unique_ptr<CudaExecutor> x(new CudaExecutor());
  x->device_ = o.device;
  x->path_ = o.path;
  x->staged_min_len_ = o.staged_min_len;
  cudaError_t e = cudaSetDevice(o.device);
  if (e != cudaSuccess) return *err = cuda_msg("cudaSetDevice", e), nullptr;
  int can_map = 0, ats = 0;
  cudaDeviceGetAttribute(&can_map, cudaDevAttrCanMapHostMemory, o.device);
  // With ATS (e.g. Grace Hopper) the device reads any host page in place.
  // Plain HMM is not used: it would migrate the engine's pages to the GPU.
  cudaDeviceGetAttribute(&ats, cudaDevAttrPageableMemoryAccessUsesHostPageTables, o.device);
  x->ats_ = ats != 0;
  if (!can_map) x->path_ = CudaDataPath::Staged;
  x->max_blocks_ = o.max_blocks ? o.max_blocks : cuda_parity_max_blocks(o.device, &e);
  if (x->max_blocks_ == 0) return *err = cuda_msg("parity kernel occupancy", e), nullptr;
  for (uint32_t i = 0; i < std::max(1u, o.slots); i++) {
    auto s = std::make_unique<Slot>();
    e = cudaStreamCreateWithFlags(&s->stream, cudaStreamNonBlocking);
    if (e == cudaSuccess) e = cudaEventCreateWithFlags(&s->done, cudaEventDisableTiming);
    x->slots_.push_back(std::move(s));
    if (e != cudaSuccess) return *err = cuda_msg("stream/event creation", e), nullptr;
  }
  return x;
}

CudaExecutor::~CudaExecutor() {
  cudaSetDevice(device_);
  quiesce();  // no host function may run once this is gone
  for (auto& s : slots_) {
    if (s->done) cudaEventDestroy(s->done);
    if (s->stream) cudaStreamDestroy(s->stream);
  }
}

void CudaExecutor::quiesce() {
  cudaSetDevice(device_);
  for (auto& s : slots_)
    if (s->stream) cudaStreamSynchronize(s->stream);
}

void CUDART_CB CudaExecutor::on_done(void* self) { static_cast<CudaExecutor*>(self)->wake(); }

bool CudaExecutor::translate(uint64_t host, size_t len, uint64_t* dev) const {
  if (ats_) {
    *dev = host;
    return true;
  }
  return cuda_registered_address(host, len, dev);
}

bool CudaExecutor::want_staged(const HostBatch& b) const {
  if (path_ == CudaDataPath::Staged) return true;
  if (path_ == CudaDataPath::ZeroCopy || staged_min_len_ == 0 || b.ptrs.empty()) return false;
  return b.bytes / b.ptrs.size() >= staged_min_len_;
}

// Zero-copy: registered buffers in place; Update outputs to device scratch.
// *mapped = false (and nothing placed) when some buffer is not registered.
bool CudaExecutor::place_zero_copy(HostBatch& b, Slot& s, bool* mapped, std::string* err) {
  *mapped = true;
  for (size_t i = 0; i < b.ptrs.size(); i++) {
    if (b.roles[i] == Role::UpdateOut) continue;
    if (!translate(b.ptrs[i], b.ptr_len[i], &s.placed[i])) {
      *mapped = false;
      return true;
    }
  }
  const cudaError_t e = s.d_data.reserve(update_scratch_bytes(b));
  if (e != cudaSuccess) return *err = cuda_msg("cudaMalloc (update scratch)", e), false;
  place_update_outputs(b, reinterpret_cast<uintptr_t>(s.d_data.data()), s.placed.data());
  build_commit(b, s.placed.data(), &s.commit);
  s.commit_placed = s.commit.ptrs;
  for (size_t i = 0; i < s.commit.ptrs.size(); i++)
    if (s.commit.roles[i] == Role::Out)  // an Update's parity: registered, it was read as input
      translate(s.commit.ptrs[i], s.commit.ptr_len[i], &s.commit_placed[i]);
  return true;
}

// Staged: every buffer gets a device copy (plan_staging).
bool CudaExecutor::place_staged(HostBatch& b, Slot& s, std::string* err) {
  plan_staging(b, &s.plan);
  const cudaError_t e = s.d_data.reserve(s.plan.bytes);
  if (e != cudaSuccess) return *err = cuda_msg("cudaMalloc (staging)", e), false;
  const uintptr_t base = reinterpret_cast<uintptr_t>(s.d_data.data());
  for (size_t i = 0; i < b.ptrs.size(); i++) s.placed[i] = base + s.plan.offset[i];
  for (size_t i : s.plan.copy_in)
    s.h2d.push_back(Copy{reinterpret_cast<void*>(s.placed[i]), reinterpret_cast<void*>(b.ptrs[i]),
                         b.ptr_len[i]});
  for (size_t i : s.plan.copy_out)
    s.d2h.push_back(Copy{reinterpret_cast<void*>(b.ptrs[i]), reinterpret_cast<void*>(s.placed[i]),
                         b.ptr_len[i]});
  return true;
}

// Queues the batch's work on its slot's stream (see the header for the order).
cudaError_t CudaExecutor::enqueue(HostBatch& b, Slot& s, const char** step) {
  cudaStream_t st = s.stream;
  const BlobLayout l1 = blob_layout(b), l2 = blob_layout(s.commit);
  const uintptr_t dbase = reinterpret_cast<uintptr_t>(s.d_blob.data());
  uint32_t* d_results = reinterpret_cast<uint32_t*>(dbase + s.results_off);
  cudaError_t r;
  *step = "cudaMemcpyAsync (descriptors)";
  if ((r = cudaMemcpyAsync(s.d_blob.data(), s.h_blob.data(), s.results_off, cudaMemcpyHostToDevice, st)))
    return r;
  *step = "cudaMemcpyAsync (staged input)";
  for (const Copy& c : s.h2d)
    if ((r = cudaMemcpyAsync(c.dst, c.src, c.n, cudaMemcpyHostToDevice, st))) return r;
  *step = "cudaMemsetAsync (results)";
  if ((r = cudaMemsetAsync(d_results, 0, size_t(b.nverify) * 4 + 4, st))) return r;
  *step = "parity kernel launch";
  if ((r = cuda_launch_parity_kernel(blob_kbatch(b, l1, dbase, d_results),
                                     grid_blocks(b.ntiles, max_blocks_), st)))
    return r;
  *step = "cudaMemcpyAsync (results)";
  if ((r = cudaMemcpyAsync(s.h_blob.data() + s.results_off, d_results, size_t(b.nverify) * 4,
                           cudaMemcpyDeviceToHost, st)))
    return r;
  // Commit: from here on Update outputs reach host memory.
  *step = "commit launch";
  if (!s.commit.empty() &&
      (r = cuda_launch_parity_kernel(blob_kbatch(s.commit, l2, dbase + l1.total, nullptr),
                                     grid_blocks(s.commit.ntiles, max_blocks_), st)))
    return r;
  *step = "cudaMemcpyAsync (staged output)";
  for (const Copy& c : s.d2h)
    if ((r = cudaMemcpyAsync(c.dst, c.src, c.n, cudaMemcpyDeviceToHost, st))) return r;
  *step = "cudaMemcpyAsync (completion marker)";
  if ((r = cudaMemcpyAsync(s.h_blob.data() + s.marker_off, s.d_blob.data() + s.seq_off, 4,
                           cudaMemcpyDeviceToHost, st)))
    return r;
  *step = "cudaEventRecord";
  if ((r = cudaEventRecord(s.done, st))) return r;
  *step = "cudaLaunchHostFunc";
  return cudaLaunchHostFunc(st, on_done, this);
}

bool CudaExecutor::launch(uint32_t slot, HostBatch& b, std::string* err) {
  Slot& s = *slots_[slot];
  cudaSetDevice(device_);
  s.placed.assign(b.ptrs.size(), 0);
  s.commit.clear();
  s.commit_placed.clear();
  s.h2d.clear();
  s.d2h.clear();
  bool mapped = false;
  if (!want_staged(b) && !place_zero_copy(b, s, &mapped, err)) return false;
  if (!mapped) {
    if (path_ == CudaDataPath::ZeroCopy) {
      *err = "a buffer is not in registered host memory (zero-copy path)";
      return false;
    }
    if (!place_staged(b, s, err)) return false;
  }

  // Host blob: batch, commit batch, marker seq | results | (host only) marker echo.
  const BlobLayout l1 = blob_layout(b), l2 = blob_layout(s.commit);
  s.seq_off = l1.total + l2.total;
  s.results_off = s.seq_off + 64;
  s.marker_off = s.results_off + round_up(size_t(b.nverify) * 4 + 4, 64);
  s.nverify = b.nverify;
  s.seq = ++seq_;
  cudaError_t e = s.h_blob.reserve(s.marker_off + 64);
  if (e == cudaSuccess) e = s.d_blob.reserve(s.marker_off + 64);
  if (e != cudaSuccess) return *err = cuda_msg("descriptor buffers", e), false;
  write_blob(b, s.placed.data(), s.h_blob.data());
  if (!s.commit.empty()) write_blob(s.commit, s.commit_placed.data(), s.h_blob.data() + l1.total);
  // The device copy of the marker sits in the descriptors (seq_off); the
  // host echo at marker_off changes only when the D2H after the commit ran.
  memcpy(s.h_blob.data() + s.seq_off, &s.seq, 4);
  memset(s.h_blob.data() + s.marker_off, 0, 4);
  const char* step = "";
  e = enqueue(b, s, &step);
  if (e == cudaSuccess) return true;
  *err = cuda_msg(step, e);
  // Let the device finish or fail what was queued before the CPU takes over.
  cudaStreamSynchronize(s.stream);
  if (finished(s)) {  // the whole batch ran; only the signalling failed
    wake();
    return true;
  }
  return false;
}

bool CudaExecutor::finished(const Slot& s) const {
  uint32_t echo;
  memcpy(&echo, s.h_blob.data() + s.marker_off, 4);
  return echo == s.seq;
}

int CudaExecutor::query(uint32_t slot, HostBatch& b, std::string* err) {
  Slot& s = *slots_[slot];
  cudaSetDevice(device_);
  const cudaError_t e = cudaEventQuery(s.done);
  if (e == cudaErrorNotReady) return 0;
  // After an error every query fails, also for batches that had finished:
  // the marker says which did.
  if (e != cudaSuccess && !finished(s)) {
    *err = cuda_msg("batch", e);
    return -1;
  }
  const uint32_t* r = reinterpret_cast<const uint32_t*>(s.h_blob.data() + s.results_off);
  b.mismatch.assign(r, r + s.nverify);
  return 1;
}

}  // namespace gpuraid::kern
