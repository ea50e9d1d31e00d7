#include "engine/parity/isal_raid.h"

#include <isa-l/raid.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>

namespace gpuraid {
namespace {

bool aligned(const void* p) { return reinterpret_cast<uintptr_t>(p) % IsalRaid::kAlign == 0; }

// ISA-L returns nonzero where it refuses its arguments.
int call(bool pq, int vects, uint32_t len, void** v) {
  const int r = pq ? ::pq_gen(vects, int(len), v) : ::xor_gen(vects, int(len), v);
  return r == 0 ? 0 : -EIO;
}

}  // namespace

void IsalRaid::Free::operator()(uint8_t* p) const { std::free(p); }

bool IsalRaid::direct(bool pq, int vects, uint32_t len, void* const* v) {
  if (pq && len % kPqUnit != 0) return false;
  for (int i = 0; i < vects; i++)
    if (!aligned(v[i])) return false;
  return true;
}

int IsalRaid::xor_gen(int vects, uint32_t len, void** v) { return gen(false, vects, len, v); }
int IsalRaid::pq_gen(int vects, uint32_t len, void** v) { return gen(true, vects, len, v); }

int IsalRaid::gen(bool pq, int vects, uint32_t len, void** v) {
  if (vects < (pq ? 4 : 3) || vects > kMaxVects || len == 0 || len > uint32_t(INT_MAX)) return -EIO;
  if (direct(pq, vects, len, v)) return call(pq, vects, len, v);
  return bounce(pq, vects, len, v);
}

uint8_t* IsalRaid::scratch(size_t bytes) {
  if (bytes > scratch_bytes_) {
    scratch_.reset(static_cast<uint8_t*>(std::aligned_alloc(64, bytes)));
    scratch_bytes_ = 0;
    if (!scratch_) return nullptr;
    memset(scratch_.get(), 0, bytes);
    scratch_bytes_ = bytes;
  }
  return scratch_.get();
}

// Chunk by chunk: a buffer whose piece is aligned and whole (for pq_gen, a
// multiple of kPqUnit long) is used in place; any other is copied into its
// scratch slot (a source) or computed there and copied out (an output). For
// pq_gen a length that is not a multiple of kPqUnit ends in a piece of its
// own shorter than kPqUnit, padded up to it in scratch: the pad is zeroed in
// the sources, and what pq_gen writes there is never copied out.
int IsalRaid::bounce(bool pq, int vects, uint32_t len, void** v) {
  const int nout = pq ? 2 : 1;
  uint8_t* slots = scratch(size_t(vects) * kChunk);
  if (!slots) return -ENOMEM;
  void* p[kMaxVects];
  for (uint32_t pos = 0, n = 0; pos < len; pos += n) {
    n = std::min(kChunk, len - pos);
    if (pq && n > kPqUnit && n % kPqUnit != 0) n -= n % kPqUnit;  // the tail (< kPqUnit) alone, last
    const uint32_t padded = pq ? (n + kPqUnit - 1) / kPqUnit * kPqUnit : n;
    for (int i = 0; i < vects; i++) {
      uint8_t* at = static_cast<uint8_t*>(v[i]) + pos;
      if (padded == n && aligned(at)) {
        p[i] = at;
        continue;
      }
      uint8_t* slot = slots + size_t(i) * kChunk;
      if (i < vects - nout) {
        memcpy(slot, at, n);
        memset(slot + n, 0, padded - n);
      }
      p[i] = slot;
    }
    if (const int r = call(pq, vects, padded, p)) return r;
    for (int i = vects - nout; i < vects; i++) {
      uint8_t* at = static_cast<uint8_t*>(v[i]) + pos;
      if (p[i] != at) memcpy(at, p[i], n);
    }
  }
  return 0;
}

}  // namespace gpuraid
