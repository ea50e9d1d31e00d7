// The write-hole guard's on-disk log (docs/ON-DISK.md, "Write-hole guard"):
// a partial parity log in the spirit of md's PPL, for every parity row.
// Each member has a log area of fixed slots; stripe s always uses slot
// slot_of(s) on the members holding its parity, so the entry a slot holds
// for a stripe is the newest ever written for it there.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "engine/geometry.h"
#include "engine/planner.h"

namespace gpuraid {

constexpr uint32_t kPplHeaderBytes = 4096;
// PplEntry::flags: no payload follows the header; the partial parity is
// zero over [c0, c1) (the write covers every data strip there).
constexpr uint32_t kPplZeroPayload = 1u << 0;
// PplEntry::flags: seq names the stripe write, the same in the entry of
// every parity row it logs (replay applies a stripe's entries only when
// every usable parity member holds that write's). Without it (entries of
// an older gpuraid) each row's entry has a seq of its own.
constexpr uint32_t kPplWriteSeq = 1u << 1;

struct PplLayout {
  uint64_t offset = 0;      // member byte offset of slot 0
  uint64_t slot_bytes = 0;  // header + one strip of partial parity
  uint32_t slots = 0;
  bool enabled() const { return slots != 0; }
  uint64_t bytes() const { return slot_bytes * slots; }
  uint32_t slot_of(uint64_t stripe) const;
  uint64_t slot_offset(uint32_t slot) const { return offset + slot * slot_bytes; }
  // The layout a new guarded group gets for its geometry: between 16 and
  // 1024 slots, about 1/64 of the member's data.
  static PplLayout for_new_group(uint32_t strip_bytes, uint64_t member_data_bytes, uint64_t offset);
};

// One log entry: the partial parity of parity row `row` of `stripe` over
// columns [c0, c1): that row computed over the stripe's data as the write
// leaves it, with the written ranges of the members it writes (`ranges`,
// empty for the rest) left out. Replay: the row is the partial parity plus
// the row over those ranges as they are on disk.
struct PplEntry {
  std::array<uint8_t, 16> group{};
  uint64_t seq = 0;
  uint64_t stripe = 0;
  uint32_t c0 = 0, c1 = 0;
  uint32_t row = 0;
  uint32_t k = 0;
  uint32_t payload_crc = 0;
  uint32_t flags = 0;  // kPplZeroPayload, kPplWriteSeq
  uint32_t payload_off = 0;  // version 3: where its partial parity starts, from its piece's start
  StripRange ranges[kMaxMembers];
};

// Version 3 (docs/ON-DISK.md, "Write-hole guard"): the log is a ring of
// pieces per member. A piece holds the entries of every stripe write one
// reactor turn logged on that member: one batch header (magic GPRPPL03,
// the write seq they share, the entries with their payload offsets and
// crcs; a multiple of 4 KiB) then their partial parities, written as one
// I/O. Entries are PplEntry with payload_off set (bytes from the piece's
// start).
constexpr uint32_t kPplBatchFixedBytes = 64;
struct PplBatchHeader {
  std::array<uint8_t, 16> group{};
  uint64_t seq = 0;
  uint32_t k = 0;
  uint32_t entries = 0;
  uint32_t header_bytes = 0;  // a multiple of 4 KiB
  uint32_t total_bytes = 0;   // header and payloads
};
// Version 4: the same pieces, in a ring that starts after two 4 KiB "ring
// tail" blocks at the area's start (docs/ON-DISK.md, "Log format 4"). A tail
// block names the lowest seq of the member's pieces whose room has not been
// reused since: pieces below it were reclaimed (their writes durable) and
// their room may hold newer pieces, so replay ignores them. Written
// alternately (count % 2), with FUA, before freed room is reused; the valid
// block with the higher seq counts, so a torn tail write leaves the older.
constexpr uint32_t kPplFormatSlots = 2;   // a slot per stripe (read only)
constexpr uint32_t kPplFormatRing = 3;   // the ring from the area's start
constexpr uint32_t kPplFormatTailed = 4;  // tail blocks, then the ring
constexpr uint64_t kPplTailAreaBytes = 8192;
struct PplRing {
  uint64_t offset = 0, bytes = 0;  // member byte offset of the ring, its size
};
PplRing ppl_ring(const PplLayout& l, uint32_t format);
struct PplTail {
  std::array<uint8_t, 16> group{};
  uint64_t seq = 0;    // pieces below it are not to be replayed
  uint64_t count = 0;  // tail writes of the run so far; block count % 2
};
void encode_ppl_tail(const PplTail& t, uint8_t* out /* 4096 bytes */);
bool decode_ppl_tail(const uint8_t* in, PplTail* t);  // false: no whole tail block
// The tail of a format 4 area, from its first kPplTailAreaBytes: the valid
// block of `group` with the higher seq; 0 where neither is valid.
uint64_t ppl_tail_seq(const uint8_t* blocks, const std::array<uint8_t, 16>& group);

// Bytes of a batch header listing n entries of k data strips.
uint32_t ppl_batch_header_bytes(uint32_t n, uint32_t k);
// One entry as the encoder reads it: what the rows of one stripe write
// share (stripe, columns, k, flags, ranges), and the row's own fields.
struct PplEntryRef {
  const PplEntry* write;
  uint32_t row, payload_crc, payload_off;
};
// Writes h.header_bytes bytes (h.entries of e[]; their seq is h.seq).
void encode_ppl_batch_header(const PplBatchHeader& h, const PplEntryRef* e, uint8_t* out);
// The same built in two steps, as the log does (ppl_log.cpp: each entry
// encoded as its write joins the batch, while the write's fields are in the
// cache; the header's size is known only once the batch closes): entry n's
// bytes at out + kPplBatchFixedBytes + n * ppl_batch_entry_bytes(k), its
// payload_off counted from the header's end; then the seal writes the fixed
// part, makes the offsets count from the piece's start and adds the crc.
uint32_t ppl_batch_entry_bytes(uint32_t k);
void encode_ppl_batch_entry(const PplEntryRef& e, uint32_t k, uint8_t* out);
void seal_ppl_batch_header(const PplBatchHeader& h, uint8_t* out);
bool is_ppl_batch_header(const uint8_t* in);
// in holds avail bytes from the header's start; false when it is no whole,
// valid batch header (magic, bounds, crc) or needs more bytes than avail
// (*need then says how many, when the first 64 are there).
bool decode_ppl_batch_header(const uint8_t* in, size_t avail, uint32_t strip_bytes, PplBatchHeader* h,
                             std::vector<PplEntry>* entries, size_t* need);

// Header into exactly kPplHeaderBytes (magic GPRPPL02; crc32c of the bytes
// in use, 0 .. 64 + 8k, in the last 4 bytes; zeros between). With
// rest_zeroed the caller promises the zeros are there already (a header
// buffer reused for entries of one k): only the bytes in use are written.
void encode_ppl_header(const PplEntry& e, uint8_t* out, bool rest_zeroed = false);
// False when the block is no entry header (magic, crc, bounds). Reads
// GPRPPL02 and the GPRPPL01 headers of older gpuraid (crc of bytes 0..4091).
bool decode_ppl_header(const uint8_t* in, uint32_t strip_bytes, PplEntry* e);
uint32_t ppl_crc(const uint8_t* p, uint64_t len);

}  // namespace gpuraid
