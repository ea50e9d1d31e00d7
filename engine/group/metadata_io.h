// Synchronous reads and writes of a member's metadata area (superblocks,
// write-intent bitmap). Control-path only: these block.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "engine/group/superblock.h"
#include "engine/group/volume_table.h"
#include "engine/io/drive.h"

namespace gpuraid {

// Writes copy A, flushes, then copy B, flushes: a crash leaves at least one
// whole copy.
bool write_superblock(Drive& d, const Superblock& sb, std::string* err);

struct SuperblockRead {
  DecodeResult copy[2] = {DecodeResult::NoMagic, DecodeResult::NoMagic};
  bool ok = false;  // at least one valid copy; sb is the newer valid one
  bool any_magic = false;
  Superblock sb;
  std::string why() const;  // what was wrong, for the operator
};
SuperblockRead read_superblock(Drive& d);
// Wipes both superblock copies (a drive leaving a group).
bool erase_superblock(Drive& d, std::string* err);
// Zeroes the whole metadata area (superblocks, reserved area, write-intent
// bitmap: the first kMetadataBytes) and flushes; member data is untouched.
bool wipe_metadata(Drive& d, std::string* err);

// The volume table (volume_table.h): copy A, flush, copy B, flush.
bool write_volume_table(Drive& d, const VolumeTable& t, std::string* err);
// The newer valid copy; false (with *why) when neither is.
bool read_volume_table(Drive& d, VolumeTable* t, std::string* why);

// The bitmap area holds one bit per region; writes go in whole 4 KiB blocks.
bool write_bitmap_block(Drive& d, const uint8_t* bits, uint64_t bitmap_bytes, uint64_t block, std::string* err);
bool read_bitmap(Drive& d, uint64_t bitmap_bytes, std::vector<uint8_t>* bits, std::string* err);

}  // namespace gpuraid
