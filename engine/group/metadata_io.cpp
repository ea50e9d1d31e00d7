#include "engine/group/metadata_io.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>

namespace gpuraid {

namespace {
struct Block {  // O_DIRECT wants aligned memory
  explicit Block(size_t n) : p(static_cast<uint8_t*>(aligned_alloc(4096, (n + 4095) & ~size_t(4095)))) {
    memset(p, 0, (n + 4095) & ~size_t(4095));
  }
  ~Block() { free(p); }
  uint8_t* p;
};

bool pwrite_all(Drive& d, const uint8_t* buf, size_t len, uint64_t off, std::string* err) {
  if (d.fd() < 0) {
    *err = d.path() + " cannot hold metadata (" + drive_type_name(d.type()) + " drive)";
    return false;
  }
  if (int r = d.sync_write(buf, len, off)) {
    *err = "cannot write metadata to " + d.path() + ": " + strerror(-r);
    return false;
  }
  return true;
}

bool sync(Drive& d, std::string* err) {
  if (int r = d.sync_flush()) {
    *err = "cannot flush " + d.path() + ": " + strerror(-r);
    return false;
  }
  return true;
}
}  // namespace

bool write_superblock(Drive& d, const Superblock& sb, std::string* err) {
  Block b(kSuperblockBytes);
  encode_superblock(sb, b.p);
  for (uint64_t off : kSuperblockOffsets)
    if (!pwrite_all(d, b.p, kSuperblockBytes, off, err) || !sync(d, err)) return false;
  return true;
}

bool erase_superblock(Drive& d, std::string* err) {
  Block b(kSuperblockBytes);
  for (uint64_t off : kSuperblockOffsets)
    if (!pwrite_all(d, b.p, kSuperblockBytes, off, err)) return false;
  return sync(d, err);
}

bool wipe_metadata(Drive& d, std::string* err) {
  constexpr size_t kChunk = 256 << 10;
  Block b(kChunk);
  const uint64_t end = std::min<uint64_t>(kMetadataBytes, d.size_bytes() & ~uint64_t(4095));
  for (uint64_t off = 0; off < end; off += kChunk)
    if (!pwrite_all(d, b.p, size_t(std::min<uint64_t>(kChunk, end - off)), off, err)) return false;
  return sync(d, err);
}

bool write_volume_table(Drive& d, const VolumeTable& t, std::string* err) {
  Block b(kVolumeTableBytes);
  if (!encode_volume_table(t, b.p, err)) return false;
  for (uint64_t off : kVolumeTableOffsets)
    if (!pwrite_all(d, b.p, kVolumeTableBytes, off, err) || !sync(d, err)) return false;
  return true;
}

bool read_volume_table(Drive& d, VolumeTable* t, std::string* why) {
  Block b(kVolumeTableBytes);
  bool ok = false;
  for (uint64_t off : kVolumeTableOffsets) {
    VolumeTable c;
    std::string w;
    if (d.fd() < 0 || d.sync_read(b.p, kVolumeTableBytes, off) != 0) w = "cannot read the volume table";
    else if (decode_volume_table(b.p, &c, &w) && (!ok || c.generation > t->generation)) *t = c, ok = true;
    if (!w.empty() && why->empty()) *why = w;
  }
  return ok;
}

SuperblockRead read_superblock(Drive& d) {
  SuperblockRead r;
  if (d.fd() < 0) return r;
  Block b(kSuperblockBytes);
  for (int i = 0; i < 2; i++) {
    if (d.sync_read(b.p, kSuperblockBytes, kSuperblockOffsets[i]) != 0) {
      r.copy[i] = DecodeResult::Malformed;
      continue;
    }
    Superblock sb;
    r.copy[i] = decode_superblock(b.p, &sb);
    if (r.copy[i] != DecodeResult::NoMagic) r.any_magic = true;
    if (r.copy[i] == DecodeResult::Ok && (!r.ok || sb.generation > r.sb.generation)) {
      r.sb = sb;
      r.ok = true;
    }
  }
  return r;
}

std::string SuperblockRead::why() const {
  if (ok) return "ok";
  if (copy[0] == DecodeResult::NewerVersion || copy[1] == DecodeResult::NewerVersion)
    return decode_result_name(DecodeResult::NewerVersion);
  if (!any_magic) return decode_result_name(DecodeResult::NoMagic);
  return std::string("both superblock copies are bad (") + decode_result_name(copy[0]) + ", " +
         decode_result_name(copy[1]) + ")";
}

bool write_bitmap_block(Drive& d, const uint8_t* bits, uint64_t bitmap_bytes, uint64_t block, std::string* err) {
  Block b(4096);
  const uint64_t off = block * 4096;
  if (off < bitmap_bytes) memcpy(b.p, bits + off, std::min<uint64_t>(4096, bitmap_bytes - off));
  return pwrite_all(d, b.p, 4096, kBitmapOffset + off, err) && sync(d, err);
}

bool read_bitmap(Drive& d, uint64_t bitmap_bytes, std::vector<uint8_t>* bits, std::string* err) {
  const size_t len = (bitmap_bytes + 4095) & ~size_t(4095);
  Block b(len);
  if (d.fd() < 0 || d.sync_read(b.p, len, kBitmapOffset) != 0) {
    *err = "cannot read the write-intent bitmap of " + d.path();
    return false;
  }
  bits->assign(b.p, b.p + bitmap_bytes);
  return true;
}

}  // namespace gpuraid
