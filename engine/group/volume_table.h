// The group's virtual drives, kept on its members too (format: ON-DISK.md,
// "Volume table"), so that a group whose drives move to another host (or
// whose daemon lost its registry) comes back with them: `gpuraid dg
// import`. Two copies of kVolumeTableBytes in the metadata area's reserved
// room, written like the superblock (copy A, flush, copy B, flush); the
// daemon writes it when its VDs change and when a member joins.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "engine/group/superblock.h"

namespace gpuraid {

constexpr uint64_t kVolumeTableOffsets[2] = {8 * 1024, 24 * 1024};
constexpr uint32_t kVolumeTableBytes = 16 * 1024;
constexpr uint32_t kVolumeEntryBytes = 96;
constexpr uint32_t kVolumeTableHeader = 48;
// Entries one copy holds.
constexpr uint32_t kVolumeTableMax = (kVolumeTableBytes - kVolumeTableHeader - 4) / kVolumeEntryBytes;

struct VolumeEntry {
  std::string id;  // up to 63 bytes
  uint64_t offset_bytes = 0, size_bytes = 0;
  bool operator==(const VolumeEntry& o) const {
    return id == o.id && offset_bytes == o.offset_bytes && size_bytes == o.size_bytes;
  }
};

struct VolumeTable {
  Uuid group_uuid{};
  uint64_t generation = 0;  // +1 on every write; the higher valid copy wins
  std::vector<VolumeEntry> volumes;
};

// Exactly kVolumeTableBytes; false when it does not fit (too many VDs, an id too long).
bool encode_volume_table(const VolumeTable& t, uint8_t* out, std::string* err);
// false (with *why) on no magic, a bad crc or a malformed entry.
bool decode_volume_table(const uint8_t* in, VolumeTable* t, std::string* why);

}  // namespace gpuraid
