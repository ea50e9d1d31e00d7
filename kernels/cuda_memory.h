// Which host buffers the GPU can read in place, and at which device address.
// Registered: memory from cuda_host_alloc_mapped() / cuda_host_register().
// Internal to kernels/ (the public calls are in cuda_backend.h).
#pragma once
#include <cstddef>
#include <cstdint>

namespace gpuraid::kern {

// Device address of [host, host+len) if it lies inside one registered
// range; false if it does not.
bool cuda_registered_address(uint64_t host, size_t len, uint64_t* dev);

}  // namespace gpuraid::kern
