// The parity backend: one batch-oriented interface for every way of
// computing parity (ISA-L on the CPU, CUDA kernels on a GPU, the scalar
// reference in tests). A reactor owns one instance; instances are not
// thread-safe. All buffers are host pointers; a GPU backend requires them
// to be device-accessible (pinned + mapped, see kernels/).
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "engine/codec.h"

namespace gpuraid {

enum class ParityOp : uint8_t {
  Encode,   // src[0..k-1] data -> dst[0..m-1] parity
  Update,   // dst[0..m-1] ^= sum_i coeff(row, col[i]) * (src[i] ^ src2[i])   (read-modify-write)
  Recover,  // dst[e] = row erased[e], from the k rows src[j] = row survivor[j]
  Verify,   // src[0..k-1] data, src[k..k+m-1] stored parity -> mismatch_rows
};

// What callers may pass; every backend takes all of it, on every CPU, and
// fails anything else with status -EINVAL (engine/parity/job_check.h):
//   * len: any 1..INT_MAX bytes per buffer, and no buffer needs any
//     alignment. The fast path everywhere is 64-byte aligned buffers and
//     len a multiple of 64 (the engine's buffers are 4 KiB aligned); the CPU
//     backend bounces other buffers through aligned scratch, the GPU
//     backends hand such jobs to the CPU backend.
//   * code: Xor has m = 1, PQ m = 2; k >= 1 and k + m <= kMaxMembers.
//   * Encode reads src[0..k-1] and writes dst[0..m-1]; Verify reads
//     src[0..k+m-1] (data, then stored parity). nsrc/ndst are not read.
//   * Update: nsrc <= k distinct columns src_idx[i] < k (0: nothing to do);
//     dst[0..m-1] are read and written in place. src[i] (old data) is the
//     backend's scratch: its content afterwards is unspecified (ISA-L
//     leaves the delta there), so it counts as written.
//   * Recover: nsrc = k distinct survivor rows, ndst = 1..m distinct erased
//     rows, none a survivor (rows 0..k+m-1).
//   * Overlap: no buffer a job writes may overlap another buffer of the job
//     (inputs may overlap one another). Pointers are never null.
// A failed job (status < 0) leaves its outputs unspecified, and a Verify
// then reports every parity row as mismatched.
struct ParityJob {
  ParityOp op = ParityOp::Encode;
  const Codec* codec = nullptr;
  uint32_t len = 0;       // bytes per buffer: 1..INT_MAX, any alignment (see above)
  uint32_t nsrc = 0;      // Update: number of changed data strips; Recover: k; others: k (+m)
  uint32_t ndst = 0;      // Encode/Update: m; Recover: number of erased rows
  uint8_t* src[kMaxMembers];
  uint8_t* src2[kMaxMembers];   // Update: new data (src = old data)
  uint8_t* dst[kMaxMembers];
  uint8_t src_idx[kMaxMembers];  // Update: data column; Recover: survivor row
  uint8_t dst_idx[kMaxMembers];  // Recover: erased row (0..k+m-1)
  // Update, optional (pp[0] null: not wanted): where the write-hole guard
  // wants the write's partial parity of every row r, dst[r] ^ (row r over
  // the old data of the written strips): the row over the strips the
  // write leaves alone, at pp[r] (len bytes each). pp[0] may be src[0]:
  // the old data is dead once the update has read it, and writing there
  // hits lines the pass has just loaded (a buffer of its own cost every
  // line's fetch); a backend reads each block of the old data before it
  // writes that block's partial parity. The others overlap no buffer. A
  // backend that makes them in the update's own pass (the CPU one: RAID 5
  // always, GF codes for one written strip on AVX-512BW) fills them and
  // pp_sum[r] (ppl_payload_sum) and sets pp_made; otherwise pp_made stays
  // false and the guard computes them after (engine/ppl/ppl_stage.cpp).
  // The caller sets pp and pp_made before every submit.
  uint8_t* pp[kMaxParity] = {};
  uint32_t pp_sum[kMaxParity] = {};
  bool pp_made = false;
  // Results.
  int status = 0;               // 0, or -errno when the backend could not run it
  uint32_t mismatch_rows = 0;   // Verify: bit j set when parity row j differs

  void (*done)(ParityJob* job) = nullptr;  // runs exactly once per job
  void* ctx = nullptr;
};

// Where a backend's jobs ran, since it was made (engine stats, the bench's
// JSON, the daemon's metrics). Batches count kernel launches by data path:
// zero-copy (every buffer read and written in place, registered with
// register_memory) or staged (some buffer bounced through the backend's own
// memory because it was not registered). Jobs count where each one ran.
// Written by the owning reactor only; any thread may read (counters()).
struct ParityCounters {
  uint64_t zero_copy_batches = 0;
  uint64_t staged_batches = 0;
  uint64_t cpu_batches = 0;        // accelerator batches that ran on the CPU instead (routed, fallback)
  uint64_t device_jobs = 0;        // jobs the accelerator computed
  uint64_t cpu_jobs = 0;           // jobs a CPU backend ran as such
  uint64_t routed_jobs = 0;        // sent to the CPU by the small-job rule (cheaper there)
  uint64_t capped_jobs = 0;        // sent to the CPU because the accelerator's share cap was reached
  uint64_t unsupported_jobs = 0;   // shapes the kernels do not take (CPU)
  uint64_t fallback_jobs = 0;      // run on the CPU because the device failed, hung or is paused
  uint64_t device_errors = 0;      // batches that failed on the device
  uint64_t device_timeouts = 0;    // batches that did not finish within the time limit
  uint64_t device_resumes = 0;     // times the device was taken back after a pause
  bool on_cpu = false;             // now running on the CPU instead of its device (paused)

  ParityCounters& operator+=(const ParityCounters& o);
  uint64_t jobs_on_cpu() const { return cpu_jobs + routed_jobs + capped_jobs + unsupported_jobs + fallback_jobs; }
};

// Every count of ParityCounters with its name (the bench's JSON keys): what
// sums and differences walk.
struct ParityCount {
  const char* name;
  uint64_t ParityCounters::*field;
};
inline constexpr ParityCount kParityCounts[] = {
    {"zero_copy_batches", &ParityCounters::zero_copy_batches}, {"staged_batches", &ParityCounters::staged_batches},
    {"cpu_batches", &ParityCounters::cpu_batches},             {"device_jobs", &ParityCounters::device_jobs},
    {"cpu_jobs", &ParityCounters::cpu_jobs},                   {"routed_jobs", &ParityCounters::routed_jobs},
    {"capped_jobs", &ParityCounters::capped_jobs},             {"unsupported_jobs", &ParityCounters::unsupported_jobs},
    {"fallback_jobs", &ParityCounters::fallback_jobs},         {"device_errors", &ParityCounters::device_errors},
    {"device_timeouts", &ParityCounters::device_timeouts},     {"device_resumes", &ParityCounters::device_resumes},
};

inline ParityCounters& ParityCounters::operator+=(const ParityCounters& o) {
  for (const ParityCount& c : kParityCounts) this->*c.field += o.*c.field;
  on_cpu = on_cpu || o.on_cpu;
  return *this;
}

class ParityBackend {
 public:
  virtual ~ParityBackend() = default;
  virtual const char* name() const = 0;
  // Takes n jobs. Each job's done() runs once, either before submit returns
  // (CPU backends) or from a later poll() on the same thread (GPU).
  // Jobs in flight at the same time (across submits) may run concurrently:
  // no job may write a buffer that another in-flight job reads or writes
  // (the engine's stripe locks and per-op buffers guarantee it).
  virtual void submit(ParityJob* const* jobs, size_t n) = 0;
  // Runs the completions that are ready; returns how many.
  virtual size_t poll() { return 0; }
  // Becomes readable when poll() has completions to run; -1 if never needed.
  virtual int event_fd() const { return -1; }
  // Jobs handed to submit() whose done() has not run yet.
  virtual size_t in_flight() const { return 0; }
  // True while an accelerator backend runs its jobs on the CPU instead of
  // its device (after a device error or a hang, until the device is taken
  // back); *reason says why. Any thread may ask (the daemon turns changes
  // into events).
  virtual bool fell_back(std::string* reason) const {
    (void)reason;
    return false;
  }

  // Makes [p, p+len) addressable by the backend's device (pinned and
  // mapped, for a GPU), so that jobs on buffers there run zero-copy. The
  // registration is per process, as CUDA's is: one made through any
  // instance serves every instance; registering a range again only counts
  // it (unregister as often). CPU backends accept every range and do
  // nothing. false (*err) when the memory cannot be registered: jobs on it
  // still run, through the backend's staged path.
  virtual bool register_memory(void* p, size_t len, std::string* err) {
    (void)p, (void)len, (void)err;
    return true;
  }
  // Undoes one register_memory(p, ...) (same start address). Only once no
  // job in flight uses the range.
  virtual void unregister_memory(void* p) { (void)p; }

  // How long the owner may wait before calling poll() again: 0 when poll()
  // has work now (the caller should not sleep), UINT64_MAX when nothing is
  // pending. A backend that polls its device's completion word in memory
  // (no signal on event_fd()) says here when to look next.
  virtual uint64_t poll_within_ns() { return in_flight() ? 0 : UINT64_MAX; }

  // Any thread.
  virtual ParityCounters counters() const { return {}; }
};

// KernelCpu: the CUDA kernels' source run on the CPU behind the GPU's
// batching (kernels/kernel_cpu_backend.h), as strict as a GPU about
// registered memory: what CI runs the engine and daemon on in place of a GPU.
enum class ParityBackendKind : uint8_t { Auto, Cpu, Cuda, Reference, KernelCpu };
bool parse_parity_backend(const std::string& s, ParityBackendKind* out);

// Settings of the accelerator backends (cuda, kernel-cpu); CPU backends
// ignore them. The daemon's and the bench's --gpu-* options.
struct AcceleratorSettings {
  // Completions signalled on an eventfd by a host callback, instead of the
  // owner polling a completion word in mapped memory.
  bool event_completion = false;
  // Which batches run on the CPU instead: -1 the measured rule (those the
  // CPU computes in less time than a launch costs it); 0 none; n > 0
  // batches of fewer than n bytes.
  int64_t route_below = -1;
  double max_gbps = 0;       // cap on the device's share, GB/s read plus written (0: none)
  uint32_t timeout_ms = 500; // a batch not done by then is given up (its jobs run on the CPU)
  bool low_priority = true;  // the device's lowest stream priority
  uint32_t max_blocks = 0;   // grid cap (a share of the SMs); 0: all the device holds
  // "" or what is wrong, for an error message.
  std::string check() const;
};
// "auto" (-1), "off" (0) or a size ("64K") into route_below; false on a bad word.
bool parse_gpu_route(const std::string& s, int64_t* out);

// Creates a backend; Auto picks CUDA when a usable GPU exists, else the CPU.
// Returns nullptr and sets *err when the requested kind is unavailable.
std::unique_ptr<ParityBackend> make_parity_backend(ParityBackendKind kind, std::string* err);
std::unique_ptr<ParityBackend> make_parity_backend(ParityBackendKind kind, const AcceleratorSettings& s,
                                                   std::string* err);

// The scalar reference (gf::mul loops); slow, for tests and cross-checks.
std::unique_ptr<ParityBackend> make_reference_backend();
std::unique_ptr<ParityBackend> make_cpu_backend();

}  // namespace gpuraid
