// The CUDA parity backend and the pinned host memory it reads in place.
// Plain C++: includable without the CUDA toolkit's headers.
//
// Data paths, chosen per batch:
//  * zero-copy: buffers in registered memory (cuda_host_alloc_mapped() or
//    cuda_host_register()) are read and written by the kernel over PCIe;
//    only the descriptors (and the results of Verify) are copied.
//  * staged: buffers are copied to device memory (cudaMemcpyAsync), the
//    kernel runs on the copies, outputs are copied back. Used for buffers
//    the device cannot address, or always when asked for.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "engine/parity/parity_backend.h"
#include "kernels/batching_backend.h"

namespace gpuraid {

enum class CudaDataPath : uint8_t {
  Auto,      // zero-copy when every buffer is registered (and staged_min_len allows), else staged
  ZeroCopy,  // zero-copy only; an unregistered buffer fails the batch (-> CPU)
  Staged,    // always through device memory
};

struct CudaBackendOptions {
  kern::BatchOptions batch;
  int device = 0;
  uint32_t slots = 4;  // batches in flight at once (one stream each)
  CudaDataPath path = CudaDataPath::Auto;
  // Auto: also stage batches whose buffers average at least this many bytes
  // (copy engines can beat SM reads over PCIe for big strips; measure with
  // gpuraid-gpu-bench). 0: stage only buffers the device cannot address.
  uint32_t staged_min_len = 0;
  uint32_t max_blocks = 0;  // grid cap; 0: as many blocks as the device holds resident
};

// nullptr with *err set when no usable GPU exists (no driver, no device,
// no kernel image for it, allocation failure).
std::unique_ptr<ParityBackend> make_cuda_backend(std::string* err);
std::unique_ptr<kern::BatchingBackend> make_cuda_backend(const CudaBackendOptions& opts,
                                                         std::string* err);

// Pinned host memory mapped into the device's address space, for the
// engine's buffer arena. nullptr (and *err) on failure. Free with
// cuda_host_free().
void* cuda_host_alloc_mapped(size_t bytes, std::string* err = nullptr);
void cuda_host_free(void* p);
// Pins and maps existing memory (e.g. a hugepage arena); undo with
// cuda_host_unregister(p) before freeing it.
bool cuda_host_register(void* p, size_t bytes, std::string* err = nullptr);
void cuda_host_unregister(void* p);

}  // namespace gpuraid
