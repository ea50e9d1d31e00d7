// Pure decoding of NVMe identify data (no I/O): unit-tested on hosts
// without NVMe with hand-built structures.
#pragma once
#include <nvme/types.h>

#include <cstdint>
#include <string>

#include "nvme/identity.h"

namespace gpuraid::nvme {

// The controller's fields into *out. mpsmin_bytes: 2^(12 + CAP.MPSMIN);
// pass 0 when CAP could not be read (4 KiB is assumed, mpsmin_known false).
void parse_ctrl(const struct nvme_id_ctrl& c, uint32_t mpsmin_bytes, Identity* out);
// The namespace's fields into *out (nsid is set by the caller).
void parse_ns(const struct nvme_id_ns& ns, Identity* out);

// MDTS is a power of two in units of the minimum memory page size; 0 means
// no limit (returned as 0).
uint64_t mdts_bytes(uint8_t mdts, uint32_t mpsmin_bytes);
// 2^(12 + MPSMIN) from the CAP register.
uint32_t cap_mpsmin_bytes(uint64_t cap);
// The index of the format in use (FLBAS bits 3:0, and 6:5 above 16 formats).
uint32_t flbas_index(uint8_t flbas, uint8_t nlbaf);
// DLFEAT bits 2:0 = 001b: a deallocated block reads as all zeroes.
bool dlfeat_reads_zeroes(uint8_t dlfeat);
// Lower-case hex of an identifier; "" when every byte is zero (not reported).
std::string hex_id(const uint8_t* p, size_t n);
// A fixed-width ASCII field (space padded, maybe NUL terminated), trimmed.
std::string ascii_field(const char* p, size_t n);

}  // namespace gpuraid::nvme
