#pragma once

namespace gpuraid {

// A unit of deferred work, embedded in the object it runs for (no allocation).
struct Task {
  void (*run)(Task*) = nullptr;
  void* arg = nullptr;   // the object the task belongs to
  Task* next = nullptr;
};

}  // namespace gpuraid
