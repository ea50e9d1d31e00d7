// Pinned, mapped host memory for the engine's buffers, and the registry of
// such ranges that tells the CUDA backend which buffers kernels may read in
// place (zero-copy) and which must be staged through device memory.
#include <cuda_runtime.h>

#include <map>
#include <mutex>
#include <shared_mutex>

#include "kernels/cuda_backend.h"
#include "kernels/cuda_memory.h"

namespace gpuraid {
namespace {

struct Range {
  size_t len;
  uint64_t dev;  // device address of the first byte
  bool owned;    // from cudaHostAlloc (else cudaHostRegister)
};

struct Registry {
  std::shared_mutex mu;
  std::map<uint64_t, Range> ranges;  // by host start address
};

Registry& registry() {
  static Registry r;
  return r;
}

void set_err(std::string* err, const char* what, cudaError_t e) {
  if (err) *err = std::string(what) + ": " + cudaGetErrorString(e);
}

bool add_range(void* p, size_t len, bool owned, std::string* err) {
  void* dev = nullptr;
  cudaError_t e = cudaHostGetDevicePointer(&dev, p, 0);
  if (e != cudaSuccess) {
    set_err(err, "cudaHostGetDevicePointer", e);
    return false;
  }
  Registry& r = registry();
  std::unique_lock lock(r.mu);
  r.ranges[reinterpret_cast<uint64_t>(p)] = Range{len, reinterpret_cast<uint64_t>(dev), owned};
  return true;
}

// Removes the range starting at p if it is there and of that kind.
bool remove_range(void* p, bool owned) {
  Registry& r = registry();
  std::unique_lock lock(r.mu);
  auto it = r.ranges.find(reinterpret_cast<uint64_t>(p));
  if (it == r.ranges.end() || it->second.owned != owned) return false;
  r.ranges.erase(it);
  return true;
}

}  // namespace

void* cuda_host_alloc_mapped(size_t bytes, std::string* err) {
  void* p = nullptr;
  // Portable: mapped for every device; WriteCombined is not used because
  // the CPU also reads these buffers (ISA-L fallback, the engine itself).
  cudaError_t e = cudaHostAlloc(&p, bytes, cudaHostAllocMapped | cudaHostAllocPortable);
  if (e != cudaSuccess) {
    set_err(err, "cudaHostAlloc", e);
    return nullptr;
  }
  if (!add_range(p, bytes, true, err)) {
    cudaFreeHost(p);
    return nullptr;
  }
  return p;
}

void cuda_host_free(void* p) {
  if (p && remove_range(p, true)) cudaFreeHost(p);
}

bool cuda_host_register(void* p, size_t bytes, std::string* err) {
  cudaError_t e = cudaHostRegister(p, bytes, cudaHostRegisterMapped | cudaHostRegisterPortable);
  if (e != cudaSuccess) {
    set_err(err, "cudaHostRegister", e);
    return false;
  }
  if (!add_range(p, bytes, false, err)) {
    cudaHostUnregister(p);
    return false;
  }
  return true;
}

void cuda_host_unregister(void* p) {
  if (p && remove_range(p, false)) cudaHostUnregister(p);
}

namespace kern {

bool cuda_registered_address(uint64_t host, size_t len, uint64_t* dev) {
  Registry& r = registry();
  std::shared_lock lock(r.mu);
  auto it = r.ranges.upper_bound(host);
  if (it == r.ranges.begin()) return false;
  --it;
  const uint64_t start = it->first;
  if (host + len > start + it->second.len) return false;
  *dev = it->second.dev + (host - start);
  return true;
}

}  // namespace kern
}  // namespace gpuraid
