// The descriptor layout of one kernel launch, shared by the host-side batch
// builder and the kernels (nvcc and the host shim compile the same header).
// A batch is three flat arrays: jobs, buffer pointers and coefficient words.
// Every job is cut into tiles of kTileBytes; the grid walks the tiles.
#pragma once
#include <cstdint>

namespace gpuraid::kern {

constexpr uint32_t kBlockThreads = 128;
constexpr uint32_t kWordsPerThread = 2;  // 16-byte words per thread per tile
constexpr uint32_t kTileBytes = kBlockThreads * kWordsPerThread * 16;  // 4 KiB
constexpr uint32_t kMaxRows = 4;   // outputs per job (ec m <= 4)
constexpr uint32_t kMaxCols = 64;  // inputs per job (k <= 64)
constexpr uint32_t kLenAlign = 64;  // job lengths are multiples of this
constexpr uint32_t kPtrAlign = 16;  // buffers are read as 16-byte words

// What a job does with the M row sums it computes.
enum KMode : uint8_t {
  kModeWrite = 0,   // out[r] = sum
  kModeUpdate = 1,  // out[r] = in[r] ^ sum
  kModeVerify = 2,  // mismatch bit r when stored[r] != sum
};

// One job. Its pointers start at ptrs[ptr]:
//   src[0..nsrc), then src2[0..nsrc) when delta (column = src ^ src2),
//   then Write: out[0..ndst); Update: in[0..ndst), out[0..ndst);
//   Verify: stored[0..ndst).
// coefs[coef + c] packs the ndst coefficients of column c, row r in byte r
// (rows >= ndst are zero). Horner jobs (RAID 6 P+Q) have no coefficients:
// row 0 = xor of all columns, row 1 = Horner sum with the columns stored
// highest data index first, i.e. Q = sum 2^i D_i.
struct KJob {
  uint32_t tile0;   // first tile of this job in the batch
  uint32_t len;     // bytes per buffer, multiple of kLenAlign
  uint32_t ptr;     // index of the first pointer
  uint32_t coef;    // index of the first coefficient word
  uint32_t result;  // Verify: index into mismatch[]
  uint8_t mode;     // KMode
  uint8_t horner;   // 1: P+Q by Horner (ndst == 2, no coefficients)
  uint8_t nsrc;     // 1..kMaxCols
  uint8_t ndst;     // 1..kMaxRows
  uint8_t delta;    // 1: src2 present
  uint8_t pad[7];
};
static_assert(sizeof(KJob) == 32, "KJob is copied as raw bytes between host and device");

// The kernel's argument: device-visible addresses of the three arrays.
struct KBatch {
  const KJob* jobs;
  const uint64_t* ptrs;
  const uint32_t* coefs;
  uint32_t* mismatch;  // one word per Verify job, zeroed before launch
  uint32_t njobs;
  uint32_t ntiles;
  // The commit gate (kernels/slot_program.h), set on a batch's commit
  // launch only (null otherwise): before writing anything every thread
  // stores seq into started[blockIdx.x], fences, and reads *abort; when the
  // host has aborted seq, the launch writes nothing. Both words are in
  // mapped host memory.
  uint32_t* started;
  const uint32_t* abort;
  uint32_t seq;
};

// The last launch of a batch: copies the Verify results to mapped host
// memory, then, after a system fence, stores seq into the completion marker
// the host polls. Runs as one thread.
struct KSignal {
  const uint32_t* results;  // device
  uint32_t* host_results;   // mapped host
  uint32_t nresults;
  uint32_t seq;
  uint32_t* marker;         // mapped host
};

}  // namespace gpuraid::kern
