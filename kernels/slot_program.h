// One batch's life in one executor slot: the host side that the CUDA
// executor and the host shim share, so that CI runs the same protocol the
// GPU does.
//
// Placement. A buffer in registered memory (AddressView) is read in place;
// one that is not is bounced: copied by the CPU into the slot's own mapped
// bounce memory (and back, for outputs, once the batch finished), which is
// what counts a batch as staged. Every output is first written to device
// scratch and reaches host memory only in the batch's commit launch.
//
// Launches, in order on the slot's stream: the descriptor blob (with the
// Verify results zeroed) to the device; the batch kernel; the commit
// (scratch -> host outputs) behind its gate; the signal kernel, which
// stores the batch's seq into the slot's completion marker in mapped host
// memory. The owner polls that word (finished()): no interrupt, no host
// callback, no driver call.
//
// The gate makes a batch that overran its time limit safe to give up: the
// host stores abort = seq and fences; every commit thread stores started =
// seq, fences, and reads abort (parity_kernels.cuh). If no started word
// shows seq after the host's fence, the commit will write nothing, and the
// batch's jobs can run on the CPU into the same buffers while the device
// finishes (or never finishes) in its slot. Otherwise the commit is under
// way and the host must wait for the batch.
#pragma once
#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "kernels/address_registry.h"
#include "kernels/batch_builder.h"
#include "kernels/parity_desc.h"

namespace gpuraid::kern {

constexpr uint32_t kMaxCommitBlocks = 1024;  // grid cap of commit launches: one gate word each
constexpr uint32_t kMaxVerifyResults = 8192;  // Verify jobs per batch (the backend closes batches before)

// A slot's words in mapped host memory, zeroed at allocation.
struct SlotCtrl {
  uint32_t marker;  // device writes: seq of the last batch that finished
  uint32_t pad0[15];
  uint32_t abort;   // host writes: seq of a batch the host gave up on
  uint32_t pad1[15];
  uint32_t started[kMaxCommitBlocks];   // device writes: the commit gate, per block
  uint32_t results[kMaxVerifyResults];  // device writes: the last batch's Verify results
};

// A slot's memory, as its executor allocated it. Device addresses are what
// kernels dereference (equal to host ones under the shim).
struct SlotMemory {
  SlotCtrl* ctrl = nullptr;
  uint64_t ctrl_dev = 0;
  uint8_t* blob = nullptr;  // host: descriptors of the batch and its commit, zeroed results
  size_t blob_cap = 0;
  uint64_t dev_blob = 0;    // device: where blob is copied
  uint8_t* bounce = nullptr;  // mapped host memory for unregistered buffers
  uint64_t bounce_dev = 0;
  size_t bounce_cap = 0;
  uint64_t scratch_dev = 0;  // device: outputs until the commit
  uint64_t scratch_cap = 0;
};

// What the executor runs for one batch (see the file comment).
struct SlotLaunch {
  size_t blob_bytes = 0;
  KBatch main{};
  uint32_t main_grid = 0;
  KBatch commit{};
  uint32_t commit_grid = 0;
  bool has_commit = false;
  KSignal signal{};
};

class SlotProgram {
 public:
  struct Needs {
    uint64_t scratch = 0, bounce = 0;
    size_t blob = 0;
    bool staged = false;  // some buffer is bounced
  };
  // Places b's buffers. bounce_all: every buffer through bounce memory
  // (the staged path on demand).
  Needs plan(const HostBatch& b, AddressView& view, bool bounce_all);
  // With mem holding plan()'s needs: copies bounced inputs in, writes the
  // descriptors, and fills *out.
  void start(const HostBatch& b, const SlotMemory& mem, uint32_t seq, uint32_t max_blocks, SlotLaunch* out);
  // The marker shows this batch's seq: every launch of it has run.
  bool finished(const SlotMemory& mem) const;
  // After finished(): copies bounced outputs back and the Verify results
  // into b.mismatch. Once aborted the outputs stay where they are: the
  // jobs ran on the CPU and their buffers may be someone else's by now.
  void complete(HostBatch& b, const SlotMemory& mem);
  // The host's half of the gate (file comment); true: the batch will never
  // write host memory outside its slot.
  bool abort(const SlotMemory& mem);
  bool aborted() const { return aborted_; }
  uint32_t seq() const { return seq_; }

 private:
  enum class Where : uint8_t { Device, InPlace, Bounce, Scratch };
  struct Copy {
    uint64_t host;
    uint64_t off;  // in bounce memory
    uint32_t len;
  };
  struct Output {
    uint64_t scratch_off;
    Where target;     // InPlace or Bounce
    uint64_t to;      // device address (InPlace) or bounce offset
    uint32_t len;
  };
  uint64_t bounce(uint64_t host, uint32_t len, bool* fresh);

  std::vector<Where> where_;
  std::vector<uint64_t> at_;  // per pointer: device address, bounce or scratch offset
  std::vector<uint64_t> placed_;
  std::vector<Copy> copy_in_, copy_out_;
  std::vector<Output> outputs_;
  std::unordered_map<uint64_t, uint64_t> bounce_at_;  // host address -> bounce offset
  uint64_t bounce_bytes_ = 0, scratch_bytes_ = 0;
  HostBatch commit_;
  uint32_t seq_ = 0, nverify_ = 0, commit_grid_ = 0;
  bool aborted_ = false;
};

}  // namespace gpuraid::kern
