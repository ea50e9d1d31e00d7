// Pinned, mapped host memory for the engine's buffers, and the registry of
// such ranges that tells the CUDA executor which buffers kernels may read
// and write in place (zero-copy) and which it must bounce.
#include <cuda_runtime.h>

#include <cstdio>

#include "kernels/cuda_backend.h"
#include "kernels/cuda_memory.h"

namespace gpuraid {
namespace {

using kern::AddressRegistry;

AddressRegistry& registry() {
  static AddressRegistry r;
  return r;
}

void set_err(std::string* err, const char* what, cudaError_t e) {
  if (err) *err = std::string(what) + ": " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")";
}

bool device_pointer(void* p, uint64_t* dev, std::string* err) {
  void* d = nullptr;
  const cudaError_t e = cudaHostGetDevicePointer(&d, p, 0);
  if (e != cudaSuccess) {
    set_err(err, "cudaHostGetDevicePointer", e);
    return false;
  }
  *dev = reinterpret_cast<uint64_t>(d);
  return true;
}

// Existing memory: pinned and mapped here, unpinned when the last user goes.
struct RegisterMapper final : AddressRegistry::Mapper {
  std::string* err = nullptr;
  bool map(void* p, size_t len, uint64_t* dev) override {
    const cudaError_t e = cudaHostRegister(p, len, cudaHostRegisterMapped | cudaHostRegisterPortable);
    if (e != cudaSuccess) {
      set_err(err, "cudaHostRegister", e);
      return false;
    }
    if (device_pointer(p, dev, err)) return true;
    (void)cudaHostUnregister(p);
    return false;
  }
  void unmap(void* p) override {
    const cudaError_t e = cudaHostUnregister(p);
    if (e != cudaSuccess) fprintf(stderr, "gpuraid: cudaHostUnregister: %s\n", cudaGetErrorString(e));
  }
};

// Memory cudaHostAlloc made pinned and mapped: recorded here, freed when the
// last user goes.
struct AllocatedMapper final : AddressRegistry::Mapper {
  std::string* err = nullptr;
  bool map(void* p, size_t, uint64_t* dev) override { return device_pointer(p, dev, err); }
  void unmap(void* p) override {
    const cudaError_t e = cudaFreeHost(p);
    if (e != cudaSuccess) fprintf(stderr, "gpuraid: cudaFreeHost: %s\n", cudaGetErrorString(e));
  }
};

bool added(AddressRegistry::Add a, std::string* err) {
  switch (a) {
    case AddressRegistry::Add::Added:
    case AddressRegistry::Add::Counted: return true;
    case AddressRegistry::Add::Overlaps:
      if (err) *err = "the range overlaps a registered range of another length";
      return false;
    case AddressRegistry::Add::Refused: return false;  // the mapper said why
  }
  return false;
}

}  // namespace

void* cuda_host_alloc_mapped(size_t bytes, std::string* err) {
  void* p = nullptr;
  // Portable: mapped for every device; WriteCombined is not used because
  // the CPU also reads these buffers (ISA-L fallback, the engine itself).
  const cudaError_t e = cudaHostAlloc(&p, bytes, cudaHostAllocMapped | cudaHostAllocPortable);
  if (e != cudaSuccess) {
    set_err(err, "cudaHostAlloc", e);
    return nullptr;
  }
  AllocatedMapper m;
  m.err = err;
  if (added(registry().add(p, bytes, m), err)) return p;
  (void)cudaFreeHost(p);
  return nullptr;
}

void cuda_host_free(void* p) {
  AllocatedMapper m;
  if (p) registry().remove(p, m);
}

bool cuda_host_register(void* p, size_t bytes, std::string* err) {
  if (!p || bytes == 0) {
    if (err) *err = "nothing to register";
    return false;
  }
  RegisterMapper m;
  m.err = err;
  return added(registry().add(p, bytes, m), err);
}

void cuda_host_unregister(void* p) {
  RegisterMapper m;
  if (p) registry().remove(p, m);
}

namespace kern {

const AddressRegistry& cuda_registry() { return registry(); }

}  // namespace kern
}  // namespace gpuraid
