// The on-disk superblock of a member (format version 1, or 2 with the write-hole guard). Two copies per
// member (docs/ON-DISK.md gives every field, offset and size). Encoded
// field by field, little-endian, into one 4 KiB block whose last four
// bytes are a crc32c of the rest.
#pragma once
#include <algorithm>
#include <array>
#include <cstdint>
#include <string>

#include "engine/geometry.h"
#include "engine/ppl/ppl_format.h"
#include "engine/ppl/ppl_replay.h"

namespace gpuraid {

// Version 2 adds the write-hole guard's log fields (offset 200) and the
// sub-group count (offset 68, raid50/60). A superblock is written as
// version 2 only when it has one of them: every other group's stays
// version 1, byte for byte, and an older gpuraid refuses a version 2
// member as too new (nothing written).
// 3: the write-hole log is batched (ppl_format 3, ppl_seq_floor); older
// gpuraid refuses such a member rather than misread its log. ppl_format 4
// (ring tails, 2026-11-29) keeps version 3; a gpuraid that knows only
// format 3 refuses it as malformed, so it never writes a tail-less ring
// over it.
// 4: a declustered group (draid5/6): its stripe shape (offset 240); only
// such groups' superblocks are version 4.
// 5: a declustered group's member is being copied back out of the room (a
// slot "rebuilding" with a room place); only while that runs.
// 6: such a copy-back whose room copies past its checkpoint are stale
// (kFlagRoomStale); a gpuraid that knows only 5 would trust them.
constexpr uint32_t kSuperblockVersion = 6;
constexpr uint32_t kSuperblockBytes = 4096;
constexpr uint64_t kSuperblockOffsets[2] = {0, 4096};  // copy A, copy B
constexpr uint64_t kBitmapOffset = 64 * 1024;         // write-intent bitmap
constexpr uint64_t kMetadataBytes = 2u << 20;         // data starts here on every member
constexpr uint64_t kBitmapMaxBytes = kMetadataBytes - kBitmapOffset;
constexpr uint32_t kMaxSlots = 64 + 16;               // members + spares

using Uuid = std::array<uint8_t, 16>;
Uuid new_uuid();
std::string uuid_str(const Uuid& u);

// Missing: the member's path was lost (it may come back); it lacks the writes
// made since, so it is never trusted as active again without a rebuild.
enum class SlotState : uint8_t { Empty = 0, Active = 1, Failed = 2, Rebuilding = 3, Spare = 4, Missing = 5 };
const char* slot_state_name(SlotState s);

struct Slot {
  Uuid uuid{};
  SlotState state = SlotState::Empty;
  uint64_t rebuild_checkpoint = 0;  // Rebuilding: member data bytes rebuilt (stripes below are current)
  // Declustered groups (version 4): a Failed member rebuilt into the
  // distributed spare room, its place in the room's order + 1 (0: not in
  // it); its rebuild_checkpoint is how far (all its data: rebuilt).
  // Version 5: a Rebuilding member with a place is being copied back onto
  // its drive (copy_back.cpp); its checkpoint is how far that went.
  uint8_t room = 0;
};

enum SuperblockFlags : uint32_t {
  kFlagClean = 1u << 0,        // stopped cleanly: no write was in flight, the bitmap is empty
  kFlagInitialized = 1u << 1,  // parity consistent everywhere below init_checkpoint = all
  kFlagWriteHoleGuard = 1u << 2,  // version 2: partial parity logged (ppl_* fields, engine/ppl/)
  // Stopped with no write in flight while regions still waited for their
  // resync (an earlier unclean stop's): the bitmap holds exactly those, the
  // log holds nothing to replay. Never set with kFlagClean; a reader that
  // does not know the bit sees an unclean stop (replay, resync: safe).
  kFlagResyncPending = 1u << 3,
  // Version 6: the copy-back running (a rebuilding slot with a room place)
  // was resumed after an unclean stop, so the room's copies past its
  // checkpoint are stale (writes past it went to parity only): every later
  // start reads around them too, clean stop or not, until the copy passes
  // them. Cleared when no copy-back runs (Group::Impl::persist_locked).
  kFlagRoomStale = 1u << 4,
  // The dirty regions of an earlier unclean stop were not made consistent
  // by the write-hole log (a log could not be read, or members were forced
  // in): until their resync has ended and is durable, a start after a later
  // unclean stop does not trust their parity after its own replay either
  // (Group::Impl::dirty_untrusted). A reader that does not know the bit
  // trusts no dirty region before its resync anyway.
  kFlagDirtyUntrusted = 1u << 5,
};

struct Superblock {
  uint32_t version = 1;               // as read; encode writes format_version()
  Uuid group_uuid{};
  Uuid member_uuid{};
  uint32_t slot = 0;                  // this drive's slot: < members for a member, >= for a spare
  Level level = Level::R5;
  uint32_t members = 0, parity = 0, strip_bytes = 0;
  uint32_t subgroups = 1;             // raid50/60: G (offset 68, version 2); 1 otherwise
  DeclusteredShape declustered;       // draid5/6: D and S (offsets 240, 244, version 4); zeros otherwise
  uint64_t data_offset = kMetadataBytes;
  uint64_t member_data_bytes = 0;
  uint64_t generation = 0;            // bumped on every state change
  uint64_t bitmap_region_bytes = 0;
  uint32_t flags = 0;
  uint64_t init_checkpoint = 0;       // stripes below are initialized (when not kFlagInitialized)
  uint64_t created_unix = 0;
  std::string name;                   // up to 63 bytes
  // Write-hole guard log (version 2, kFlagWriteHoleGuard): slots of
  // ppl_slot_bytes at member offset ppl_offset, after the member data.
  uint64_t ppl_offset = 0, ppl_slot_bytes = 0;
  uint32_t ppl_slots = 0;
  // How the log in that area is written (version 3): 0 = version 2's slot
  // per stripe, 3 = batched pieces in a ring (ppl_log.h); and the lowest
  // write seq of the run that wrote it: replay ignores older entries.
  uint32_t ppl_format = 0;
  uint64_t ppl_seq_floor = 0;
  std::array<Slot, kMaxSlots> slots{};

  // The version this superblock is written as (at least `version`).
  uint32_t format_version() const {
    if (declustered.data) return copying_back() ? (flags & kFlagRoomStale ? 6 : 5) : 4;  // back to 4 when it ends
    return std::max<uint32_t>(version, ppl_format >= 3 ? 3 : subgroups > 1 || ppl_slots ? 2 : 1);
  }
  bool copying_back() const {
    for (const Slot& s : slots)
      if (s.room && s.state == SlotState::Rebuilding) return true;
    return false;
  }
  // Bytes a drive needs to hold this member (metadata, data, guard log).
  uint64_t member_bytes_needed() const {
    const uint64_t end = data_offset + member_data_bytes;
    return ppl_slots ? std::max(end, ppl_offset + ppl_slot_bytes * ppl_slots) : end;
  }
  PplLayout ppl_layout() const { return PplLayout{ppl_offset, ppl_slot_bytes, ppl_slots}; }
  PplLogOnDisk ppl_log() const { return PplLogOnDisk{ppl_layout(), ppl_format, ppl_seq_floor}; }
  // Stripes side by side in a row (Geometry::row_stripes): G sub-groups,
  // a declustered map's k = (N - S) / (D + P), else 1.
  uint32_t row_stripes() const {
    return declustered.data ? (members - declustered.spares) / (declustered.data + parity) : subgroups;
  }
  // The bitmap covers stripe * strip_bytes, row_stripes() times a member's
  // data (stripes of one region stay consecutive).
  uint64_t bitmap_regions() const {
    const uint64_t covered = member_data_bytes * row_stripes();
    return bitmap_region_bytes ? (covered + bitmap_region_bytes - 1) / bitmap_region_bytes : 0;
  }
};

// Encodes into exactly kSuperblockBytes (crc32c in the last 4 bytes).
void encode_superblock(const Superblock& sb, uint8_t* out);
enum class DecodeResult { Ok, NoMagic, BadCrc, NewerVersion, Malformed };
const char* decode_result_name(DecodeResult r);
DecodeResult decode_superblock(const uint8_t* in, Superblock* sb);

}  // namespace gpuraid
