#include "engine/ppl/ppl_format.h"

#include <isa-l/crc.h>

#include <algorithm>
#include <cstring>

namespace gpuraid {

namespace {
// 02: the header crc covers the bytes in use (0 .. 64 + 8k), not the
// zeros after them: it was a quarter of a guarded write's CPU. 01 (older
// gpuraid): the crc covers bytes 0..4091; still read.
constexpr char kMagic[8] = {'G', 'P', 'R', 'P', 'P', 'L', '0', '2'};
constexpr char kMagicV1[8] = {'G', 'P', 'R', 'P', 'P', 'L', '0', '1'};
constexpr size_t kRangesOffset = 64;
constexpr size_t used_bytes(uint32_t k) { return kRangesOffset + 8 * size_t(k); }
static_assert(kRangesOffset + kMaxMembers * 8 <= kPplHeaderBytes - 4, "ranges must fit");

// Fields are little-endian on disk: a plain copy on a little-endian host.
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "the log's fields are written as the host's words");
void put32(uint8_t* p, uint32_t v) { memcpy(p, &v, 4); }
void put64(uint8_t* p, uint64_t v) { memcpy(p, &v, 8); }
uint32_t get32(const uint8_t* p) {
  uint32_t v;
  memcpy(&v, p, 4);
  return v;
}
uint64_t get64(const uint8_t* p) {
  uint64_t v;
  memcpy(&v, p, 8);
  return v;
}
static_assert(sizeof(StripRange) == 8, "ranges are copied as pairs of u32");
constexpr char kMagicV3[8] = {'G', 'P', 'R', 'P', 'P', 'L', '0', '3'};
constexpr size_t batch_entry_bytes(uint32_t k) { return 32 + 8 * size_t(k); }
}  // namespace

PplRing ppl_ring(const PplLayout& l, uint32_t format) {
  const uint64_t front = format >= kPplFormatTailed ? kPplTailAreaBytes : 0;
  return PplRing{l.offset + front, l.bytes() - front};
}

namespace {
constexpr char kMagicTail[8] = {'G', 'P', 'R', 'P', 'P', 'T', '0', '4'};
constexpr size_t kTailUsed = 40;  // magic, group, seq, count
}  // namespace

void encode_ppl_tail(const PplTail& t, uint8_t* out) {
  memset(out, 0, 4096);
  memcpy(out, kMagicTail, 8);
  memcpy(out + 8, t.group.data(), 16);
  put64(out + 24, t.seq);
  put64(out + 32, t.count);
  put32(out + 4092, ppl_crc(out, kTailUsed));
}

bool decode_ppl_tail(const uint8_t* in, PplTail* t) {
  if (memcmp(in, kMagicTail, 8) != 0 || get32(in + 4092) != ppl_crc(in, kTailUsed)) return false;
  memcpy(t->group.data(), in + 8, 16);
  t->seq = get64(in + 24);
  t->count = get64(in + 32);
  return true;
}

uint64_t ppl_tail_seq(const uint8_t* blocks, const std::array<uint8_t, 16>& group) {
  uint64_t seq = 0;
  for (int i = 0; i < 2; i++) {
    PplTail t;
    if (decode_ppl_tail(blocks + 4096 * i, &t) && t.group == group) seq = std::max(seq, t.seq);
  }
  return seq;
}

uint32_t ppl_batch_header_bytes(uint32_t n, uint32_t k) {
  const size_t used = kPplBatchFixedBytes + n * batch_entry_bytes(k) + 4;
  return uint32_t((used + 4095) / 4096 * 4096);
}

bool is_ppl_batch_header(const uint8_t* in) { return memcmp(in, kMagicV3, 8) == 0; }

uint32_t ppl_batch_entry_bytes(uint32_t k) { return uint32_t(batch_entry_bytes(k)); }

void encode_ppl_batch_entry(const PplEntryRef& e, uint32_t k, uint8_t* p) {
  const PplEntry& w = *e.write;
  put64(p, w.stripe);
  put32(p + 8, w.c0);
  put32(p + 12, w.c1);
  put32(p + 16, e.row);
  put32(p + 20, w.flags);
  put32(p + 24, e.payload_crc);
  put32(p + 28, e.payload_off);
  memcpy(p + 32, w.ranges, 8 * size_t(k));
}

void seal_ppl_batch_header(const PplBatchHeader& h, uint8_t* out) {
  const size_t used = kPplBatchFixedBytes + h.entries * batch_entry_bytes(h.k);
  memcpy(out, kMagicV3, 8);
  memcpy(out + 8, h.group.data(), 16);
  put64(out + 24, h.seq);
  put32(out + 32, h.k);
  put32(out + 36, h.entries);
  put32(out + 40, h.header_bytes);
  put32(out + 44, h.total_bytes);
  memset(out + 48, 0, 16);
  for (uint32_t n = 0; n < h.entries; n++) {
    uint8_t* off = out + kPplBatchFixedBytes + n * batch_entry_bytes(h.k) + 28;
    put32(off, get32(off) + h.header_bytes);
  }
  // The bytes after those in use stay as they are (the caller's buffer may
  // hold an older header there): the crc covers only what is in use.
  put32(out + h.header_bytes - 4, ppl_crc(out, used));
}

void encode_ppl_batch_header(const PplBatchHeader& h, const PplEntryRef* e, uint8_t* out) {
  for (uint32_t n = 0; n < h.entries; n++) {
    PplEntryRef x = e[n];
    x.payload_off -= h.header_bytes;  // the seal adds it back
    encode_ppl_batch_entry(x, h.k, out + kPplBatchFixedBytes + n * batch_entry_bytes(h.k));
  }
  seal_ppl_batch_header(h, out);
}

bool decode_ppl_batch_header(const uint8_t* in, size_t avail, uint32_t strip_bytes, PplBatchHeader* h,
                             std::vector<PplEntry>* entries, size_t* need) {
  if (avail < kPplBatchFixedBytes || !is_ppl_batch_header(in)) return false;
  PplBatchHeader x;
  memcpy(x.group.data(), in + 8, 16);
  x.seq = get64(in + 24);
  x.k = get32(in + 32);
  x.entries = get32(in + 36);
  x.header_bytes = get32(in + 40);
  x.total_bytes = get32(in + 44);
  if (x.k == 0 || x.k > kMaxMembers || x.entries == 0 || x.entries > 65536 ||
      x.header_bytes != ppl_batch_header_bytes(x.entries, x.k) || x.total_bytes < x.header_bytes ||
      x.total_bytes % 4096)
    return false;
  if (x.header_bytes > avail) {
    if (need) *need = x.header_bytes;
    return false;
  }
  const size_t used = kPplBatchFixedBytes + x.entries * batch_entry_bytes(x.k);
  if (get32(in + x.header_bytes - 4) != ppl_crc(in, used)) return false;
  std::vector<PplEntry> v(x.entries);
  for (uint32_t n = 0; n < x.entries; n++) {
    const uint8_t* p = in + kPplBatchFixedBytes + n * batch_entry_bytes(x.k);
    PplEntry& e = v[n];
    e.group = x.group;
    e.seq = x.seq;
    e.k = x.k;
    e.stripe = get64(p);
    e.c0 = get32(p + 8);
    e.c1 = get32(p + 12);
    e.row = get32(p + 16);
    e.flags = get32(p + 20);
    e.payload_crc = get32(p + 24);
    e.payload_off = get32(p + 28);
    if (e.flags & ~(kPplZeroPayload | kPplWriteSeq)) return false;
    if (e.c0 >= e.c1 || e.c1 > strip_bytes) return false;
    const uint32_t L = (e.flags & kPplZeroPayload) ? 0 : e.c1 - e.c0;
    if (e.payload_off < x.header_bytes || uint64_t(e.payload_off) + L > x.total_bytes || e.payload_off % 4096)
      return false;
    for (uint32_t i = 0; i < x.k; i++) {
      e.ranges[i].a = get32(p + 32 + 8 * i);
      e.ranges[i].b = get32(p + 36 + 8 * i);
      if (!e.ranges[i].empty() && (e.ranges[i].a < e.c0 || e.ranges[i].b > e.c1)) return false;
    }
  }
  *h = x;
  *entries = std::move(v);
  return true;
}

uint32_t ppl_crc(const uint8_t* p, uint64_t len) {
  return crc32_iscsi(const_cast<uint8_t*>(p), int(len), 0xffffffffu);
}

uint32_t PplLayout::slot_of(uint64_t stripe) const {
  // Spread stripes over the slots (the stripes one member holds parity for
  // are every n-th: a plain modulo would leave slots unused).
  uint64_t h = stripe * 0x9e3779b97f4a7c15ull;
  return uint32_t((h >> 32) % slots);
}

PplLayout PplLayout::for_new_group(uint32_t strip_bytes, uint64_t member_data_bytes, uint64_t offset) {
  PplLayout l;
  l.offset = offset;
  l.slot_bytes = kPplHeaderBytes + uint64_t(strip_bytes);
  l.slots = uint32_t(std::clamp<uint64_t>(member_data_bytes / 64 / l.slot_bytes, 16, 1024));
  return l;
}

void encode_ppl_header(const PplEntry& e, uint8_t* out, bool rest_zeroed) {
  if (!rest_zeroed) memset(out, 0, kPplHeaderBytes);
  memcpy(out, kMagic, 8);
  memcpy(out + 8, e.group.data(), 16);
  put64(out + 24, e.seq);
  put64(out + 32, e.stripe);
  put32(out + 40, e.c0);
  put32(out + 44, e.c1);
  put32(out + 48, e.row);
  put32(out + 52, e.k);
  put32(out + 56, e.payload_crc);
  put32(out + 60, e.flags);
  for (uint32_t i = 0; i < e.k; i++) {
    put32(out + kRangesOffset + 8 * i, e.ranges[i].a);
    put32(out + kRangesOffset + 8 * i + 4, e.ranges[i].b);
  }
  put32(out + kPplHeaderBytes - 4, ppl_crc(out, used_bytes(e.k)));
}

bool decode_ppl_header(const uint8_t* in, uint32_t strip_bytes, PplEntry* e) {
  const bool v2 = memcmp(in, kMagic, 8) == 0;
  if (!v2 && memcmp(in, kMagicV1, 8) != 0) return false;
  const uint32_t k = get32(in + 52);
  if (k == 0 || k > kMaxMembers) return false;
  if (get32(in + kPplHeaderBytes - 4) != ppl_crc(in, v2 ? used_bytes(k) : kPplHeaderBytes - 4)) return false;
  PplEntry x;
  memcpy(x.group.data(), in + 8, 16);
  x.seq = get64(in + 24);
  x.stripe = get64(in + 32);
  x.c0 = get32(in + 40);
  x.c1 = get32(in + 44);
  x.row = get32(in + 48);
  x.k = get32(in + 52);
  x.payload_crc = get32(in + 56);
  x.flags = get32(in + 60);
  if (x.flags & ~(kPplZeroPayload | kPplWriteSeq)) return false;  // a flag this version does not know
  if (x.k == 0 || x.k > kMaxMembers || x.c0 >= x.c1 || x.c1 > strip_bytes) return false;
  for (uint32_t i = 0; i < x.k; i++) {
    x.ranges[i].a = get32(in + kRangesOffset + 8 * i);
    x.ranges[i].b = get32(in + kRangesOffset + 8 * i + 4);
    if (!x.ranges[i].empty() && (x.ranges[i].a < x.c0 || x.ranges[i].b > x.c1)) return false;
  }
  *e = x;
  return true;
}

}  // namespace gpuraid
