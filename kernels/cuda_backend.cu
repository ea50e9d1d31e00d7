// make_cuda_backend(): checks that a usable GPU exists and that the parity
// kernel computes right on it, then wraps a CudaExecutor in the batching
// backend (batching, polled completion, routing, fallback to ISA-L).
#include <cuda_runtime.h>

#include <vector>

#include "engine/gf256.h"
#include "kernels/cuda_backend.h"
#include "kernels/cuda_executor.h"
#include "kernels/cuda_launch.h"

namespace gpuraid {
namespace {

std::string cuda_msg(const char* what, cudaError_t e) {
  return std::string(what) + ": " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")";
}

// Encodes one small RAID 6 stripe in device memory and checks it against
// the scalar field: proves the binary has a kernel image for this GPU and
// that the kernel computes right on it.
bool self_test(std::string* err) {
  constexpr uint32_t k = 3, len = 256;
  const Codec codec(CodeKind::PQ, k, 2);
  std::vector<uint8_t> h((k + 2) * len), got(2 * len);
  for (size_t i = 0; i < h.size(); i++) h[i] = uint8_t(i * 131 + 7);
  uint8_t *d = nullptr, *dblob = nullptr;
  cudaError_t e = cudaMalloc(&d, h.size());
  if (e != cudaSuccess) return *err = cuda_msg("cudaMalloc", e), false;

  ParityJob job;
  job.codec = &codec;
  job.len = len;
  for (uint32_t i = 0; i < k; i++) job.src[i] = d + i * len;
  for (uint32_t r = 0; r < 2; r++) job.dst[r] = d + (k + r) * len;
  kern::BatchBuilder builder;
  kern::HostBatch b;
  builder.add(&job, &b);
  const kern::BlobLayout l = kern::blob_layout(b);
  std::vector<uint8_t> blob(l.total);
  kern::write_blob(b, b.ptrs.data(), blob.data());

  e = cudaMalloc(&dblob, l.total);
  if (e == cudaSuccess) e = cudaMemcpy(d, h.data(), h.size(), cudaMemcpyHostToDevice);
  if (e == cudaSuccess) e = cudaMemcpy(dblob, blob.data(), l.total, cudaMemcpyHostToDevice);
  if (e == cudaSuccess) {
    e = kern::cuda_launch_parity_kernel(kern::blob_kbatch(b, l, reinterpret_cast<uintptr_t>(dblob), nullptr), 1,
                                        nullptr);
  }
  if (e == cudaSuccess) e = cudaMemcpy(got.data(), d + k * len, got.size(), cudaMemcpyDeviceToHost);
  const cudaError_t f1 = dblob ? cudaFree(dblob) : cudaSuccess, f2 = cudaFree(d);
  if (e == cudaSuccess) e = f1 != cudaSuccess ? f1 : f2;
  if (e != cudaSuccess) return *err = cuda_msg("parity kernel self-test", e), false;
  for (uint32_t x = 0; x < len; x++) {
    uint8_t p = 0, q = 0;
    for (uint32_t i = 0; i < k; i++) {
      p ^= h[i * len + x];
      q ^= gf::mul(codec.coeff(1, i), h[i * len + x]);
    }
    if (got[x] != p || got[len + x] != q) {
      *err = "parity kernel self-test: wrong P/Q on this GPU";
      return false;
    }
  }
  return true;
}

}  // namespace

CudaBackendOptions cuda_backend_options(const AcceleratorSettings& s) {
  CudaBackendOptions o;
  apply_accelerator_settings(s, &o.batch);
  o.low_priority = s.low_priority;
  o.max_blocks = s.max_blocks;
  return o;
}

std::unique_ptr<kern::BatchingBackend> make_cuda_backend(const CudaBackendOptions& o, std::string* err) {
  std::string why;
  if (!err) err = &why;
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) return *err = cuda_msg("no usable GPU: cudaGetDeviceCount", e), nullptr;
  if (n == 0) return *err = "no CUDA device present", nullptr;
  if (o.device < 0 || o.device >= n) return *err = "CUDA device ordinal out of range", nullptr;
  e = cudaSetDevice(o.device);
  if (e != cudaSuccess) return *err = cuda_msg("cudaSetDevice", e), nullptr;
  if (!self_test(err)) return nullptr;
  auto exec = kern::CudaExecutor::create(o, err);
  if (!exec) return nullptr;
  return std::make_unique<kern::BatchingBackend>("cuda", std::move(exec), o.batch);
}

std::unique_ptr<ParityBackend> make_cuda_backend(const AcceleratorSettings& s, std::string* err) {
  return make_cuda_backend(cuda_backend_options(s), err);
}

std::unique_ptr<ParityBackend> make_cuda_backend(std::string* err) {
  return make_cuda_backend(CudaBackendOptions{}, err);
}

}  // namespace gpuraid
