// Words that the host and the device both watch in mapped host memory (the
// completion marker, the commit gate): plain 32-bit loads and stores that
// the compiler may not cache or merge, ordered by __threadfence_system().
// On a GPU these are volatile accesses over PCIe; through the host shim
// (where the "device" may be another thread) release stores and acquire
// loads, which ThreadSanitizer understands, with the fence a full barrier
// (host_shim.h).
#pragma once
#if !defined(__CUDACC__)
#include "kernels/host_shim.h"
#endif
#include <cstdint>

namespace gpuraid::kern {

#if defined(__CUDACC__)
__device__ __forceinline__ void sys_store(uint32_t* p, uint32_t v) { *reinterpret_cast<volatile uint32_t*>(p) = v; }
__device__ __forceinline__ uint32_t sys_load(const uint32_t* p) {
  return *reinterpret_cast<const volatile uint32_t*>(p);
}
#else
inline void sys_store(uint32_t* p, uint32_t v) { __atomic_store_n(p, v, __ATOMIC_RELEASE); }
inline uint32_t sys_load(const uint32_t* p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
#endif

}  // namespace gpuraid::kern
