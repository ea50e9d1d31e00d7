// The host shim's launcher: blocks in sequence, threads on fibers where the
// block uses barriers (see host_shim.h for the model).
#include "kernels/host_shim.h"

#include <ucontext.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <vector>

namespace gpuraid::shim {
namespace {

constexpr size_t kStackBytes = 256 * 1024;

struct Fiber {
  enum State : uint8_t { Running, AtBarrier, Done };
  ucontext_t ctx;
  std::unique_ptr<char[]> stack{new char[kStackBytes]};
  State state = Done;
  uint3 tid;
};

// One OS thread's launch state; fibers are kept for the next block.
struct Runner {
  ucontext_t sched;
  std::vector<std::unique_ptr<Fiber>> fibers;
  Fiber* current = nullptr;  // the fiber running now; nullptr in plain calls
  void (*fn)(void*) = nullptr;
  void* arg = nullptr;
  bool active = false;
};
thread_local Runner t_runner;

[[noreturn]] void die(const char* what) {
  fprintf(stderr, "gpuraid host shim: %s\n", what);
  abort();
}

void fiber_main() {
  Runner& r = t_runner;
  r.fn(r.arg);
  r.current->state = Fiber::Done;
  // uc_link returns to the scheduler.
}

uint3 thread_index(unsigned i, dim3 b) {
  return uint3{i % b.x, (i / b.x) % b.y, i / (b.x * b.y)};
}

void start(Fiber* f, unsigned i, dim3 block) {
  Runner& r = t_runner;
  getcontext(&f->ctx);
  f->ctx.uc_stack.ss_sp = f->stack.get();
  f->ctx.uc_stack.ss_size = kStackBytes;
  f->ctx.uc_link = &r.sched;
  makecontext(&f->ctx, fiber_main, 0);
  f->tid = thread_index(i, block);
  f->state = Fiber::Running;
}

// Runs f until it reaches a barrier or returns.
void resume(Fiber* f) {
  Runner& r = t_runner;
  r.current = f;
  threadIdx = f->tid;
  f->state = Fiber::Running;
  if (swapcontext(&r.sched, &f->ctx) != 0) die("swapcontext failed");
  r.current = nullptr;
}

void run_block(dim3 block) {
  Runner& r = t_runner;
  const unsigned n = block.x * block.y * block.z;
  if (n == 0) return;
  if (r.fibers.empty()) r.fibers.push_back(std::make_unique<Fiber>());
  start(r.fibers[0].get(), 0, block);
  resume(r.fibers[0].get());
  if (r.fibers[0]->state == Fiber::Done) {
    // No barrier in this block: the rest run as plain calls.
    for (unsigned i = 1; i < n; i++) {
      threadIdx = thread_index(i, block);
      r.fn(r.arg);
    }
    return;
  }
  while (r.fibers.size() < n) r.fibers.push_back(std::make_unique<Fiber>());
  for (unsigned i = 1; i < n; i++) {
    start(r.fibers[i].get(), i, block);
    resume(r.fibers[i].get());
  }
  // Every live thread now waits at the barrier: open it, run the next phase.
  for (;;) {
    bool any = false;
    for (unsigned i = 0; i < n; i++) {
      Fiber* f = r.fibers[i].get();
      if (f->state != Fiber::AtBarrier) continue;
      any = true;
      resume(f);
    }
    if (!any) break;
  }
}

}  // namespace

void syncthreads() {
  Runner& r = t_runner;
  if (!r.active) die("__syncthreads called outside a kernel launch");
  if (!r.current)
    die("__syncthreads reached by some threads of a block but not by thread 0 (divergent barrier)");
  Fiber* f = r.current;
  f->state = Fiber::AtBarrier;
  if (swapcontext(&f->ctx, &r.sched) != 0) die("swapcontext failed");
}

void launch_raw(dim3 grid, dim3 block, void (*fn)(void*), void* arg) {
  Runner& r = t_runner;
  if (r.active) die("nested kernel launch");
  // Save the caller's view of the built-ins so that a launch from host code
  // leaves them as they were (they mean nothing outside a kernel).
  const uint3 saved_t = threadIdx, saved_b = blockIdx;
  const dim3 saved_bd = blockDim, saved_gd = gridDim;
  r.active = true;
  r.fn = fn;
  r.arg = arg;
  gridDim = grid;
  blockDim = block;
  for (unsigned z = 0; z < grid.z; z++)
    for (unsigned y = 0; y < grid.y; y++)
      for (unsigned x = 0; x < grid.x; x++) {
        blockIdx = uint3{x, y, z};
        run_block(block);
      }
  r.active = false;
  threadIdx = saved_t;
  blockIdx = saved_b;
  blockDim = saved_bd;
  gridDim = saved_gd;
}

}  // namespace gpuraid::shim
