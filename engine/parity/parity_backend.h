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
  // Results.
  int status = 0;               // 0, or -errno when the backend could not run it
  uint32_t mismatch_rows = 0;   // Verify: bit j set when parity row j differs

  void (*done)(ParityJob* job) = nullptr;  // runs exactly once per job
  void* ctx = nullptr;
};

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
  // True once an accelerator backend gave up its device for the CPU for
  // good; *reason says why. Any thread may ask (the daemon turns it into an
  // event).
  virtual bool fell_back(std::string* reason) const {
    (void)reason;
    return false;
  }
};

enum class ParityBackendKind : uint8_t { Auto, Cpu, Cuda, Reference };
bool parse_parity_backend(const std::string& s, ParityBackendKind* out);

// Creates a backend; Auto picks CUDA when a usable GPU exists, else the CPU.
// Returns nullptr and sets *err when the requested kind is unavailable.
std::unique_ptr<ParityBackend> make_parity_backend(ParityBackendKind kind, std::string* err);

// The scalar reference (gf::mul loops); slow, for tests and cross-checks.
std::unique_ptr<ParityBackend> make_reference_backend();
std::unique_ptr<ParityBackend> make_cpu_backend();

}  // namespace gpuraid
