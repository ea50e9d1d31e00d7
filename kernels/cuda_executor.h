// The CUDA executor behind the CUDA backend (internal to kernels/; .cu only).
//
// Each slot has its own stream, so one batch's copies overlap another's
// kernel; batches in flight together never share a buffer (the backend's
// contract), so they need no order among themselves. Per batch, in its
// slot's stream:
//   H2D descriptors [, H2D staged inputs] -> zero results -> batch kernel
//   -> D2H results -> commit (zero-copy: a copy launch from device scratch
//   into the Update parity buffers; staged: D2H of every output)
//   -> D2H completion marker -> event -> host function (wakes the reactor).
// No Update output reaches host memory before the commit, which runs only
// if the batch kernel succeeded (CUDA errors are sticky). The marker tells a
// batch that finished from one that did not even after a later error has
// poisoned every query, so a finished batch is never rerun on the CPU.
#pragma once
#include <cuda_runtime.h>

#include <memory>
#include <string>
#include <vector>

#include "kernels/cuda_backend.h"
#include "kernels/executor.h"

namespace gpuraid::kern {

// A buffer in pinned host or device memory that grows on demand.
class CudaBuf {
 public:
  explicit CudaBuf(bool host) : host_(host) {}
  ~CudaBuf() { release(); }
  CudaBuf(const CudaBuf&) = delete;
  CudaBuf& operator=(const CudaBuf&) = delete;
  uint8_t* data() const { return p_; }
  // Grows (geometrically) to at least `need`; only while nothing uses it.
  cudaError_t reserve(size_t need);

 private:
  void release();
  bool host_;
  uint8_t* p_ = nullptr;
  size_t cap_ = 0;
};

class CudaExecutor final : public Executor {
 public:
  static std::unique_ptr<CudaExecutor> create(const CudaBackendOptions& o, std::string* err);
  ~CudaExecutor() override;
  const char* name() const override { return "cuda"; }
  uint32_t slots() const override { return uint32_t(slots_.size()); }
  bool launch(uint32_t slot, HostBatch& b, std::string* err) override;
  int query(uint32_t slot, HostBatch& b, std::string* err) override;
  void quiesce() override;

 private:
  struct Copy {
    void* dst;
    const void* src;
    size_t n;
  };
  struct Slot {
    cudaStream_t stream = nullptr;
    cudaEvent_t done = nullptr;
    CudaBuf h_blob{true}, d_blob{false}, d_data{false};
    std::vector<uint64_t> placed, commit_placed;
    HostBatch commit;
    StagingPlan plan;
    std::vector<Copy> h2d, d2h;
    size_t seq_off = 0, results_off = 0, marker_off = 0;  // in the blobs
    uint32_t nverify = 0;
    uint32_t seq = 0;  // this launch's number, echoed by the marker
  };

  CudaExecutor() = default;
  static void CUDART_CB on_done(void* self);
  bool translate(uint64_t host, size_t len, uint64_t* dev) const;
  bool want_staged(const HostBatch& b) const;
  bool place_zero_copy(HostBatch& b, Slot& s, bool* mapped, std::string* err);
  bool place_staged(HostBatch& b, Slot& s, std::string* err);
  cudaError_t enqueue(HostBatch& b, Slot& s, const char** step);
  bool finished(const Slot& s) const;

  int device_ = 0;
  CudaDataPath path_ = CudaDataPath::Auto;
  uint32_t staged_min_len_ = 0;
  bool ats_ = false;
  uint32_t max_blocks_ = 0;
  uint32_t seq_ = 0;
  std::vector<std::unique_ptr<Slot>> slots_;
};

}  // namespace gpuraid::kern
