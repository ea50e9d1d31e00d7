#include "engine/ppl/ppl_replay.h"

#include <isa-l/erasure_code.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "engine/planner.h"

namespace gpuraid {

namespace {
struct FreeDeleter {
  void operator()(uint8_t* p) const { free(p); }
};
using AlignedBuf = std::unique_ptr<uint8_t, FreeDeleter>;
AlignedBuf aligned(size_t n) { return AlignedBuf(static_cast<uint8_t*>(aligned_alloc(4096, (n + 4095) & ~size_t(4095)))); }

bool io_fail(std::string* err, const Drive& d, const char* what, int rc) {
  if (err) *err = d.path() + ": write-hole log replay: " + what + " failed (" + strerror(-rc) + ")";
  return false;
}
}  // namespace

bool ppl_replay(const Geometry& g, const Codec& c, const PplLayout& l, const std::array<uint8_t, 16>& group,
                uint64_t data_offset, const std::vector<Drive*>& members,
                const std::function<bool(uint64_t stripe)>& torn, PplReplayStats* st, std::string* err) {
  const uint32_t k = g.data_strips();
  AlignedBuf hdr = aligned(kPplHeaderBytes), pp = aligned(g.strip_bytes), data = aligned(g.strip_bytes);
  for (uint32_t m = 0; m < g.members && m < members.size(); m++) {
    Drive* d = members[m];
    if (!d) continue;
    bool wrote = false;
    for (uint32_t slot = 0; slot < l.slots; slot++) {
      int rc = d->sync_read(hdr.get(), kPplHeaderBytes, l.slot_offset(slot));
      if (rc < 0) return io_fail(err, *d, "log read", rc);
      PplEntry e;
      if (!decode_ppl_header(hdr.get(), g.strip_bytes, &e) || e.group != group) continue;
      // An entry elsewhere than its stripe's slot or member is not ours to trust.
      if (e.k != k || e.row >= g.parity || e.stripe >= g.stripes() || l.slot_of(e.stripe) != slot ||
          role_member(g, e.stripe, k + e.row) != m)
        continue;
      const uint32_t L = e.c1 - e.c0;
      if (e.flags & kPplZeroPayload) {
        memset(pp.get(), 0, L);  // header alone: one write, it is there whole or not at all
      } else {
        rc = d->sync_read(pp.get(), L, l.slot_offset(slot) + kPplHeaderBytes);
        if (rc < 0) return io_fail(err, *d, "log read", rc);
        if (ppl_crc(pp.get(), L) != e.payload_crc) continue;  // torn log write: its stripe was not touched
      }
      st->entries++;
      if (!torn(e.stripe)) continue;
      uint8_t* tables = const_cast<uint8_t*>(c.parity_tables()) + size_t(32) * k * e.row;
      const uint64_t base = data_offset + g.member_offset(e.stripe);
      // Columns a missing member was written at keep the parity on disk:
      // were that write complete, the parity there is consistent and
      // rebuilds the member's new data; were it in flight, the member's
      // bytes there were being written (with m >= 2, another missing
      // member's bytes in those columns may read wrong: docs/ON-DISK.md).
      std::vector<bool> keep((L + 4095) / 4096, false);
      for (uint32_t i = 0; i < k; i++) {
        const StripRange r = e.ranges[i];
        Drive* dd = members[role_member(g, e.stripe, i)];
        if (r.empty()) continue;
        if (!dd) {
          for (uint32_t col = r.a; col < r.b; col += 4096) keep[(col - e.c0) / 4096] = true;
          continue;
        }
        rc = dd->sync_read(data.get(), r.b - r.a, base + r.a);
        if (rc < 0) return io_fail(err, *dd, "data read", rc);
        gf_vect_mad(int(r.b - r.a), int(k), int(i), tables, data.get(), pp.get() + (r.a - e.c0));
      }
      for (uint32_t b0 = 0; b0 < keep.size();) {
        if (keep[b0]) {
          b0++;
          continue;
        }
        uint32_t b1 = b0;
        while (b1 < keep.size() && !keep[b1]) b1++;
        const uint32_t n = std::min<uint32_t>(b1 * 4096, L) - b0 * 4096;
        rc = d->sync_write(pp.get() + b0 * 4096, n, base + e.c0 + b0 * 4096);
        if (rc < 0) return io_fail(err, *d, "parity write", rc);
        b0 = b1;
      }
      st->rows_written++;
      wrote = true;
    }
    if (wrote) {
      int rc = d->sync_flush();
      if (rc < 0) return io_fail(err, *d, "flush", rc);
    }
  }
  return true;
}

bool ppl_invalidate(Drive& d, const PplLayout& l, std::string* err) {
  AlignedBuf zero = aligned(kPplHeaderBytes);
  memset(zero.get(), 0, kPplHeaderBytes);
  for (uint32_t slot = 0; slot < l.slots; slot++) {
    int rc = d.sync_write(zero.get(), kPplHeaderBytes, l.slot_offset(slot));
    if (rc < 0) return io_fail(err, d, "log wipe", rc);
  }
  int rc = d.sync_flush();
  return rc < 0 ? io_fail(err, d, "flush", rc) : true;
}

}  // namespace gpuraid
