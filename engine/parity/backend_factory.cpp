#include "engine/parity/parity_backend.h"
#include "engine/parity/accelerator_options.h"
#include "engine/units.h"

namespace gpuraid {

// Provided by kernels/ when the CUDA backend is built (GPURAID_HAVE_CUDA);
// returns nullptr with a reason when no usable GPU is present.
#ifdef GPURAID_HAVE_CUDA
std::unique_ptr<ParityBackend> make_cuda_backend(const AcceleratorSettings& s, std::string* err);
#endif
// Provided by kernels/ (always built where kernels/ is).
#ifdef GPURAID_HAVE_KERNEL_CPU
std::unique_ptr<ParityBackend> make_kernel_cpu_backend(const AcceleratorSettings& s);
#endif

std::string AcceleratorSettings::check() const {
  if (route_below < -1) return "the routing threshold must be auto, off or a size";
  if (max_gbps < 0 || max_gbps > 10000) return "the GPU cap must be 0 (none) to 10000 GB/s";
  if (timeout_ms < 10 || timeout_ms > 600000) return "the GPU time limit must be 10 ms to 10 minutes";
  if (max_blocks > (1u << 20)) return "the GPU grid cap is out of range";
  return "";
}

bool AcceleratorWords::settings(AcceleratorSettings* out, std::string* err) const {
  AcceleratorSettings s;
  if (completion != "poll" && completion != "event") return *err = "--gpu-completion must be poll or event", false;
  s.event_completion = completion == "event";
  if (!parse_gpu_route(route, &s.route_below))
    return *err = "--gpu-route must be auto, off or a size of 1 byte to 1 GiB ('" + route + "')", false;
  if (priority != "low" && priority != "normal") return *err = "--gpu-priority must be low or normal", false;
  s.low_priority = priority == "low";
  s.max_gbps = max_gbps;
  s.timeout_ms = timeout_ms;
  s.max_blocks = max_blocks;
  if (std::string why = s.check(); !why.empty()) return *err = why, false;
  *out = s;
  return true;
}

bool parse_gpu_route(const std::string& s, int64_t* out) {
  if (s == "auto") return *out = -1, true;
  if (s == "off") return *out = 0, true;
  uint64_t v = 0;
  if (!parse_size(s, &v) || v == 0 || v > (1ull << 30)) return false;
  *out = int64_t(v);
  return true;
}

bool parse_parity_backend(const std::string& s, ParityBackendKind* out) {
  if (s == "auto") *out = ParityBackendKind::Auto;
  else if (s == "cpu") *out = ParityBackendKind::Cpu;
  else if (s == "cuda") *out = ParityBackendKind::Cuda;
  else if (s == "reference") *out = ParityBackendKind::Reference;
  else if (s == "kernel-cpu") *out = ParityBackendKind::KernelCpu;
  else return false;
  return true;
}

std::unique_ptr<ParityBackend> make_parity_backend(ParityBackendKind kind, std::string* err) {
  return make_parity_backend(kind, AcceleratorSettings{}, err);
}

std::unique_ptr<ParityBackend> make_parity_backend(ParityBackendKind kind, const AcceleratorSettings& s,
                                                   std::string* err) {
  if (std::string why = s.check(); !why.empty()) {
    if (err) *err = why;
    return nullptr;
  }
  switch (kind) {
    case ParityBackendKind::Cpu: return make_cpu_backend();
    case ParityBackendKind::Reference: return make_reference_backend();
    case ParityBackendKind::KernelCpu:
#ifdef GPURAID_HAVE_KERNEL_CPU
      return make_kernel_cpu_backend(s);
#else
      if (err) *err = "this build has no kernels/ (the kernel-cpu backend)";
      return nullptr;
#endif
    case ParityBackendKind::Cuda:
#ifdef GPURAID_HAVE_CUDA
      return make_cuda_backend(s, err);
#else
      if (err) *err = "this build has no CUDA backend (CUDA toolkit not found at configure time)";
      return nullptr;
#endif
    case ParityBackendKind::Auto: {
#ifdef GPURAID_HAVE_CUDA
      std::string why;
      if (auto b = make_cuda_backend(s, &why)) return b;
#endif
      return make_cpu_backend();
    }
  }
  if (err) *err = "unknown parity backend";
  return nullptr;
}

}  // namespace gpuraid
