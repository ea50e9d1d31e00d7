// Test harness for parity backends: describes jobs independently of their
// buffers, runs the same jobs on a backend under test, on ISA-L and on the
// scalar reference, and checks that every output matches bit for bit.
// Shared by the host-shim tests and the GPU test.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "engine/codec.h"
#include "engine/parity/parity_backend.h"

namespace gpuraid::test {

struct Allocator {
  void* (*alloc)(size_t bytes);
  void (*free)(void* p);
};
// 4 KiB-aligned heap memory.
Allocator aligned_allocator();
// The same, registered with be's device (ParityBackend::register_memory) as
// the engine's arenas are: what an accelerator reads and writes in place.
// One such backend at a time; it must outlive the allocations.
Allocator registered_allocator(ParityBackend& be);

// One job, described apart from the buffers it will run on.
struct JobSpec {
  const Codec* codec = nullptr;
  ParityOp op = ParityOp::Encode;
  uint32_t len = 4096;
  std::vector<uint8_t> cols;       // Update: changed data columns
  std::vector<uint8_t> survivors;  // Recover: the k rows read
  std::vector<uint8_t> erased;     // Recover: the rows rebuilt
  uint32_t corrupt = 0;            // Verify: parity rows damaged (bit mask)
  uint32_t misalign = 0;           // bytes added to the first buffer's address
  uint64_t seed = 1;
};

// Every code the kernels take: RAID 5, RAID 6, ec m = 1..4.
struct CodeShape {
  CodeKind kind;
  uint32_t m;
  const char* name;
};
const std::vector<CodeShape>& all_codes();

// Codecs live as long as the test binary; one per (kind, k, m).
const Codec* codec(CodeKind kind, uint32_t k, uint32_t m);

// Spec builders.
JobSpec encode_spec(const Codec* c, uint32_t len, uint64_t seed);
JobSpec update_spec(const Codec* c, uint32_t len, std::vector<uint8_t> cols, uint64_t seed);
JobSpec recover_spec(const Codec* c, uint32_t len, std::vector<uint8_t> survivors,
                     std::vector<uint8_t> erased, uint64_t seed);
JobSpec verify_spec(const Codec* c, uint32_t len, uint32_t corrupt, uint64_t seed);
// Recover `erased`, reading the first k rows that are neither erased nor in `skip`.
JobSpec recover_first_survivors(const Codec* c, uint32_t len, std::vector<uint8_t> erased,
                                uint64_t skip_mask, uint64_t seed);

// n random jobs of every kind (k 2..8, every code, lengths 64..max_len).
std::vector<JobSpec> mixed_specs(size_t n, uint32_t max_len, uint64_t seed);
// For every code and each k in ks (k >= 2 for RAID 5/6): every set of 1..m lost rows (data and
// parity mixed), rebuilt from the first k rows left (len bytes), and, where
// more than one row is lost, the last one alone while the others stay lost
// (len2 bytes).
std::vector<JobSpec> every_erasure_pattern(const std::vector<uint32_t>& ks, uint32_t len, uint32_t len2);

struct RunOptions {
  size_t submit_chunk = SIZE_MAX;  // jobs per submit() call
  bool with_reference = true;      // also compare with the scalar reference
  double timeout_s = 120;
};

// Runs specs on `be` (buffers from `alloc`), on ISA-L and (optionally) on
// the reference backend, and reports every difference with gtest EXPECTs:
// outputs, status, mismatch_rows, done() exactly once, and, where the truth
// is known (Recover rows, Verify damage), that too.
void expect_matches_isal(ParityBackend& be, const std::vector<JobSpec>& specs, const Allocator& alloc,
                         const RunOptions& opts = {});

// Submits jobs in chunks and polls until every done() ran or the timeout,
// waiting between polls as a reactor does (poll_within_ns(), the event fd).
// Returns the number of jobs whose done() has run.
size_t run_to_completion(ParityBackend& be, std::vector<ParityJob*>& jobs, size_t chunk,
                         double timeout_s);

}  // namespace gpuraid::test
