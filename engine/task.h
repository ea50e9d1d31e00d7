#pragma once
#include <atomic>
#include <cstdint>

namespace gpuraid {

// A unit of deferred work, embedded in the object it runs for (no allocation).
// A task sits in at most one reactor queue (inbox, deferred, buffer waiters)
// at a time, and once: queuing it again before it ran would link it into a
// list twice (a cycle, or another task run twice), so the reactor checks
// `queued` on every enqueue and clears it just before run(), after which
// the task may queue itself again. The reactor never touches a task after
// run() returns (run may free it).
struct Task {
  void (*run)(Task*) = nullptr;
  void* arg = nullptr;
  Task* next = nullptr;
  bool queued = false;  // read and written through std::atomic_ref (any thread may post)
  uint64_t due_ns = 0;  // Reactor::defer_until: the turn clock it runs at or after

  bool is_queued() const { return std::atomic_ref<const bool>(queued).load(std::memory_order_acquire); }
};

}  // namespace gpuraid
