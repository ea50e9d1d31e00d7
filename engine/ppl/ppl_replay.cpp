#include "engine/ppl/ppl_replay.h"

#include <isa-l/erasure_code.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "engine/parity/xor_cached.h"
#include "engine/ppl/ppl_sum.h"
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

// A read of the log itself that failed; a medium error there is told
// apart (st->log_unreadable): the caller may do without the log.
bool log_fail(std::string* err, PplReplayStats* st, const Drive& d, const char* what, int rc) {
  if (medium_error(rc)) st->log_unreadable = true;
  return io_fail(err, d, what, rc);
}
}  // namespace

namespace {

// A trusted entry of a stripe that may be torn, on a usable member.
struct Found {
  uint32_t member;       // the parity member of its row
  uint64_t payload_pos;  // where its partial parity starts, in the log area
  PplEntry e;
  bool v3 = false;       // format 3: payload_crc is ppl_payload_sum's, else crc32c
  uint32_t log = 0;      // the member whose log holds it: `member`, or for a member
                         // in the distributed spare room the one holding its strip
};

// Where a member's strip of a stripe is: on its own drive, or (a member in
// the distributed spare room) on the drive holding its spare strip there.
struct Drives {
  const std::vector<Drive*>& members;
  const PplRoomRoute& room;
  // The index of the drive holding m's strip of the stripe; -1: unusable.
  int index(uint32_t m, uint64_t stripe) const {
    int i = room ? room(m, stripe) : kPplNotInRoom;
    if (i == kPplNotInRoom) i = int(m);
    return i < 0 || size_t(i) >= members.size() || !members[size_t(i)] ? -1 : i;
  }
  Drive* at(uint32_t m, uint64_t stripe) const {
    const int i = index(m, stripe);
    return i < 0 ? nullptr : members[size_t(i)];
  }
};

// n bytes of the ring from pos, going on at its start past its end
// (format 3 and 4 pieces run over it; format 2's ring is the whole area).
int read_ring(Drive& d, const PplRing& l, uint64_t pos, size_t n, uint8_t* out) {
  const uint64_t area = l.bytes;
  pos %= area;
  const size_t first = size_t(std::min<uint64_t>(n, area - pos));
  int rc = d.sync_read(out, first, l.offset + pos);
  if (rc >= 0 && first < n) rc = d.sync_read(out + first, n - first, l.offset);
  return rc;
}

// Reads a non-header-only entry's partial parity into pp; false when its
// crc fails (a torn log write).
bool read_payload(Drive& d, const PplRing& l, const Found& f, uint8_t* pp, int* rc) {
  const uint32_t L = f.e.c1 - f.e.c0;
  if (f.e.flags & kPplZeroPayload) {
    memset(pp, 0, L);  // no payload: whole with its header, which is checked
    return true;
  }
  *rc = read_ring(d, l, f.payload_pos, L, pp);
  return *rc >= 0 && (f.v3 ? ppl_payload_sum(pp, L) : ppl_crc(pp, L)) == f.e.payload_crc;
}

// Whether entry e, found in member m's log, may be one of this group's: a
// stripe and row the geometry has, and m holding that row's parity strip
// (its member's, or one in the room whose strip m holds; RAID 50/60: a
// stripe's parity members are its sub-group's).
bool plausible(const Geometry& g, const Drives& dv, uint32_t m, const PplEntry& e) {
  const uint32_t k = g.data_strips();
  return e.k == k && e.row < g.parity && e.stripe < g.stripes() &&
         dv.index(role_member(g, e.stripe, k + e.row), e.stripe) == int(m);
}

// Version 2: one entry per slot, stripe s in slot slot_of(s) only.
bool collect_v2(const Geometry& g, const Drives& dv, const PplLayout& l, const std::array<uint8_t, 16>& group,
                uint32_t m, Drive& d, uint8_t* hdr, uint8_t* pp, const std::function<bool(uint64_t)>& torn,
                PplReplayStats* st, std::vector<Found>* found, std::string* err) {
  for (uint32_t slot = 0; slot < l.slots; slot++) {
    int rc = d.sync_read(hdr, kPplHeaderBytes, l.slot_offset(slot));
    if (rc < 0) return log_fail(err, st, d, "log read", rc);
    PplEntry e;
    if (!decode_ppl_header(hdr, g.strip_bytes, &e) || e.group != group) continue;
    if (!plausible(g, dv, m, e) || l.slot_of(e.stripe) != slot) continue;
    const Found f{role_member(g, e.stripe, g.data_strips() + e.row), l.slot_offset(slot) - l.offset + kPplHeaderBytes, e,
                  false, m};
    if (!read_payload(d, ppl_ring(l, kPplFormatSlots), f, pp, &rc)) {
      if (rc < 0) return log_fail(err, st, d, "log read", rc);
      continue;  // torn log write: its stripe was not touched
    }
    st->entries++;
    if (torn(e.stripe)) found->push_back(f);
  }
  return true;
}

// Version 3 and 4: a ring of pieces, each a batch header and payloads,
// anywhere in the ring at 4 KiB boundaries; every block is looked at (older,
// reused room holds stale headers too: their seq is below the floor, or
// their payload's crc fails, or a newer write of the stripe is there).
// Version 4: pieces below the member's ring tail are ignored too (their
// room may have been reused, a newer entry of their stripe overwritten).
bool collect_v3(const Geometry& g, const Drives& dv, const PplLayout& layout, uint32_t format,
                const std::array<uint8_t, 16>& group, uint64_t seq_floor, uint32_t m, Drive& d,
                const std::function<bool(uint64_t)>& torn, PplReplayStats* st, std::vector<Found>* found,
                std::string* err) {
  constexpr size_t kChunk = 1u << 20;
  AlignedBuf chunk = aligned(kChunk);
  std::vector<PplEntry> entries;
  const PplRing l = ppl_ring(layout, format);
  if (format >= kPplFormatTailed) {
    const int rc = d.sync_read(chunk.get(), kPplTailAreaBytes, layout.offset);
    if (rc < 0) return log_fail(err, st, d, "log tail read", rc);
    seq_floor = std::max(seq_floor, ppl_tail_seq(chunk.get(), group));
  }
  const uint64_t area = l.bytes;
  for (uint64_t base = 0; base < area; base += kChunk) {
    const size_t n = size_t(std::min<uint64_t>(kChunk, area - base));
    int rc = d.sync_read(chunk.get(), n, l.offset + base);
    if (rc < 0) return log_fail(err, st, d, "log read", rc);
    for (size_t o = 0; o + 4096 <= n; o += 4096) {
      const uint8_t* at = chunk.get() + o;
      if (!is_ppl_batch_header(at)) continue;
      PplBatchHeader h;
      size_t need = 0;
      AlignedBuf big;
      if (!decode_ppl_batch_header(at, n - o, g.strip_bytes, &h, &entries, &need)) {
        if (!need || need > area) continue;
        big = aligned(need);  // a header longer than the rest of the chunk, or over the area's end
        if ((rc = read_ring(d, l, base + o, need, big.get())) < 0) return log_fail(err, st, d, "log read", rc);
        if (!decode_ppl_batch_header(big.get(), need, g.strip_bytes, &h, &entries, &need)) continue;
      }
      if (h.group != group || h.seq < seq_floor || h.total_bytes > area) continue;
      for (const PplEntry& e : entries) {
        if (!plausible(g, dv, m, e)) continue;
        st->entries++;
        if (torn(e.stripe))
          found->push_back(Found{role_member(g, e.stripe, g.data_strips() + e.row), (base + o + e.payload_off) % area, e,
                                 true, m});
      }
    }
  }
  return true;
}

// Entries of one write (kPplWriteSeq) go together: they are applied only
// when every usable parity member of the stripe holds that write's entry.
// Otherwise the crash came during that write's log writes, before any data
// or parity of it (they wait for every entry), and the entries found are of
// different writes: the stripe is as the previous write left it, complete
// (a slot is reused only once its write ended), and replaying some rows
// from the newer entry would make them disagree with the others.
bool one_write(const Geometry& g, const Drives& dv, const Found* f, size_t n) {
  const uint32_t k = g.data_strips();
  for (size_t i = 0; i < n; i++)
    if (!(f[i].e.flags & kPplWriteSeq)) return true;  // an older gpuraid's entries: each row alone
  for (uint32_t r = 0; r < g.parity; r++) {
    const uint32_t pm = role_member(g, f[0].e.stripe, k + r);
    if (!dv.at(pm, f[0].e.stripe)) continue;
    bool has = false;
    for (size_t i = 0; i < n; i++) has |= f[i].member == pm && f[i].e.seq == f[0].e.seq;
    if (!has) return false;
  }
  for (size_t i = 1; i < n; i++)
    if (f[i].e.seq != f[0].e.seq) return false;
  return true;
}

constexpr int kNoLostWriter = -1, kLostWriters = -2;

// Per 4 KiB block of [c0, c1): the data role of the one unusable member
// the write wrote there, kNoLostWriter for none, kLostWriters for several.
std::vector<int> lost_writer_per_block(const Geometry& g, const PplEntry& e, const Drives& dv) {
  std::vector<int> lost((e.c1 - e.c0 + 4095) / 4096, kNoLostWriter);
  for (uint32_t di = 0; di < e.k; di++) {
    const StripRange r = e.ranges[di];
    const uint32_t m = role_member(g, e.stripe, di);
    if (r.empty() || dv.at(m, e.stripe)) continue;
    for (uint32_t col = r.a; col < r.b; col += 4096) {
      int& x = lost[(col - e.c0) / 4096];
      x = x == kNoLostWriter ? int(di) : kLostWriters;
    }
  }
  return lost;
}

// Range r of data role di (at data) read again block by block after a
// medium error: each block that cannot be read is zeroed (it adds nothing
// to the row) and its data role named in unreadable (per 4 KiB block from
// c0, as lost_writer_per_block). Another error ends it.
int read_blocks_around(Drive& d, uint8_t* data, StripRange r, uint32_t di, uint64_t base, uint32_t c0,
                       std::vector<int>* unreadable) {
  for (uint32_t col = r.a; col < r.b; col += 4096) {
    const uint32_t len = std::min<uint32_t>(4096, r.b - col);
    uint8_t* p = data + (col - r.a);
    const int rc = d.sync_read(p, len, base + col);
    if (rc == 0) continue;
    const size_t b = (col - c0) / 4096;
    if (!medium_error(rc) || col < c0 || b >= unreadable->size()) return rc;
    memset(p, 0, len);
    int& x = (*unreadable)[b];
    if (x != int(di)) x = x == kNoLostWriter ? int(di) : kLostWriters;
  }
  return 0;
}

// row += row e.row over the logged ranges as usable members hold them. A
// block a member cannot read (often where the power cut caught the drive
// writing) is left out and named in unreadable (from c0): it is taken as a
// lost member's block, and the resync after the replay writes it back.
bool add_present_ranges(const Geometry& g, const Codec& c, const PplEntry& e, uint64_t data_offset, const Drives& dv,
                        uint8_t* data, uint8_t* row, uint32_t c0, std::vector<int>* unreadable, std::string* err) {
  const uint32_t k = g.data_strips();
  uint8_t* tables = const_cast<uint8_t*>(c.parity_tables()) + size_t(32) * k * e.row;
  const uint64_t base = data_offset + g.member_offset(e.stripe);
  for (uint32_t di = 0; di < k; di++) {
    const StripRange r = e.ranges[di];
    Drive* d = dv.at(role_member(g, e.stripe, di), e.stripe);
    if (r.empty() || !d) continue;
    int rc = d->sync_read(data, r.b - r.a, base + r.a);
    if (medium_error(rc)) rc = read_blocks_around(*d, data, r, di, base, c0, unreadable);
    if (rc < 0) return io_fail(err, *d, "data read", rc);
    gf_vect_mad(int(r.b - r.a), int(k), int(di), tables, data, row + (r.a - e.c0));
  }
  return true;
}

// One block [off, off + len) of [c0, c1) where lost data role x was being
// written: x's bytes are what the first entry's row on disk makes them,
//   D_x = (P_r0(disk) + row_r0) / g_r0,x,
// and every other row gets g_r,x * D_x added, so all rows agree with the
// data on disk and that D_x. The first row then equals the disk's. A first
// row whose parity block cannot be read (*unreadable): nothing to agree on,
// the rows on disk are kept.
bool agree_on_lost_block(const Geometry& g, const Codec& c, const Found* f, size_t n,
                         const std::vector<AlignedBuf>& rows, uint32_t x, uint64_t data_offset, uint32_t off,
                         uint32_t len, const Drives& dv, uint8_t* scratch /* 8 KiB */, bool* unreadable,
                         std::string* err) {
  const uint32_t k = g.data_strips();
  const PplEntry& e0 = f[0].e;
  Drive* d0 = dv.at(f[0].member, e0.stripe);
  const int rc = d0->sync_read(scratch, 4096, data_offset + g.member_offset(e0.stripe) + e0.c0 + off);
  if (medium_error(rc)) return *unreadable = true, true;
  if (rc < 0) return io_fail(err, *d0, "parity read", rc);
  uint8_t* acc = scratch;  // P_r0(disk) + row_r0 = g_r0,x * D_x
  const uint8_t* both[2] = {acc, rows[0].get() + off};
  xor_cached(acc, both, 2, len);
  uint8_t* dx = scratch + 4096;
  memset(dx, 0, len);
  uint8_t inv_tbl[32];
  unsigned char inv = gf_inv(c.coeff(e0.row, x));
  ec_init_tables(1, 1, &inv, inv_tbl);
  gf_vect_mad(int(len), 1, 0, inv_tbl, acc, dx);
  for (size_t i = 1; i < n; i++) {
    uint8_t* tables = const_cast<uint8_t*>(c.parity_tables()) + size_t(32) * k * f[i].e.row;
    gf_vect_mad(int(len), int(k), int(x), tables, dx, rows[i].get() + off);
  }
  return true;
}

// Version 3: of a stripe's entries (sorted newest write first), the
// newest write whose entry every usable parity member of the stripe holds,
// whole. A write missing one was stopped among its log writes, before any
// of its data or parity: the stripe is as an older write left it, and an
// older write's entries are still there unless it was made durable (a
// member's pieces are reclaimed in write order, after a flush). Moves the
// chosen entries to the front of f; returns how many (0: none).
size_t newest_whole_write(const Geometry& g, const PplRing& l, const Drives& dv, Found* f, size_t n, uint8_t* pp,
                          PplReplayStats* st, std::string* err, bool* io_error) {
  const uint32_t k = g.data_strips();
  for (size_t i0 = 0, i1; i0 < n; i0 = i1) {
    for (i1 = i0 + 1; i1 < n && f[i1].e.seq == f[i0].e.seq;) i1++;
    uint64_t have = 0;
    for (size_t i = i0; i < i1; i++) {
      int rc = 0;
      Drive& log = *dv.members[f[i].log];
      if (read_payload(log, l, f[i], pp, &rc)) have |= 1ull << f[i].member;
      else if (rc < 0) return *io_error = true, log_fail(err, st, log, "log read", rc), 0;
    }
    bool whole = true;
    for (uint32_t r = 0; r < g.parity; r++) {
      const uint32_t pm = role_member(g, f[i0].e.stripe, k + r);
      if (dv.at(pm, f[i0].e.stripe) && !(have >> pm & 1)) whole = false;
    }
    if (!whole) continue;
    size_t w = 0;
    for (size_t i = i0; i < i1; i++)
      if (have >> f[i].member & 1) f[w++] = f[i];
    return w;
  }
  return 0;
}

}  // namespace

bool ppl_replay(const Geometry& g, const Codec& c, const PplLogOnDisk& log, const std::array<uint8_t, 16>& group,
                uint64_t data_offset, const std::vector<Drive*>& members,
                const std::function<bool(uint64_t stripe)>& torn, PplReplayStats* st, std::string* err,
                const PplRoomRoute& room) {
  const PplLayout& l = log.layout;
  const PplRing ring = ppl_ring(l, log.format);
  const Drives dv{members, room};
  AlignedBuf hdr = aligned(kPplHeaderBytes), pp = aligned(g.strip_bytes), data = aligned(g.strip_bytes);
  AlignedBuf block = aligned(2 * 4096);  // agree_on_lost_block's
  // Every trusted entry of a torn stripe, on every usable member.
  std::vector<Found> found;
  for (uint32_t m = 0; m < g.members && m < members.size(); m++) {
    Drive* d = members[m];
    if (!d) continue;
    const bool ok = log.format >= 3 ? collect_v3(g, dv, l, log.format, group, log.seq_floor, m, *d, torn, st, &found, err)
                                    : collect_v2(g, dv, l, group, m, *d, hdr.get(), pp.get(), torn, st, &found, err);
    if (!ok) return false;
  }
  std::sort(found.begin(), found.end(), [](const Found& a, const Found& b) {
    return a.e.stripe != b.e.stripe ? a.e.stripe < b.e.stripe : a.e.seq > b.e.seq;
  });
  std::vector<AlignedBuf> rows;  // per entry of the stripe: its parity row over [c0, c1)
  uint64_t wrote = 0;            // members written
  for (size_t i0 = 0, i1; i0 < found.size(); i0 = i1) {
    for (i1 = i0 + 1; i1 < found.size() && found[i1].e.stripe == found[i0].e.stripe;) i1++;
    size_t n = i1 - i0;
    if (log.format >= 3) {
      bool io_error = false;
      n = newest_whole_write(g, ring, dv, &found[i0], n, pp.get(), st, err, &io_error);
      if (io_error) return false;
    } else if (!one_write(g, dv, &found[i0], n)) {
      n = 0;
    }
    if (n == 0) {
      st->stripes_skipped++;
      continue;
    }
    while (rows.size() < n) rows.push_back(aligned(g.strip_bytes));
    const PplEntry& e0 = found[i0].e;
    const uint32_t L = e0.c1 - e0.c0;
    std::vector<int> unreadable((L + 4095) / 4096, kNoLostWriter);
    // Each row: its partial parity plus the row over the logged ranges as
    // they are on disk, on the members that are usable.
    for (size_t i = 0; i < n; i++) {
      const PplEntry& e = found[i0 + i].e;
      Drive* d = members[found[i0 + i].log];
      int rc = 0;
      if (!read_payload(*d, ring, found[i0 + i], rows[i].get(), &rc))
        return log_fail(err, st, *d, "log read", rc < 0 ? rc : -EIO);  // it was whole a moment ago
      if (!add_present_ranges(g, c, e, data_offset, dv, data.get(), rows[i].get(), e0.c0, &unreadable, err))
        return false;
    }
    // Columns a missing member was written at: were that write complete,
    // the parity there is consistent and rebuilds the member's new data;
    // were it in flight, the member's bytes there were being written and
    // the rows on disk may be torn apart. One such member: its bytes are
    // taken from the first row as it is on disk (old, new or, were the
    // other rows' writes torn, other bytes: it was being written), and the
    // other rows are made to agree with them. Two or more: the rows on
    // disk are kept (docs/ON-DISK.md: not covered). A block its member could
    // not read counts as that member's, lost.
    std::vector<int> lost = lost_writer_per_block(g, e0, dv);
    for (size_t b = 0; b < lost.size(); b++) {
      if (unreadable[b] == kNoLostWriter) continue;
      st->unreadable_blocks++;
      lost[b] = lost[b] == kNoLostWriter ? unreadable[b] : kLostWriters;
    }
    std::vector<uint8_t> put(lost.size());  // per block: 0 keep the disk's rows, 1 write every row, 2 all but the first
    for (size_t b = 0; b < lost.size(); b++) put[b] = lost[b] == kNoLostWriter ? 1 : 0;
    const bool same_write = n > 1 && (e0.flags & kPplWriteSeq);
    for (size_t b = 0; same_write && b < lost.size(); b++) {
      if (lost[b] < 0) continue;
      const uint32_t off = uint32_t(b) * 4096, len = std::min<uint32_t>(4096, L - off);
      bool parity_unreadable = false;
      if (!agree_on_lost_block(g, c, &found[i0], n, rows, uint32_t(lost[b]), data_offset, off, len, dv, block.get(),
                               &parity_unreadable, err))
        return false;
      put[b] = parity_unreadable ? 0 : 2;
    }
    for (size_t i = 0; i < n; i++) {
      const PplEntry& e = found[i0 + i].e;
      const int di = dv.index(found[i0 + i].member, e.stripe);  // where its parity strip is
      Drive* d = members[size_t(di)];
      const uint64_t at = data_offset + g.member_offset(e.stripe) + e.c0;
      for (uint32_t b0 = 0; b0 < put.size();) {
        auto writes = [&](uint32_t b) { return put[b] == 1 || (put[b] == 2 && i > 0); };
        if (!writes(b0)) {
          b0++;
          continue;
        }
        uint32_t b1 = b0;
        while (b1 < put.size() && writes(b1)) b1++;
        const uint32_t bytes = std::min<uint32_t>(b1 * 4096, L) - b0 * 4096;
        const int rc = d->sync_write(rows[i].get() + b0 * 4096, bytes, at + b0 * 4096);
        if (rc < 0) return io_fail(err, *d, "parity write", rc);
        b0 = b1;
      }
      st->rows_written++;
      wrote |= 1ull << di;
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
  // Every 4 KiB block: version 2 headers sit at slot starts, version 3 ones anywhere.
  constexpr size_t kChunk = 1u << 20;
  AlignedBuf zero = aligned(kChunk);
  memset(zero.get(), 0, kChunk);
  for (uint64_t off = 0; off < l.bytes(); off += kChunk) {
    const size_t n = size_t(std::min<uint64_t>(kChunk, l.bytes() - off));
    int rc = d.sync_write(zero.get(), n, l.offset + off);
    if (rc < 0) return io_fail(err, d, "log wipe", rc);
  }
  int rc = d.sync_flush();
  return rc < 0 ? io_fail(err, d, "flush", rc) : true;
}

}  // namespace gpuraid
