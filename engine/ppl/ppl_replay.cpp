#include "engine/ppl/ppl_replay.h"

#include <isa-l/erasure_code.h>

#include <algorithm>
#include <cerrno>
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

namespace {

// A trusted entry of a stripe that may be torn, on a usable member.
struct Found {
  uint32_t member, slot;
  PplEntry e;
};

// Reads a non-header-only entry's partial parity into pp; false when its
// crc fails (a torn log write).
bool read_payload(Drive& d, const PplLayout& l, uint32_t slot, const PplEntry& e, uint8_t* pp, int* rc) {
  const uint32_t L = e.c1 - e.c0;
  if (e.flags & kPplZeroPayload) {
    memset(pp, 0, L);  // header alone: one write, it is there whole or not at all
    return true;
  }
  *rc = d.sync_read(pp, L, l.slot_offset(slot) + kPplHeaderBytes);
  return *rc >= 0 && ppl_crc(pp, L) == e.payload_crc;
}

// Entries of one write (kPplWriteSeq) go together: they are applied only
// when every usable parity member of the stripe holds that write's entry.
// Otherwise the crash came during that write's log writes, before any data
// or parity of it (they wait for every entry), and the entries found are of
// different writes: the stripe is as the previous write left it, complete
// (a slot is reused only once its write ended), and replaying some rows
// from the newer entry would make them disagree with the others.
bool one_write(const Geometry& g, const std::vector<Drive*>& members, const Found* f, size_t n) {
  const uint32_t k = g.data_strips();
  for (size_t i = 0; i < n; i++)
    if (!(f[i].e.flags & kPplWriteSeq)) return true;  // an older gpuraid's entries: each row alone
  for (uint32_t r = 0; r < g.parity; r++) {
    const uint32_t pm = role_member(g, f[0].e.stripe, k + r);
    if (pm >= members.size() || !members[pm]) continue;
    bool has = false;
    for (size_t i = 0; i < n; i++) has |= f[i].member == pm && f[i].e.seq == f[0].e.seq;
    if (!has) return false;
  }
  for (size_t i = 1; i < n; i++)
    if (f[i].e.seq != f[0].e.seq) return false;
  return true;
}
}  // namespace

bool ppl_replay(const Geometry& g, const Codec& c, const PplLayout& l, const std::array<uint8_t, 16>& group,
                uint64_t data_offset, const std::vector<Drive*>& members,
                const std::function<bool(uint64_t stripe)>& torn, PplReplayStats* st, std::string* err) {
  const uint32_t k = g.data_strips();
  AlignedBuf hdr = aligned(kPplHeaderBytes), pp = aligned(g.strip_bytes), data = aligned(g.strip_bytes);
  // Every trusted, whole entry of a torn stripe, on every usable member.
  std::vector<Found> found;
  for (uint32_t m = 0; m < g.members && m < members.size(); m++) {
    Drive* d = members[m];
    if (!d) continue;
    for (uint32_t slot = 0; slot < l.slots; slot++) {
      int rc = d->sync_read(hdr.get(), kPplHeaderBytes, l.slot_offset(slot));
      if (rc < 0) return io_fail(err, *d, "log read", rc);
      PplEntry e;
      if (!decode_ppl_header(hdr.get(), g.strip_bytes, &e) || e.group != group) continue;
      // An entry elsewhere than its stripe's slot or member is not ours to
      // trust (RAID 50/60: a stripe's parity members are its sub-group's).
      if (e.k != k || e.row >= g.parity || e.stripe >= g.stripes() || l.slot_of(e.stripe) != slot ||
          role_member(g, e.stripe, k + e.row) != m)
        continue;
      if (!read_payload(*d, l, slot, e, pp.get(), &rc)) {
        if (rc < 0) return io_fail(err, *d, "log read", rc);
        continue;  // torn log write: its stripe was not touched
      }
      st->entries++;
      if (torn(e.stripe)) found.push_back({m, slot, e});
    }
  }
  std::sort(found.begin(), found.end(), [](const Found& a, const Found& b) { return a.e.stripe < b.e.stripe; });
  uint64_t wrote = 0;  // members written
  for (size_t i0 = 0, i1; i0 < found.size(); i0 = i1) {
    for (i1 = i0 + 1; i1 < found.size() && found[i1].e.stripe == found[i0].e.stripe;) i1++;
    if (!one_write(g, members, &found[i0], i1 - i0)) {
      st->stripes_skipped++;
      continue;
    }
    for (size_t i = i0; i < i1; i++) {
      const PplEntry& e = found[i].e;
      Drive* d = members[found[i].member];
      int rc = 0;
      if (!read_payload(*d, l, found[i].slot, e, pp.get(), &rc))
        return io_fail(err, *d, "log read", rc < 0 ? rc : -EIO);  // it was whole a moment ago
      const uint32_t L = e.c1 - e.c0;
      uint8_t* tables = const_cast<uint8_t*>(c.parity_tables()) + size_t(32) * k * e.row;
      const uint64_t base = data_offset + g.member_offset(e.stripe);
      // Columns a missing member was written at keep the parity on disk:
      // were that write complete, the parity there is consistent and
      // rebuilds the member's new data; were it in flight, the member's
      // bytes there were being written (with m >= 2, another missing
      // member's bytes in those columns may read wrong: docs/ON-DISK.md).
      std::vector<bool> keep((L + 4095) / 4096, false);
      for (uint32_t di = 0; di < k; di++) {
        const StripRange r = e.ranges[di];
        Drive* dd = members[role_member(g, e.stripe, di)];
        if (r.empty()) continue;
        if (!dd) {
          for (uint32_t col = r.a; col < r.b; col += 4096) keep[(col - e.c0) / 4096] = true;
          continue;
        }
        rc = dd->sync_read(data.get(), r.b - r.a, base + r.a);
        if (rc < 0) return io_fail(err, *dd, "data read", rc);
        gf_vect_mad(int(r.b - r.a), int(k), int(di), tables, data.get(), pp.get() + (r.a - e.c0));
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
      wrote |= 1ull << found[i].member;
    }
  }
  for (uint64_t w = wrote; w; w &= w - 1) {
    Drive* d = members[__builtin_ctzll(w)];
    int rc = d->sync_flush();
    if (rc < 0) return io_fail(err, *d, "flush", rc);
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
