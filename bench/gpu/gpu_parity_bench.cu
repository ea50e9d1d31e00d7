// gpuraid-gpu-bench: throughput of the CUDA parity kernels.
//
//   H2D / D2H  cudaMemcpyAsync of pinned memory: the PCIe baseline.
//   launch     per-launch cost of the batch kernel (chained, and with a sync
//              each), and one job's round trip through the backend (submit
//              -> done, as a reactor sees it) for each completion mode.
//   kernel     encode / update / recover with the data in device memory
//              and in pinned mapped host memory (zero-copy over PCIe),
//              across strip sizes and jobs per launch; descriptors already
//              on the device, times from CUDA events.
//   backend    the same jobs end to end through make_cuda_backend()
//              (submit -> done()), zero-copy and staged paths.
//
// Unit: GB/s = 10^9 bytes of data in per second (encode: k strips, update:
// the changed strip, recover: the k strips read), as the CPU figures in
// shared/notes/parity.md. For host memory the report also gives the PCIe
// reads (every host byte the job reads: an update reads old data, new data
// and old parity) as a share of H2D of the same bytes.
//
// --lane: the subset the GPU lane runs (scripts/gpu-lane.sh, about a minute).
// Exits 0 with "no GPU: skipped" when there is no usable GPU.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "kernels/batch_builder.h"
#include "kernels/cuda_backend.h"
#include "kernels/cuda_launch.h"

namespace gpuraid {
namespace {

using kern::HostBatch;

#define CK(call)                                                                      \
  do {                                                                                \
    cudaError_t e_ = (call);                                                          \
    if (e_ != cudaSuccess) {                                                          \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
      exit(1);                                                                        \
    }                                                                                 \
  } while (0)

struct Options {
  int device = 0;
  bool quick = false;
  bool lane = false;
  double min_seconds = 0.2;  // per measurement
  size_t cap_bytes = size_t(1) << 30;  // buffers per case (device or pinned)
};

struct Code {
  const char* name;
  CodeKind kind;
  uint32_t k, m;
};

enum class Where { Device, Mapped };
const char* where_name(Where w) { return w == Where::Device ? "device" : "host-mapped"; }

// One region of device or pinned mapped memory, carved into strips.
class Arena {
 public:
  Arena(Where w, size_t bytes) : where_(w), cap_(bytes) {
    if (w == Where::Device) {
      CK(cudaMalloc(&p_, bytes));
      CK(cudaMemset(p_, 0x5a, bytes));
    } else {
      std::string err;
      p_ = static_cast<uint8_t*>(cuda_host_alloc_mapped(bytes, &err));
      if (!p_) {
        fprintf(stderr, "cuda_host_alloc_mapped(%zu): %s\n", bytes, err.c_str());
        exit(1);
      }
      memset(p_, 0x5a, bytes);
    }
  }
  ~Arena() { where_ == Where::Device ? (void)cudaFree(p_) : cuda_host_free(p_); }
  uint8_t* take(size_t n) {
    if (used_ + n > cap_) {
      fprintf(stderr, "arena exhausted\n");
      exit(1);
    }
    uint8_t* r = p_ + used_;
    used_ += (n + 4095) / 4096 * 4096;
    return r;
  }

 private:
  Where where_;
  size_t cap_, used_ = 0;
  uint8_t* p_ = nullptr;
};

enum class Op { Encode, Update, Recover };
const char* op_name(Op op) { return op == Op::Encode ? "encode" : op == Op::Update ? "update" : "recover"; }

// Buffers one job of `op` touches, and its bytes of data in.
uint32_t buffers_per_job(Op op, const Codec& c, uint32_t lost) {
  switch (op) {
    case Op::Encode: return c.k() + c.m();
    case Op::Update: return 2 + c.m();
    case Op::Recover: return c.k() + lost;
  }
  return 0;
}
uint64_t data_in(Op op, const Codec& c, uint32_t len) { return uint64_t(op == Op::Update ? 1 : c.k()) * len; }
// Host bytes one job reads over PCIe when its buffers are in host memory.
uint64_t host_reads(Op op, const Codec& c, uint32_t len) {
  return uint64_t(op == Op::Update ? 2 + c.m() : c.k()) * len;
}

// n jobs on fresh strips of the arena. Recover loses data rows 0..lost-1
// and reads the next k rows.
std::vector<ParityJob> make_jobs(Op op, const Codec& c, uint32_t len, uint32_t n, uint32_t lost, Arena& a) {
  std::vector<ParityJob> jobs(n);
  for (ParityJob& j : jobs) {
    j.codec = &c;
    j.len = len;
    j.done = [](ParityJob*) {};
    switch (op) {
      case Op::Encode:
        j.op = ParityOp::Encode;
        j.nsrc = c.k();
        j.ndst = c.m();
        for (uint32_t i = 0; i < c.k(); i++) j.src[i] = a.take(len);
        for (uint32_t r = 0; r < c.m(); r++) j.dst[r] = a.take(len);
        break;
      case Op::Update:
        j.op = ParityOp::Update;
        j.nsrc = 1;
        j.ndst = c.m();
        j.src[0] = a.take(len);
        j.src2[0] = a.take(len);
        j.src_idx[0] = 0;
        for (uint32_t r = 0; r < c.m(); r++) j.dst[r] = a.take(len);
        break;
      case Op::Recover:
        j.op = ParityOp::Recover;
        j.nsrc = c.k();
        j.ndst = lost;
        for (uint32_t i = 0; i < c.k(); i++) {
          j.src[i] = a.take(len);
          j.src_idx[i] = uint8_t(lost + i);
        }
        for (uint32_t e = 0; e < lost; e++) {
          j.dst[e] = a.take(len);
          j.dst_idx[e] = uint8_t(e);
        }
        break;
    }
  }
  return jobs;
}

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Seconds per call of `body` enqueued on s, timed with events: repeats
// until min_seconds, returns the median of 5 such rounds' averages.
template <class F>
double time_stream(cudaStream_t s, const Options& o, F body) {
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  body();  // warm-up
  CK(cudaStreamSynchronize(s));
  // Calibrate repetitions to about min_seconds / 5 per round.
  CK(cudaEventRecord(a, s));
  body();
  CK(cudaEventRecord(b, s));
  CK(cudaEventSynchronize(b));
  float ms = 0;
  CK(cudaEventElapsedTime(&ms, a, b));
  const int reps = std::max(1, int(o.min_seconds / 5 / std::max(1e-6, ms / 1000.0)));
  std::vector<double> rounds;
  for (int r = 0; r < 5; r++) {
    CK(cudaEventRecord(a, s));
    for (int i = 0; i < reps; i++) body();
    CK(cudaEventRecord(b, s));
    CK(cudaEventSynchronize(b));
    CK(cudaEventElapsedTime(&ms, a, b));
    rounds.push_back(ms / 1000.0 / reps);
  }
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  std::sort(rounds.begin(), rounds.end());
  return rounds[2];
}

// A batch's descriptors on the device, ready to launch.
struct DeviceBatch {
  HostBatch hb;
  kern::KBatch kb{};
  uint8_t* blob = nullptr;
  uint32_t grid = 0;
  explicit DeviceBatch(std::vector<ParityJob>& jobs, uint32_t max_blocks) {
    kern::BatchBuilder builder;
    for (ParityJob& j : jobs) builder.add(&j, &hb);
    const kern::BlobLayout l = kern::blob_layout(hb);
    std::vector<uint8_t> h(l.total);
    kern::write_blob(hb, hb.ptrs.data(), h.data());  // Update parity in place
    CK(cudaMalloc(&blob, l.total + 64));
    CK(cudaMemcpy(blob, h.data(), l.total, cudaMemcpyHostToDevice));
    kb = kern::blob_kbatch(hb, l, reinterpret_cast<uintptr_t>(blob),
                           reinterpret_cast<uint32_t*>(blob + l.total));
    grid = kern::grid_blocks(hb.ntiles, max_blocks);
  }
  ~DeviceBatch() { cudaFree(blob); }
  void launch(cudaStream_t s) const { CK(kern::cuda_launch_parity_kernel(kb, grid, s)); }
};

class Bench {
 public:
  Bench(const Options& o) : o_(o) {
    CK(cudaSetDevice(o.device));
    CK(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking));
    cudaError_t e;
    max_blocks_ = kern::cuda_parity_max_blocks(o.device, &e);
    CK(e);
  }
  ~Bench() { cudaStreamDestroy(s_); }

  void device_info() {
    cudaDeviceProp p;
    CK(cudaGetDeviceProperties(&p, o_.device));
    printf("device %d: %s, %d SMs, %.1f GiB, compute %d.%d; parity kernel: %u resident blocks\n", o_.device,
           p.name, p.multiProcessorCount, p.totalGlobalMem / double(1 << 30), p.major, p.minor, max_blocks_);
  }

  // Copy-engine bandwidth of pinned memory, cached by size.
  double h2d_gbs(size_t bytes) { return copy_gbs(bytes, cudaMemcpyHostToDevice, &h2d_); }
  double d2h_gbs(size_t bytes) { return copy_gbs(bytes, cudaMemcpyDeviceToHost, &d2h_); }

  void launch_overhead(const Codec& tiny) {
    Arena a(Where::Device, 1 << 20);
    auto jobs = make_jobs(Op::Encode, tiny, 64, 1, 0, a);
    DeviceBatch b(jobs, max_blocks_);
    const double chained = time_stream(s_, o_, [&] { b.launch(s_); });
    std::vector<double> rt;
    for (int i = 0; i < 200; i++) {
      const double t = now_s();
      b.launch(s_);
      CK(cudaStreamSynchronize(s_));
      rt.push_back(now_s() - t);
    }
    std::sort(rt.begin(), rt.end());
    printf("launch: %.2f us per chained launch, %.2f us launch+sync (median of 200)\n", chained * 1e6,
           rt[100] * 1e6);
    backend_round_trip(tiny);
  }

  // One job through the backend: submit -> done(), waiting as a reactor
  // does (drain(): sleeps while the backend says so, spins when a batch is
  // due), for each way of hearing of a finished batch.
  void backend_round_trip(const Codec& tiny) {
    for (kern::Completion mode : {kern::Completion::Poll, kern::Completion::Event}) {
      CudaBackendOptions co;
      co.device = o_.device;
      co.batch.completion = mode;
      co.batch.routing = kern::Routing::Off;  // the device, whatever the size
      std::string err;
      auto be = make_cuda_backend(co, &err);
      if (!be) {
        printf("backend: unavailable: %s\n", err.c_str());
        return;
      }
      Arena a(Where::Mapped, 1 << 20);
      auto jobs = make_jobs(Op::Encode, tiny, 4096, 1, 0, a);
      std::vector<double> rt;
      for (int i = 0; i < 400; i++) {
        ParityJob* j = &jobs[0];
        const double t = now_s();
        be->submit(&j, 1);
        be->drain();
        if (i >= 100) rt.push_back(now_s() - t);  // the first ones teach it the device's time
      }
      std::sort(rt.begin(), rt.end());
      const ParityCounters c = be->counters();
      printf("backend round trip (one 4 KiB job, submit -> done, %s completion): median %.1f us, p99 %.1f us"
             " (%llu on the device, %llu on the CPU)\n",
             mode == kern::Completion::Poll ? "polled" : "event", rt[rt.size() / 2] * 1e6,
             rt[rt.size() * 99 / 100] * 1e6, (unsigned long long)c.device_jobs,
             (unsigned long long)c.jobs_on_cpu());
    }
  }

  // Kernel-only throughput of n jobs per launch.
  void kernel_case(Op op, const Code& code, uint32_t lost, uint32_t len, uint32_t n, Where w) {
    Codec c(code.kind, code.k, code.m);
    const size_t need = size_t(n) * buffers_per_job(op, c, lost) * len;
    if (need > o_.cap_bytes) return;
    Arena a(w, need);
    auto jobs = make_jobs(op, c, len, n, lost, a);
    DeviceBatch b(jobs, max_blocks_);
    const double t = time_stream(s_, o_, [&] { b.launch(s_); });
    const uint64_t bytes = data_in(op, c, len) * n;
    const double gbs = bytes / t / 1e9;
    std::string extra;
    if (w == Where::Mapped) {
      const uint64_t rd = host_reads(op, c, len) * n;
      char buf[80];
      snprintf(buf, sizeof buf, "  (PCIe reads %.0f%% of H2D %.1f GB/s)", 100 * (rd / t / 1e9) / h2d_gbs(rd),
               h2d_gbs(rd));
      extra = buf;
    }
    printf("kernel  %-7s %-9s %s %8u B x %5u jobs  %-11s %8.1f GB/s  %9.1f us/launch%s\n", op_name(op),
           code.name, lost_name(op, lost).c_str(), len, n, where_name(w), gbs, t * 1e6, extra.c_str());
  }

  // End-to-end through the backend on pinned mapped memory.
  void backend_case(Op op, const Code& code, uint32_t lost, uint32_t len, uint32_t n, CudaDataPath path) {
    Codec c(code.kind, code.k, code.m);
    const size_t need = size_t(n) * buffers_per_job(op, c, lost) * len;
    if (need > o_.cap_bytes) return;
    CudaBackendOptions co;
    co.device = o_.device;
    co.path = path;
    co.batch.routing = kern::Routing::Off;
    co.batch.max_batch_jobs = n;
    co.batch.max_batch_bytes = uint64_t(1) << 40;
    co.batch.max_blob_bytes = 8u << 20;
    co.bounce_bytes = need + (1u << 20);  // staged: the whole batch bounces
    std::string err;
    auto be = make_cuda_backend(co, &err);
    if (!be) {
      printf("backend: unavailable: %s\n", err.c_str());
      return;
    }
    Arena a(Where::Mapped, need);
    auto jobs = make_jobs(op, c, len, n, lost, a);
    std::vector<ParityJob*> ptrs;
    for (ParityJob& j : jobs) ptrs.push_back(&j);
    auto once = [&] {
      be->submit(ptrs.data(), ptrs.size());
      be->drain();
    };
    once();  // warm-up: buffers grow, decode tables are cached
    int reps = 0;
    const double t0 = now_s();
    do {
      once();
      reps++;
    } while (now_s() - t0 < o_.min_seconds);
    const double t = (now_s() - t0) / reps;
    const uint64_t bytes = data_in(op, c, len) * n, rd = host_reads(op, c, len) * n;
    const double gbs = bytes / t / 1e9;
    const ParityCounters pc = be->counters();
    printf("backend %-7s %-9s %s %8u B x %5u jobs  %-11s %8.1f GB/s  %9.1f us/batch  (PCIe reads %.0f%% of H2D)"
           "  batches zero-copy %llu staged %llu, jobs on CPU %llu\n",
           op_name(op), code.name, lost_name(op, lost).c_str(), len, n,
           path == CudaDataPath::Staged ? "staged" : "zero-copy", gbs, t * 1e6, 100 * (rd / t / 1e9) / h2d_gbs(rd),
           (unsigned long long)pc.zero_copy_batches, (unsigned long long)pc.staged_batches,
           (unsigned long long)pc.jobs_on_cpu());
  }

 private:
  static std::string lost_name(Op op, uint32_t lost) {
    return op == Op::Recover ? std::to_string(lost) + " lost" : "      ";
  }

  double copy_gbs(size_t bytes, cudaMemcpyKind kind, std::map<size_t, double>* cache) {
    auto it = cache->find(bytes);
    if (it != cache->end()) return it->second;
    void *h = nullptr, *d = nullptr;
    CK(cudaHostAlloc(&h, bytes, cudaHostAllocDefault));
    CK(cudaMalloc(&d, bytes));
    memset(h, 1, bytes);
    const double t = time_stream(s_, o_, [&] {
      if (kind == cudaMemcpyHostToDevice)
        CK(cudaMemcpyAsync(d, h, bytes, kind, s_));
      else
        CK(cudaMemcpyAsync(h, d, bytes, kind, s_));
    });
    cudaFreeHost(h);
    cudaFree(d);
    return (*cache)[bytes] = bytes / t / 1e9;
  }

  Options o_;
  cudaStream_t s_ = nullptr;
  uint32_t max_blocks_ = 0;
  std::map<size_t, double> h2d_, d2h_;
};

int run(const Options& o) {
  Bench b(o);
  b.device_info();
  for (size_t mb : {1, 16, 256})
    printf("copy: %4zu MiB  H2D %.1f GB/s  D2H %.1f GB/s\n", mb, b.h2d_gbs(mb << 20), b.d2h_gbs(mb << 20));
  const Codec tiny(CodeKind::Xor, 2, 1);
  b.launch_overhead(tiny);

  const std::vector<Code> codes = {
      {"raid5 8+1", CodeKind::Xor, 8, 1},   {"raid6 8+2", CodeKind::PQ, 8, 2},
      {"ec 8+2", CodeKind::Cauchy, 8, 2},   {"ec 8+3", CodeKind::Cauchy, 8, 3},
      {"ec 16+4", CodeKind::Cauchy, 16, 4},
  };
  if (o.lane) {  // what scripts/gpu-lane.sh reads, in about a minute
    const Code& r5 = codes[0];
    const Code& r6 = codes[1];
    const Code& ec83 = codes[3];
    for (const Code* c : {&r6, &ec83}) {
      b.kernel_case(Op::Encode, *c, 0, 65536, 256, Where::Mapped);
      b.kernel_case(Op::Update, *c, 0, 65536, 256, Where::Mapped);
    }
    b.kernel_case(Op::Update, r5, 0, 65536, 256, Where::Mapped);
    for (CudaDataPath path : {CudaDataPath::Auto, CudaDataPath::Staged})
      for (const Code* c : {&r6, &ec83}) b.backend_case(Op::Encode, *c, 0, 65536, 256, path);
    for (const Code* c : {&r5, &r6, &ec83}) {
      b.backend_case(Op::Update, *c, 0, 65536, 256, CudaDataPath::Auto);
      b.backend_case(Op::Update, *c, 0, 4096, 256, CudaDataPath::Auto);
    }
    b.backend_case(Op::Recover, r6, 2, 65536, 256, CudaDataPath::Auto);
    return 0;
  }
  const std::vector<uint32_t> strips = o.quick ? std::vector<uint32_t>{65536}
                                               : std::vector<uint32_t>{4096, 65536, 1 << 20};
  const std::vector<uint32_t> batches = o.quick ? std::vector<uint32_t>{256}
                                                : std::vector<uint32_t>{1, 16, 256, 4096};
  for (Where w : {Where::Device, Where::Mapped})
    for (const Code& code : codes)
      for (uint32_t len : strips)
        for (uint32_t n : batches) b.kernel_case(Op::Encode, code, 0, len, n, w);
  for (Where w : {Where::Device, Where::Mapped})
    for (const Code& code : codes)
      for (uint32_t len : strips) {
        b.kernel_case(Op::Update, code, 0, len, 256, w);
        for (uint32_t lost = 1; lost <= code.m; lost++) b.kernel_case(Op::Recover, code, lost, len, 256, w);
      }
  for (CudaDataPath path : {CudaDataPath::Auto, CudaDataPath::Staged})
    for (const Code& code : codes)
      for (uint32_t len : strips)
        for (uint32_t n : batches) b.backend_case(Op::Encode, code, 0, len, n, path);
  for (const Code& code : codes) {
    b.backend_case(Op::Update, code, 0, 65536, 256, CudaDataPath::Auto);
    b.backend_case(Op::Recover, code, code.m, 65536, 256, CudaDataPath::Auto);
  }
  return 0;
}

}  // namespace
}  // namespace gpuraid

int main(int argc, char** argv) {
  gpuraid::Options o;
  for (int i = 1; i < argc; i++) {
    const std::string a = argv[i];
    if (a == "--quick") {
      o.quick = true;
      o.min_seconds = 0.05;
    } else if (a == "--lane") {
      o.lane = true;
    } else if (a == "--device" && i + 1 < argc) {
      o.device = atoi(argv[++i]);
    } else if (a == "--seconds" && i + 1 < argc) {
      o.min_seconds = atof(argv[++i]);
    } else if (a == "--cap-mib" && i + 1 < argc) {
      o.cap_bytes = size_t(atol(argv[++i])) << 20;
    } else {
      fprintf(stderr,
              "usage: %s [--quick | --lane] [--device N] [--seconds S per measurement] [--cap-mib MiB per case]\n",
              argv[0]);
      return 2;
    }
  }
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess || n == 0) {
    printf("gpuraid-gpu-bench: no GPU: skipped (%s)\n",
           e != cudaSuccess ? cudaGetErrorString(e) : "no CUDA device");
    return 0;
  }
  return gpuraid::run(o);
}
