// Turns ParityJobs into the descriptor arrays of one kernel launch
// (parity_desc.h). Shared by the CUDA backend and the host-shim backend, so
// both run identical descriptors over the same geometry.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/parity/parity_backend.h"
#include "kernels/parity_desc.h"

namespace gpuraid::kern {

// What a pointer of the batch is, so an executor can place it.
enum class Role : uint8_t {
  In,         // read by the kernel
  Out,        // written by the kernel
              // (outputs reach host memory only in the batch's commit launch:
              // slot_program.h)
  UpdateOut,  // an Update's new parity (the same buffer is also read, as In)
  Device,     // already a device address (scratch); not translated
};

struct HostBatch {
  std::vector<KJob> jobs;
  std::vector<uint64_t> ptrs;     // host addresses (Device: device addresses)
  std::vector<Role> roles;        // one per pointer
  std::vector<uint32_t> ptr_len;  // bytes behind each pointer
  std::vector<uint32_t> coefs;
  std::vector<ParityJob*> owners;  // owners[i] made jobs[i] (null for commit copies)
  std::vector<uint32_t> mismatch;  // Verify results, filled in by the executor
  uint32_t ntiles = 0;
  uint32_t nverify = 0;
  uint32_t nout = 0;    // Out and UpdateOut pointers
  uint64_t bytes = 0;  // bytes read plus written

  void clear();
  bool empty() const { return jobs.empty(); }
};

// Where each array lies in one contiguous descriptor blob.
struct BlobLayout {
  size_t jobs = 0, ptrs = 0, coefs = 0, total = 0;
};
BlobLayout blob_layout(const HostBatch& b);
// Writes the blob; ptrs replaces b.ptrs (the executor's device addresses).
void write_blob(const HostBatch& b, const uint64_t* ptrs, uint8_t* blob);
// The kernel argument for a blob at device address `base`, results at `mismatch`.
KBatch blob_kbatch(const HostBatch& b, const BlobLayout& l, uintptr_t base, uint32_t* mismatch);

// Blocks for a batch of ntiles when the device holds max_blocks at once.
uint32_t grid_blocks(uint32_t ntiles, uint32_t max_blocks);

// Bytes of descriptors (and results) a slot needs for b, with its commit
// launch (slot_program.h): what the batching backend caps a batch at.
size_t slot_blob_bytes(const HostBatch& b);
// Appends a job copying len bytes between two device addresses (a commit).
void add_copy_job(HostBatch* b, uint64_t from, uint64_t to, uint32_t len);

class BatchBuilder {
 public:
  // Why the kernels cannot run j (it goes to the CPU instead), or nullptr.
  static const char* unsupported(const ParityJob& j);
  // Appends j, which unsupported() accepted. False, adding nothing, when its
  // erasures cannot be recovered from its survivors.
  bool add(ParityJob* j, HostBatch* b);

 private:
  const std::vector<uint8_t>* decode(const ParityJob& j);
  std::unordered_map<std::string, std::vector<uint8_t>> decode_cache_;
};

}  // namespace gpuraid::kern
