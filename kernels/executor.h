// Where a batch's kernel runs: a CUDA device (cuda_backend.cu) or the host
// shim (kernel_cpu_backend.cpp). The batching backend drives one executor
// through a fixed set of slots, one batch per slot, in launch order.
#pragma once
#include <cstdint>
#include <string>

#include "kernels/batch_builder.h"

namespace gpuraid::kern {

class Executor {
 public:
  virtual ~Executor() = default;
  virtual const char* name() const = 0;
  // Batches that can be in flight at once; slots are 0..slots()-1.
  virtual uint32_t slots() const = 0;
  // Set once, before any launch: written (eventfd semantics) when a batch
  // finishes, from any thread.
  void set_wake_fd(int fd) { wake_fd_ = fd; }
  // Makes the backend's event fd readable (thread-safe).
  void wake() const;

  // Starts b in a free slot. false (with *err) means nothing of b reached
  // host memory that a rerun on the CPU would not simply overwrite: no
  // Update output was committed, and the device no longer touches b's buffers.
  virtual bool launch(uint32_t slot, HostBatch& b, std::string* err) = 0;
  // 1: finished and its Verify results are in b.mismatch; 0: running;
  // -1 (*err): failed with the same guarantee as a failed launch().
  virtual int query(uint32_t slot, HostBatch& b, std::string* err) = 0;
  // Returns once the device has stopped touching every launched batch
  // (after a failure, before the CPU reruns them).
  virtual void quiesce() {}

 private:
  int wake_fd_ = -1;
};

}  // namespace gpuraid::kern
