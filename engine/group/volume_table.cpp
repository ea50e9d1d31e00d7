#include "engine/group/volume_table.h"

#include <isa-l/crc.h>

#include <cstring>

namespace gpuraid {

namespace {
constexpr char kMagic[8] = {'G', 'P', 'R', 'V', 'O', 'L', 'T', '1'};

void put64(uint8_t* p, uint64_t v) {
  for (int i = 0; i < 8; i++) p[i] = uint8_t(v >> (8 * i));
}
void put32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; i++) p[i] = uint8_t(v >> (8 * i));
}
uint64_t get64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; i++) v |= uint64_t(p[i]) << (8 * i);
  return v;
}
uint32_t get32(const uint8_t* p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; i++) v |= uint32_t(p[i]) << (8 * i);
  return v;
}
uint32_t crc_of(const uint8_t* t) {
  return crc32_iscsi(const_cast<uint8_t*>(t), kVolumeTableBytes - 4, 0xffffffffu);
}
}  // namespace

bool encode_volume_table(const VolumeTable& t, uint8_t* out, std::string* err) {
  if (t.volumes.size() > kVolumeTableMax)
    return *err = "the volume table holds " + std::to_string(kVolumeTableMax) + " virtual drives at most", false;
  memset(out, 0, kVolumeTableBytes);
  memcpy(out, kMagic, 8);
  put32(out + 8, 1);  // table format
  put32(out + 12, uint32_t(t.volumes.size()));
  put64(out + 16, t.generation);
  memcpy(out + 24, t.group_uuid.data(), 16);
  for (size_t i = 0; i < t.volumes.size(); i++) {
    const VolumeEntry& v = t.volumes[i];
    uint8_t* e = out + kVolumeTableHeader + i * kVolumeEntryBytes;
    if (v.id.empty() || v.id.size() > 63) return *err = "a virtual drive id of " + std::to_string(v.id.size()) + " bytes", false;
    memcpy(e, v.id.data(), v.id.size());
    put64(e + 64, v.offset_bytes);
    put64(e + 72, v.size_bytes);
  }
  put32(out + kVolumeTableBytes - 4, crc_of(out));
  return true;
}

bool decode_volume_table(const uint8_t* in, VolumeTable* t, std::string* why) {
  if (memcmp(in, kMagic, 8) != 0) return *why = "no volume table", false;
  if (get32(in + kVolumeTableBytes - 4) != crc_of(in)) return *why = "volume table checksum mismatch", false;
  if (get32(in + 8) != 1) return *why = "volume table format " + std::to_string(get32(in + 8)) + " is newer", false;
  const uint32_t n = get32(in + 12);
  if (n > kVolumeTableMax) return *why = "volume table malformed: " + std::to_string(n) + " entries", false;
  t->generation = get64(in + 16);
  memcpy(t->group_uuid.data(), in + 24, 16);
  t->volumes.clear();
  for (uint32_t i = 0; i < n; i++) {
    const uint8_t* e = in + kVolumeTableHeader + i * kVolumeEntryBytes;
    VolumeEntry v;
    v.id.assign(reinterpret_cast<const char*>(e), strnlen(reinterpret_cast<const char*>(e), 64));
    if (v.id.empty() || v.id.size() > 63) return *why = "volume table malformed: entry " + std::to_string(i), false;
    v.offset_bytes = get64(e + 64);
    v.size_bytes = get64(e + 72);
    t->volumes.push_back(v);
  }
  return true;
}

}  // namespace gpuraid
