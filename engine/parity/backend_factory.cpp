#include "engine/parity/parity_backend.h"

namespace gpuraid {

// Provided by kernels/ when the CUDA backend is built (GPURAID_HAVE_CUDA);
// returns nullptr with a reason when no usable GPU is present.
#ifdef GPURAID_HAVE_CUDA
std::unique_ptr<ParityBackend> make_cuda_backend(std::string* err);
#endif

bool parse_parity_backend(const std::string& s, ParityBackendKind* out) {
  if (s == "auto") *out = ParityBackendKind::Auto;
  else if (s == "cpu") *out = ParityBackendKind::Cpu;
  else if (s == "cuda") *out = ParityBackendKind::Cuda;
  else if (s == "reference") *out = ParityBackendKind::Reference;
  else return false;
  return true;
}

std::unique_ptr<ParityBackend> make_parity_backend(ParityBackendKind kind, std::string* err) {
  switch (kind) {
    case ParityBackendKind::Cpu: return make_cpu_backend();
    case ParityBackendKind::Reference: return make_reference_backend();
    case ParityBackendKind::Cuda:
#ifdef GPURAID_HAVE_CUDA
      return make_cuda_backend(err);
#else
      if (err) *err = "this build has no CUDA backend (CUDA toolkit not found at configure time)";
      return nullptr;
#endif
    case ParityBackendKind::Auto: {
#ifdef GPURAID_HAVE_CUDA
      std::string why;
      if (auto b = make_cuda_backend(&why)) return b;
#endif
      return make_cpu_backend();
    }
  }
  if (err) *err = "unknown parity backend";
  return nullptr;
}

}  // namespace gpuraid
