// The parity kernels run on the CPU through the host shim, behind the same
// batching backend, slot program (kernels/slot_program.h) and launch
// geometry as the CUDA backend. Always built: it is how CI proves the kernel
// source and the GPU's data path without a GPU.
//
// As strict as a GPU about memory: only ranges registered through
// register_memory() (process-wide, as CUDA's host registrations) are read
// and written in place; any other buffer is bounced through the slot's own
// memory and its batch counts as staged. A test that finds staged batches
// has found engine buffers a GPU could not map.
#pragma once
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>

#include "engine/parity/parity_backend.h"
#include "kernels/batching_backend.h"

namespace gpuraid {

// A test's handle on injected hangs: the stand-in device stops at the hang
// until release().
class ShimFaults {
 public:
  void release();
  // Waits (at most timeout_ms) until the device stopped at a hang.
  bool wait_hung(int timeout_ms);
  // Called by the device thread at an injected hang.
  void hang();

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool hung_ = false, released_ = false;
};

inline kern::BatchOptions kernel_cpu_batch_defaults() {
  kern::BatchOptions b;
  b.routing = kern::Routing::Off;  // the point is to run the kernels
  return b;
}

struct KernelCpuOptions {
  kern::BatchOptions batch = kernel_cpu_batch_defaults();
  // Grid cap, standing in for a device's resident blocks: small values make
  // every block walk many tiles and jobs, as on a loaded GPU.
  uint32_t max_blocks = 64;
  // Bounce every buffer (the staged path) instead of reading registered
  // memory in place.
  bool staged = false;
  // A thread per slot stands in for the device's streams: launches return
  // at once and batches finish later, as on a GPU. Otherwise a launch runs
  // its batch to the end before it returns.
  bool async = false;
  uint32_t slots = 0;                  // 0: 1, or 4 when async
  uint64_t bounce_bytes = 16u << 20;  // per slot, for unregistered buffers
  // Fault injection for tests (launch count, 0-based; -1 never):
  int fail_launch_at = -1;         // the launch fails before anything runs
  int fail_after_kernel_at = -1;   // the device reports an error after the batch kernel, before its commit
  int hang_before_commit_at = -1;  // async: the device stops before the commit until faults->release()
  int hang_in_commit_at = -1;      // async: it stops after its commit passed the gate, until release()
  std::shared_ptr<ShimFaults> faults;  // made when a hang is asked for and none is given
};

std::unique_ptr<ParityBackend> make_kernel_cpu_backend();
std::unique_ptr<kern::BatchingBackend> make_kernel_cpu_backend(const KernelCpuOptions& opts);
// The factory's kernel-cpu backend (--parity-backend kernel-cpu): the
// kernels on threads standing in for a GPU's streams (async), so the engine
// and the daemon run the GPU's data path, polled completions included.
// Routing stays off unless the settings give a threshold: the kernels are
// what this backend is for.
std::unique_ptr<ParityBackend> make_kernel_cpu_backend(const AcceleratorSettings& s);

}  // namespace gpuraid
