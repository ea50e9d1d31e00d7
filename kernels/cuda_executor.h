// The CUDA executor behind the CUDA backend (internal to kernels/; .cu only).
//
// One stream per slot, at the device's lowest priority unless asked
// otherwise; batches in flight together never share a buffer (the
// backend's contract), so slots need no order among themselves. Per batch,
// on its slot's stream, as slot_program.h says: descriptors H2D, batch
// kernel, gated commit, signal kernel (completion marker in mapped host
// memory) [, a host function that writes the backend's eventfd, in
// Completion::Event only]. Nothing on the data path synchronises the device:
// slot memory is allocated at creation, scratch grows stream-ordered
// (cudaMallocAsync / cudaFreeAsync), bounce memory is allocated once, when
// first needed.
#pragma once
#include <cuda_runtime.h>

#include <memory>
#include <string>
#include <vector>

#include "kernels/cuda_backend.h"
#include "kernels/executor.h"
#include "kernels/slot_program.h"

namespace gpuraid::kern {

class CudaExecutor final : public Executor {
 public:
  static std::unique_ptr<CudaExecutor> create(const CudaBackendOptions& o, std::string* err);
  ~CudaExecutor() override;
  const char* name() const override { return "cuda"; }
  uint32_t slots() const override { return uint32_t(slots_.size()); }
  bool register_memory(void* p, size_t len, std::string* err) override;
  void unregister_memory(void* p) override;
  LaunchResult launch(uint32_t slot, HostBatch& b, bool* staged, std::string* err) override;
  int query(uint32_t slot, HostBatch& b, bool deep, std::string* err) override;
  bool abort(uint32_t slot) override;
  bool quiesce(uint64_t timeout_ns) override;

 private:
  struct Slot {
    cudaStream_t stream = nullptr;
    SlotProgram prog;
    SlotMemory mem;
    SlotLaunch launch;
    // Set when a launch failed part-way: the stream may still run what was
    // queued, so the slot is not used again until it is idle.
    bool tainted = false;
  };

  CudaExecutor(const CudaBackendOptions& o, bool ats);
  static void CUDART_CB on_done(void* self);
  cudaError_t enqueue(Slot& s, const char** step);
  cudaError_t grow_scratch(Slot& s, uint64_t need);
  cudaError_t ensure_bounce(Slot& s);
  bool slot_idle(Slot& s);
  void free_slot(Slot& s);

  int device_ = 0;
  CudaDataPath path_ = CudaDataPath::Auto;
  bool pools_ = false;  // stream-ordered allocation (cudaMallocAsync)
  uint32_t max_blocks_ = 0;
  uint32_t blob_bytes_ = 0;
  uint64_t bounce_bytes_ = 0;
  uint32_t seq_ = 0;
  AddressView view_;
  std::vector<std::unique_ptr<Slot>> slots_;
};

}  // namespace gpuraid::kern
