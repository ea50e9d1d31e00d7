// Host shim: lets g++ compile CUDA kernel source unchanged and run it on
// the CPU. It supplies only what the CUDA language provides (qualifiers,
// built-in index variables, vector types, __syncthreads, atomics) and a
// launcher; the arithmetic the tests compare is the kernel's own code.
//
// Execution model (shim::launch): blocks run one after another. Within a
// block thread 0 runs first on its own fiber (ucontext). If it finishes
// without reaching __syncthreads, the block has no barriers (CUDA requires
// a barrier to be reached by the whole block or by none of it), so threads
// 1..n-1 run as plain calls; a __syncthreads in one of them is a divergent
// barrier and aborts. If thread 0 stops at a barrier, every thread gets a
// fiber and the block runs in phases: each fiber runs until its next
// barrier or its end, and the barrier opens once all live threads reach
// it, as on a GPU. __shared__ variables are function statics, shared by
// the block's fibers. Launches are single-threaded but reentrant per OS
// thread (state is thread_local).
#pragma once
#ifdef __CUDACC__
#error "host_shim.h is for host compilers only"
#endif
#include <cstdint>

#define __global__ inline
#define __device__
#define __host__
#define __forceinline__ inline __attribute__((always_inline))
#define __restrict__ __restrict
#define __launch_bounds__(...)
#define __shared__ static thread_local

struct dim3 {
  unsigned x = 1, y = 1, z = 1;
  constexpr dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}
};
struct uint3 {
  unsigned x = 0, y = 0, z = 0;
};
struct alignas(16) uint4 {
  unsigned x, y, z, w;
};

inline thread_local uint3 threadIdx;
inline thread_local uint3 blockIdx;
inline thread_local dim3 blockDim;
inline thread_local dim3 gridDim;

namespace gpuraid::shim {

void syncthreads();
// Runs fn(arg) once per thread of the grid (see the file comment).
void launch_raw(dim3 grid, dim3 block, void (*fn)(void*), void* arg);

// kernel is any callable; typically [&] { my_kernel(args...); }.
template <class F>
void launch(dim3 grid, dim3 block, F kernel) {
  launch_raw(grid, block, [](void* p) { (*static_cast<F*>(p))(); }, &kernel);
}

}  // namespace gpuraid::shim

inline void __syncthreads() { gpuraid::shim::syncthreads(); }
// Orders this thread's memory accesses for every observer (the host, other
// threads standing in for the device).
inline void __threadfence_system() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }

inline unsigned atomicOr(unsigned* p, unsigned v) {
  return __atomic_fetch_or(p, v, __ATOMIC_RELAXED);
}
inline unsigned atomicAdd(unsigned* p, unsigned v) {
  return __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
}
