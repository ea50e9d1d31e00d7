#include <gtest/gtest.h>
#include <isa-l/crc.h>

#include <cstring>

#include "engine/group/superblock.h"

using namespace gpuraid;

static Superblock sample() {
  Superblock sb;
  sb.group_uuid = new_uuid();
  sb.member_uuid = new_uuid();
  sb.slot = 3;
  sb.level = Level::R6;
  sb.members = 6;
  sb.strip_bytes = 65536;
  sb.member_data_bytes = 64ull << 20;
  sb.generation = 42;
  sb.bitmap_region_bytes = 1 << 20;
  sb.flags = kFlagInitialized;
  sb.init_checkpoint = 7;
  sb.created_unix = 1700000000;
  sb.name = "dg0";
  sb.slots[0] = Slot{new_uuid(), SlotState::Active, 0};
  sb.slots[3] = Slot{sb.member_uuid, SlotState::Rebuilding, 12345 * 4096};
  sb.slots[4] = Slot{new_uuid(), SlotState::Missing, 0};
  sb.slots[70] = Slot{new_uuid(), SlotState::Spare, 0};
  return sb;
}

TEST(Superblock, RoundTrip) {
  Superblock sb = sample(), back;
  uint8_t buf[kSuperblockBytes];
  encode_superblock(sb, buf);
  ASSERT_EQ(decode_superblock(buf, &back), DecodeResult::Ok);
  EXPECT_EQ(back.group_uuid, sb.group_uuid);
  EXPECT_EQ(back.member_uuid, sb.member_uuid);
  EXPECT_EQ(back.slot, 3u);
  EXPECT_EQ(back.level, Level::R6);
  EXPECT_EQ(back.generation, 42u);
  EXPECT_EQ(back.name, "dg0");
  EXPECT_EQ(back.init_checkpoint, 7u);
  EXPECT_EQ(back.slots[3].state, SlotState::Rebuilding);
  EXPECT_EQ(back.slots[3].rebuild_checkpoint, 12345u * 4096);
  EXPECT_EQ(back.slots[4].state, SlotState::Missing);
  EXPECT_EQ(back.slots[70].state, SlotState::Spare);
  EXPECT_EQ(back.slots[5].state, SlotState::Empty);
}

TEST(Superblock, LittleEndianFieldsAtDocumentedOffsets) {
  Superblock sb = sample();
  uint8_t buf[kSuperblockBytes];
  encode_superblock(sb, buf);
  EXPECT_EQ(0, memcmp(buf, "GPURAID1", 8));
  EXPECT_EQ(buf[8], 1);  // version: 1 without the write-hole guard and sub-groups, as before (2 with them)
  EXPECT_EQ(buf[48], 3);         // slot
  EXPECT_EQ(buf[52], uint8_t(Level::R6));
  EXPECT_EQ(buf[88], 42);        // generation, low byte first
  EXPECT_EQ(buf[89], 0);
  EXPECT_EQ(0, memcmp(buf + 136, "dg0", 4));
  EXPECT_EQ(buf[512 + 32 * 3 + 16], uint8_t(SlotState::Rebuilding));
}

TEST(Superblock, DetectsCorruption) {
  Superblock sb = sample(), back;
  uint8_t buf[kSuperblockBytes];
  encode_superblock(sb, buf);
  buf[100] ^= 1;
  EXPECT_EQ(decode_superblock(buf, &back), DecodeResult::BadCrc);
  memset(buf, 0, sizeof buf);
  EXPECT_EQ(decode_superblock(buf, &back), DecodeResult::NoMagic);
}

TEST(Superblock, RefusesNewerVersion) {
  Superblock sb = sample(), back;
  sb.version = kSuperblockVersion + 1;
  uint8_t buf[kSuperblockBytes];
  encode_superblock(sb, buf);
  EXPECT_EQ(decode_superblock(buf, &back), DecodeResult::NewerVersion);
}

TEST(Superblock, RefusesImpossibleGeometry) {
  Superblock sb = sample(), back;
  sb.strip_bytes = 3000;
  uint8_t buf[kSuperblockBytes];
  encode_superblock(sb, buf);
  EXPECT_EQ(decode_superblock(buf, &back), DecodeResult::Malformed);
}

// RAID 60 with the write-hole guard: version 2 with both the sub-group
// count (offset 68) and the log fields (offset 200).
TEST(Superblock, RoundTripSubgroupsWithTheGuard) {
  Superblock sb = sample(), back;
  sb.level = Level::R60;
  sb.members = 8;
  sb.subgroups = 2;
  sb.version = 2;
  sb.flags |= kFlagWriteHoleGuard;
  sb.ppl_offset = sb.data_offset + sb.member_data_bytes;
  sb.ppl_slot_bytes = 4096 + sb.strip_bytes;
  sb.ppl_slots = 16;
  uint8_t buf[kSuperblockBytes];
  encode_superblock(sb, buf);
  EXPECT_EQ(buf[8], 2);
  EXPECT_EQ(buf[68], 2);
  ASSERT_EQ(decode_superblock(buf, &back), DecodeResult::Ok);
  EXPECT_EQ(back.level, Level::R60);
  EXPECT_EQ(back.subgroups, 2u);
  EXPECT_TRUE(back.flags & kFlagWriteHoleGuard);
  EXPECT_EQ(back.ppl_offset, sb.ppl_offset);
  EXPECT_EQ(back.ppl_slot_bytes, sb.ppl_slot_bytes);
  EXPECT_EQ(back.ppl_slots, 16u);
}

// Version 3: the batched write-hole log's format and replay floor at 224
// and 232. A version 2 superblock (an older gpuraid's) reads as format 0,
// the slot log; a format this build does not know is malformed.
TEST(Superblock, Version3CarriesTheLogFormatAndFloor) {
  Superblock sb = sample(), back;
  sb.version = 2;
  sb.flags |= kFlagWriteHoleGuard;
  sb.ppl_offset = sb.data_offset + sb.member_data_bytes;
  sb.ppl_slot_bytes = 4096 + sb.strip_bytes;
  sb.ppl_slots = 16;
  uint8_t buf[kSuperblockBytes];
  encode_superblock(sb, buf);
  EXPECT_EQ(buf[8], 2) << "no batched log: written as version 2, as before";
  ASSERT_EQ(decode_superblock(buf, &back), DecodeResult::Ok);
  EXPECT_EQ(back.ppl_format, 0u);
  sb.ppl_format = 3;
  sb.ppl_seq_floor = (7ull << 40) + 1;
  encode_superblock(sb, buf);
  EXPECT_EQ(buf[8], 3);
  EXPECT_EQ(buf[224], 3);
  uint64_t floor = 0;
  memcpy(&floor, buf + 232, 8);
  EXPECT_EQ(floor, sb.ppl_seq_floor);
  ASSERT_EQ(decode_superblock(buf, &back), DecodeResult::Ok);
  EXPECT_EQ(back.version, 3u);
  EXPECT_EQ(back.ppl_format, 3u);
  EXPECT_EQ(back.ppl_seq_floor, sb.ppl_seq_floor);
  EXPECT_EQ(back.ppl_log().format, 3u);
  sb.ppl_format = 4;  // ring tails (ppl_format.h)
  encode_superblock(sb, buf);
  EXPECT_EQ(buf[8], 3);
  ASSERT_EQ(decode_superblock(buf, &back), DecodeResult::Ok);
  EXPECT_EQ(back.ppl_log().format, 4u);
  sb.ppl_format = 5;  // a format no gpuraid has written
  encode_superblock(sb, buf);
  EXPECT_EQ(decode_superblock(buf, &back), DecodeResult::Malformed);
}

// A draid6 of 12 members of 3+2, every slot active.
static Superblock declustered_sample() {
  Superblock sb = sample();
  sb.level = Level::DR6;
  sb.members = 12;
  sb.parity = 2;
  sb.declustered = {3, 2};
  sb.slot = 0;
  sb.slots = {};
  for (uint32_t s = 0; s < 12; s++) sb.slots[s] = Slot{new_uuid(), SlotState::Active, 0};
  return sb;
}

// A declustered group is version 4; while a member is copied back out of
// its distributed spare room (a rebuilding slot with a room place) version
// 5, which an older gpuraid refuses rather than misread; 4 again after.
TEST(Superblock, ACopyBackIsVersion5WhileItRuns) {
  Superblock sb = declustered_sample(), back;
  sb.slots[3] = Slot{new_uuid(), SlotState::Failed, sb.member_data_bytes * sb.row_stripes(), 1};
  sb.slots[9] = Slot{new_uuid(), SlotState::Rebuilding, 5 * 65536, 2};
  uint8_t buf[kSuperblockBytes];
  encode_superblock(sb, buf);
  EXPECT_EQ(buf[8], 5);
  ASSERT_EQ(decode_superblock(buf, &back), DecodeResult::Ok);
  EXPECT_EQ(back.slots[9].state, SlotState::Rebuilding);
  EXPECT_EQ(back.slots[9].room, 2);
  EXPECT_EQ(back.slots[9].rebuild_checkpoint, 5u * 65536);
  EXPECT_EQ(back.slots[3].room, 1);
  back.slots[9] = Slot{back.slots[9].uuid, SlotState::Active, 0};  // the copy-back ended
  encode_superblock(back, buf);
  EXPECT_EQ(buf[8], 4) << "back to version 4 once no member is being copied back";
  ASSERT_EQ(decode_superblock(buf, &back), DecodeResult::Ok);
  EXPECT_EQ(back.version, 4u);
}

// Version 6: a copy-back whose room copies past its checkpoint are stale
// (resumed after an unclean stop) says so in flag bit 4; a gpuraid that
// knows only 5 refuses it rather than trust those copies. The flag in a
// superblock below version 6 is malformed.
TEST(Superblock, ACopyBackWithStaleRoomCopiesIsVersion6) {
  Superblock sb = declustered_sample(), back;
  sb.slots[9] = Slot{new_uuid(), SlotState::Rebuilding, 5 * 65536, 1};
  sb.flags |= kFlagRoomStale;
  uint8_t buf[kSuperblockBytes];
  encode_superblock(sb, buf);
  EXPECT_EQ(buf[8], 6);
  ASSERT_EQ(decode_superblock(buf, &back), DecodeResult::Ok);
  EXPECT_TRUE(back.flags & kFlagRoomStale);
  EXPECT_EQ(back.version, 6u);
  buf[8] = 5;  // as if written by a version-5 gpuraid: it has no such flag
  const uint32_t crc = crc32_iscsi(buf, kSuperblockBytes - 4, 0xffffffffu);  // the block's own (little-endian)
  memcpy(buf + kSuperblockBytes - 4, &crc, 4);
  EXPECT_EQ(decode_superblock(buf, &back), DecodeResult::Malformed);
}
