// The CUDA parity backend and the pinned host memory it reads in place.
// Plain C++: includable without the CUDA toolkit's headers.
//
// Data paths, chosen per batch (kernels/slot_program.h):
//  * zero-copy: buffers in registered memory (cuda_host_alloc_mapped(),
//    cuda_host_register(), ParityBackend::register_memory, which the engine
//    calls for every reactor's arena) are read by the kernel in place over
//    PCIe and outputs written back by the commit launch; only descriptors
//    are copied.
//  * staged: a buffer the device cannot address is copied by the CPU into
//    the slot's mapped bounce memory (and back). Counted: in steady state
//    the engine stages nothing.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "engine/parity/parity_backend.h"
#include "kernels/batching_backend.h"

namespace gpuraid {

enum class CudaDataPath : uint8_t {
  Auto,    // registered memory in place, any other buffer bounced
  Staged,  // every buffer bounced (for comparison: gpuraid-gpu-bench)
};

struct CudaBackendOptions {
  kern::BatchOptions batch;
  int device = 0;
  uint32_t slots = 4;  // batches in flight at once (one stream each)
  CudaDataPath path = CudaDataPath::Auto;
  uint32_t max_blocks = 0;  // grid cap (a share of the SMs); 0: as many blocks as the device holds resident
  // Parity streams at the device's lowest priority, so that other work on
  // the GPU (in this process) is scheduled first.
  bool low_priority = true;
  uint64_t bounce_bytes = 16u << 20;  // per slot, allocated when first needed
};

// The backend's options from the settings every accelerator backend takes.
CudaBackendOptions cuda_backend_options(const AcceleratorSettings& s);

// nullptr with *err set when no usable GPU exists (no driver, no device,
// no kernel image for it, allocation failure).
std::unique_ptr<ParityBackend> make_cuda_backend(std::string* err);
std::unique_ptr<ParityBackend> make_cuda_backend(const AcceleratorSettings& s, std::string* err);
std::unique_ptr<kern::BatchingBackend> make_cuda_backend(const CudaBackendOptions& opts, std::string* err);

// Pinned host memory mapped into the device's address space. nullptr (and
// *err) on failure. Free with cuda_host_free().
void* cuda_host_alloc_mapped(size_t bytes, std::string* err = nullptr);
void cuda_host_free(void* p);
// Pins and maps existing memory (e.g. an arena); counted per start address
// (register twice, unregister twice); undo with cuda_host_unregister(p)
// before freeing it.
bool cuda_host_register(void* p, size_t bytes, std::string* err = nullptr);
void cuda_host_unregister(void* p);

}  // namespace gpuraid
