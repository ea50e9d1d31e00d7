#include "engine/group/superblock.h"

#include <isa-l/crc.h>
#include <uuid/uuid.h>

#include <algorithm>
#include <cstring>

#include "engine/levels/level.h"

namespace gpuraid {

namespace {
constexpr char kMagic[8] = {'G', 'P', 'U', 'R', 'A', 'I', 'D', '1'};
constexpr size_t kNameBytes = 64;
constexpr size_t kSlotBytes = 32;
constexpr size_t kSlotsOffset = 512;  // fixed fields first, then the slot table
static_assert(kSlotsOffset + kMaxSlots * kSlotBytes <= kSuperblockBytes - 4, "slot table must fit");

// Little-endian field writer/reader over one block.
struct Writer {
  uint8_t* p;
  size_t at = 0;
  void u8(uint8_t v) { p[at++] = v; }
  void u32(uint32_t v) {
    for (int i = 0; i < 4; i++) p[at++] = uint8_t(v >> (8 * i));
  }
  void u64(uint64_t v) {
    for (int i = 0; i < 8; i++) p[at++] = uint8_t(v >> (8 * i));
  }
  void bytes(const void* b, size_t n) {
    memcpy(p + at, b, n);
    at += n;
  }
};
struct Reader {
  const uint8_t* p;
  size_t at = 0;
  uint8_t u8() { return p[at++]; }
  uint32_t u32() {
    uint32_t v = 0;
    for (int i = 0; i < 4; i++) v |= uint32_t(p[at++]) << (8 * i);
    return v;
  }
  uint64_t u64() {
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) v |= uint64_t(p[at++]) << (8 * i);
    return v;
  }
  void bytes(void* b, size_t n) {
    memcpy(b, p + at, n);
    at += n;
  }
};

uint32_t crc_of(const uint8_t* block) { return crc32_iscsi(const_cast<uint8_t*>(block), kSuperblockBytes - 4, 0xffffffffu); }
}  // namespace

Uuid new_uuid() {
  Uuid u;
  uuid_generate(u.data());
  return u;
}

std::string uuid_str(const Uuid& u) {
  char s[37];
  uuid_unparse_lower(u.data(), s);
  return s;
}

const char* slot_state_name(SlotState s) {
  switch (s) {
    case SlotState::Empty: return "empty";
    case SlotState::Active: return "active";
    case SlotState::Failed: return "failed";
    case SlotState::Rebuilding: return "rebuilding";
    case SlotState::Spare: return "spare";
    case SlotState::Missing: return "missing";
  }
  return "?";
}

const char* decode_result_name(DecodeResult r) {
  switch (r) {
    case DecodeResult::Ok: return "ok";
    case DecodeResult::NoMagic: return "no gpuraid superblock";
    case DecodeResult::BadCrc: return "superblock checksum mismatch";
    case DecodeResult::NewerVersion: return "superblock format newer than this gpuraid supports";
    case DecodeResult::Malformed: return "malformed superblock";
  }
  return "?";
}

void encode_superblock(const Superblock& sb, uint8_t* out) {
  memset(out, 0, kSuperblockBytes);
  Writer w{out};
  w.bytes(kMagic, 8);                 // 0
  const uint32_t version = sb.format_version();
  w.u32(version);                     // 8
  w.u32(kSuperblockBytes);            // 12
  w.bytes(sb.group_uuid.data(), 16);  // 16
  w.bytes(sb.member_uuid.data(), 16); // 32
  w.u32(sb.slot);                     // 48
  w.u32(uint32_t(sb.level));          // 52
  w.u32(sb.members);                  // 56
  w.u32(sb.parity);                   // 60
  w.u32(sb.strip_bytes);              // 64
  w.u32(sb.subgroups > 1 ? sb.subgroups : 0);  // 68 (version 1: reserved, 0)
  w.u64(sb.data_offset);              // 72
  w.u64(sb.member_data_bytes);        // 80
  w.u64(sb.generation);               // 88
  w.u64(kBitmapOffset);               // 96
  w.u64(sb.bitmap_region_bytes);      // 104
  w.u32(sb.flags);                    // 112
  w.u32(kMaxSlots);                   // 116
  w.u64(sb.init_checkpoint);          // 120
  w.u64(sb.created_unix);             // 128
  char name[kNameBytes] = {};
  memcpy(name, sb.name.data(), std::min(sb.name.size(), kNameBytes - 1));
  w.bytes(name, kNameBytes);          // 136 .. 200
  if (version >= 2) {                 // zeros without the guard
    w.u64(sb.ppl_offset);             // 200
    w.u64(sb.ppl_slot_bytes);         // 208
    w.u32(sb.ppl_slots);              // 216
  }
  if (version >= 3) {
    w.at = 224;
    w.u32(sb.ppl_format);             // 224
    w.u32(0);                         // 228
    w.u64(sb.ppl_seq_floor);          // 232
  }
  if (version >= 4) {                 // zeros but for draid5/6
    w.at = 240;
    w.u32(sb.declustered.data);       // 240
    w.u32(sb.declustered.spares);     // 244
  }
  w.at = kSlotsOffset;
  for (const Slot& s : sb.slots) {    // 512 + 32 * i
    w.bytes(s.uuid.data(), 16);
    w.u8(uint8_t(s.state));
    w.u8(s.room);
    for (int i = 0; i < 6; i++) w.u8(0);
    w.u64(s.rebuild_checkpoint);
  }
  uint32_t crc = crc_of(out);
  w.at = kSuperblockBytes - 4;
  w.u32(crc);
}

DecodeResult decode_superblock(const uint8_t* in, Superblock* sb) {
  if (memcmp(in, kMagic, 8) != 0) return DecodeResult::NoMagic;
  Reader r{in, kSuperblockBytes - 4};
  if (r.u32() != crc_of(in)) return DecodeResult::BadCrc;
  r.at = 8;
  Superblock s;
  s.version = r.u32();
  if (s.version > kSuperblockVersion) return DecodeResult::NewerVersion;
  if (r.u32() != kSuperblockBytes) return DecodeResult::Malformed;
  r.bytes(s.group_uuid.data(), 16);
  r.bytes(s.member_uuid.data(), 16);
  s.slot = r.u32();
  uint32_t level = r.u32();
  if (!level_known(level)) return DecodeResult::Malformed;
  s.level = Level(level);
  s.members = r.u32();
  s.parity = r.u32();
  s.strip_bytes = r.u32();
  const uint32_t subgroups = r.u32();
  if (s.version < 2 && subgroups != 0) return DecodeResult::Malformed;
  s.subgroups = subgroups ? subgroups : 1;
  s.data_offset = r.u64();
  s.member_data_bytes = r.u64();
  s.generation = r.u64();
  if (r.u64() != kBitmapOffset) return DecodeResult::Malformed;
  s.bitmap_region_bytes = r.u64();
  s.flags = r.u32();
  if (r.u32() != kMaxSlots) return DecodeResult::Malformed;
  s.init_checkpoint = r.u64();
  s.created_unix = r.u64();
  char name[kNameBytes];
  r.bytes(name, kNameBytes);
  name[kNameBytes - 1] = 0;
  s.name = name;
  if (s.version >= 2) {
    s.ppl_offset = r.u64();
    s.ppl_slot_bytes = r.u64();
    s.ppl_slots = r.u32();
  }
  if (s.version >= 3) {
    r.at = 224;
    s.ppl_format = r.u32();
    r.at = 232;
    s.ppl_seq_floor = r.u64();
    if (s.ppl_format != 0 && s.ppl_format != kPplFormatRing && s.ppl_format != kPplFormatTailed)
      return DecodeResult::Malformed;
  }
  if (s.version >= 4) {
    r.at = 240;
    s.declustered.data = r.u32();
    s.declustered.spares = r.u32();
  }
  r.at = kSlotsOffset;
  for (Slot& sl : s.slots) {
    r.bytes(sl.uuid.data(), 16);
    uint8_t st = r.u8();
    if (st > uint8_t(SlotState::Missing)) return DecodeResult::Malformed;
    sl.state = SlotState(st);
    sl.room = r.u8();
    r.at += 6;
    // A place in the room: a member in it (failed), or, version 5, one being copied back out (rebuilding).
    if (sl.room && (s.version < 4 || !(sl.state == SlotState::Failed ||
                                       (s.version >= 5 && sl.state == SlotState::Rebuilding))))
      return DecodeResult::Malformed;
    sl.rebuild_checkpoint = r.u64();
  }
  if (s.members == 0 || s.members > kMaxMembers || s.slot >= kMaxSlots || s.data_offset < kMetadataBytes)
    return DecodeResult::Malformed;
  if ((s.flags & kFlagRoomStale) && s.version < 6) return DecodeResult::Malformed;
  const bool guard = s.flags & kFlagWriteHoleGuard;
  if (guard != (s.version >= 2 && s.ppl_slots != 0) || (s.ppl_format && !guard) ||
      (guard && (s.ppl_offset % 4096 || s.ppl_slot_bytes != 4096ull + s.strip_bytes ||
                 s.ppl_offset < s.data_offset + s.member_data_bytes)))
    return DecodeResult::Malformed;
  Geometry g;
  std::string err;
  if (!Geometry::make(s.level, s.members, level_description(s.level).chosen_parity ? s.parity : 0, s.strip_bytes,
                      s.member_data_bytes, &g, &err, s.subgroups, s.declustered) ||
      g.member_data_bytes != s.member_data_bytes)
    return DecodeResult::Malformed;
  *sb = s;
  return DecodeResult::Ok;
}

}  // namespace gpuraid
