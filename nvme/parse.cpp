#include "nvme/parse.h"

#include <endian.h>

#include <algorithm>

namespace gpuraid::nvme {

uint64_t mdts_bytes(uint8_t mdts, uint32_t mpsmin_bytes) {
  if (mdts == 0) return 0;
  if (mpsmin_bytes == 0) mpsmin_bytes = 4096;
  if (mdts > 40) mdts = 40;  // nonsense from a device: keep the shift defined
  return uint64_t(mpsmin_bytes) << mdts;
}

uint32_t cap_mpsmin_bytes(uint64_t cap) { return 4096u << NVME_CAP_MPSMIN(cap); }

uint32_t flbas_index(uint8_t flbas, uint8_t nlbaf) {
  uint32_t i = flbas & NVME_NS_FLBAS_LOWER_MASK;
  // Bits 6:5 are the high bits of the index only when more than 16 formats exist.
  if (nlbaf >= 16) i |= uint32_t((flbas & NVME_NS_FLBAS_HIGHER_MASK) >> 5) << 4;
  return i;
}

bool dlfeat_reads_zeroes(uint8_t dlfeat) { return (dlfeat & NVME_NS_DLFEAT_RB) == NVME_NS_DLFEAT_RB_ALL_0S; }

std::string hex_id(const uint8_t* p, size_t n) {
  static const char* d = "0123456789abcdef";
  std::string s;
  bool any = false;
  for (size_t i = 0; i < n; i++) {
    any |= p[i] != 0;
    s += d[p[i] >> 4];
    s += d[p[i] & 15];
  }
  return any ? s : "";
}

std::string ascii_field(const char* p, size_t n) {
  size_t len = 0;
  while (len < n && p[len] != '\0') len++;
  std::string s(p, len);
  for (char& c : s)
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) > 0x7e) c = '?';
  size_t b = s.find_first_not_of(' ');
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(' ') - b + 1);
}

void parse_ctrl(const struct nvme_id_ctrl& c, uint32_t mpsmin_bytes, Identity* out) {
  out->model = ascii_field(c.mn, sizeof(c.mn));
  out->serial = ascii_field(c.sn, sizeof(c.sn));
  out->firmware = ascii_field(c.fr, sizeof(c.fr));
  out->subsystem_nqn = ascii_field(c.subnqn, sizeof(c.subnqn));
  out->mpsmin_known = mpsmin_bytes != 0;
  out->max_transfer_bytes = mdts_bytes(c.mdts, mpsmin_bytes);
  out->volatile_write_cache = c.vwc & NVME_CTRL_VWC_PRESENT;
  out->write_zeroes = le16toh(c.oncs) & NVME_CTRL_ONCS_WRITE_ZEROES;
}

void parse_ns(const struct nvme_id_ns& ns, Identity* out) {
  out->nguid = hex_id(ns.nguid, sizeof(ns.nguid));
  out->eui64 = hex_id(ns.eui64, sizeof(ns.eui64));
  // NLBAF is zero-based; at most 64 formats exist.
  const uint32_t count = std::min<uint32_t>(uint32_t(ns.nlbaf) + 1, 64);
  out->format_in_use = flbas_index(ns.flbas, ns.nlbaf);
  out->formats.clear();
  for (uint32_t i = 0; i < count; i++) {
    const auto& f = ns.lbaf[i];
    LbaFormat lf;
    lf.index = i;
    lf.data_bytes = f.ds >= 9 && f.ds < 32 ? 1u << f.ds : 0;  // LBADS < 9 is not a valid format
    lf.metadata_bytes = le16toh(f.ms);
    lf.relative_performance = f.rp & NVME_LBAF_RP_MASK;
    lf.in_use = i == out->format_in_use;
    out->formats.push_back(lf);
  }
  if (out->format_in_use < count) {
    out->lba_bytes = out->formats[out->format_in_use].data_bytes;
    out->metadata_bytes = out->formats[out->format_in_use].metadata_bytes;
  } else {
    out->lba_bytes = 0;  // FLBAS names a format that is not listed: unusable
    out->metadata_bytes = 0;
  }
  out->metadata_extended = ns.flbas & NVME_NS_FLBAS_META_EXT;
  out->capacity_bytes = le64toh(ns.nsze) * out->lba_bytes;
  out->dlfeat = ns.dlfeat;
  out->deallocated_reads_zeroes = dlfeat_reads_zeroes(ns.dlfeat);
  out->write_zeroes_deallocates = ns.dlfeat & NVME_NS_DLFEAT_WRITE_ZEROES;
}

}  // namespace gpuraid::nvme
