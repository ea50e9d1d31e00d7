// What gpuraid knows about one NVMe namespace and its controller: the
// identity an operator reads in `gpuraid pd scan` / `pd show`, the stable
// id a member is recorded by (so /dev/nvme* renumbering does not matter),
// and the facts the engine depends on (LBA format, metadata, DLFEAT).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace gpuraid::nvme {

struct LbaFormat {
  uint32_t index = 0;
  uint32_t data_bytes = 0;      // 2^LBADS
  uint32_t metadata_bytes = 0;  // MS
  uint32_t relative_performance = 0;  // RP: 0 best .. 3 degraded
  bool in_use = false;
};

struct Identity {
  // Where it is now.
  std::string block_path;   // /dev/nvmeXnY
  std::string char_path;    // /dev/ngXnY ("" when absent)
  std::string controller;   // nvmeX (one path's controller)
  std::string transport;    // pcie, tcp, rdma, fc, loop ("" when unknown)
  // Controller (Identify Controller).
  std::string subsystem_nqn, model, serial, firmware;
  uint64_t max_transfer_bytes = 0;  // from MDTS and CAP.MPSMIN; 0: no limit reported
  bool mpsmin_known = false;        // CAP was read (else 4 KiB was assumed)
  bool volatile_write_cache = false;
  bool write_zeroes = false;        // ONCS: Write Zeroes supported
  // Namespace (Identify Namespace).
  uint32_t nsid = 0;
  std::string nguid, eui64;         // lower-case hex; "" when all zero (not reported)
  std::vector<LbaFormat> formats;
  uint32_t format_in_use = 0;       // index into formats
  uint32_t lba_bytes = 0;
  uint32_t metadata_bytes = 0;
  bool metadata_extended = false;   // metadata at the end of each block (FLBAS bit 4)
  uint64_t capacity_bytes = 0;      // NSZE x LBA size
  uint8_t dlfeat = 0;
  bool deallocated_reads_zeroes = false;   // DLFEAT bits 2:0 = 001b
  bool write_zeroes_deallocates = false;   // DLFEAT bit 3
};

// The id a namespace is recorded by: "nguid:<32 hex>", else "eui64:<16 hex>",
// else "sn:<serial>:nsid:<n>" (serial plus namespace id).
std::string stable_id(const Identity& id);

// Whether the engine can use the namespace as it is formatted: logical
// blocks of 512 B..4 KiB (4 KiB I/O covers whole blocks) and no metadata.
// *why says what is wrong and which formats would do.
bool usable_format(const Identity& id, std::string* why);

}  // namespace gpuraid::nvme
