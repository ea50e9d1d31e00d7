// Where a batch's kernels run: a CUDA device (cuda_executor.cu) or the host
// shim (kernel_cpu_backend.cpp). The batching backend drives one executor
// through a fixed set of slots, one batch per slot; both executors run a
// batch as slot_program.h says.
#pragma once
#include <cstdint>
#include <string>

#include "kernels/batch_builder.h"

namespace gpuraid::kern {

enum class LaunchResult : uint8_t {
  Launched,
  Refused,  // not started, nothing wrong: b does not fit the slot (bounce memory); run it elsewhere
  Failed,   // not started (*err); nothing of b reached host memory
};

class Executor {
 public:
  virtual ~Executor() = default;
  virtual const char* name() const = 0;
  // Batches that can be in flight at once; slots are 0..slots()-1.
  virtual uint32_t slots() const = 0;
  // Set once, before any launch, to have the executor write this eventfd
  // when a batch finishes (from any thread). Unset (-1), nothing signals: the
  // owner polls query() (the completion marker).
  void set_wake_fd(int fd) { wake_fd_ = fd; }
  bool signals() const { return wake_fd_ >= 0; }
  // Makes the backend's event fd readable (thread-safe; nothing when unset).
  void wake() const;

  // The registry of device-addressable host memory (ParityBackend::register_memory).
  virtual bool register_memory(void* p, size_t len, std::string* err) = 0;
  virtual void unregister_memory(void* p) = 0;

  // Starts b in the free slot. *staged: some buffer is bounced (not registered).
  virtual LaunchResult launch(uint32_t slot, HostBatch& b, bool* staged, std::string* err) = 0;
  // 1: finished, outputs in host memory and b.mismatch filled; 0: running;
  // -1 (*err): failed; the slot is free again. Without `deep` only the
  // completion marker is read (cheap enough for every turn); with it the
  // device is also asked for errors.
  virtual int query(uint32_t slot, HostBatch& b, bool deep, std::string* err) = 0;
  // A batch past its time limit: true when it will never write host memory
  // outside its slot (its jobs may be run elsewhere; the slot stays busy
  // until query() reports the batch's end); false when its commit is under
  // way (wait for it).
  virtual bool abort(uint32_t slot) = 0;
  // Waits, at most timeout_ns, until the device stopped touching every
  // launched batch; false when it did not.
  virtual bool quiesce(uint64_t timeout_ns) {
    (void)timeout_ns;
    return true;
  }

 private:
  int wake_fd_ = -1;
};

}  // namespace gpuraid::kern
