// The process-wide registry of host memory the CUDA device reads and writes
// in place (zero-copy): memory from cuda_host_alloc_mapped() and
// cuda_host_register() (public calls in cuda_backend.h). Internal to
// kernels/ (.cu files).
#pragma once
#include "kernels/address_registry.h"

namespace gpuraid::kern {

const AddressRegistry& cuda_registry();

}  // namespace gpuraid::kern
