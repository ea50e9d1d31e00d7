// NVMe passthrough members: the generic char device of a namespace
// (/dev/ngXnY) driven by io_uring URING_CMD (NVME_URING_CMD_IO[_VEC]),
// which skips the block layer. Needs rings set up with SQE128|CQE32
// (EngineConfig::nvme_passthru). Written by hand: liburing 2.3 (Debian 12)
// has no uring_cmd prep helper and no NVMe command builder.
#pragma once
#include <liburing.h>
#include <sys/uio.h>

#include <cerrno>
#include <cstdint>
#include <string>

namespace gpuraid {

struct NvmeCharInfo {
  uint32_t nsid = 0;
  uint32_t lba_shift = 9;      // log2 of the LBA data size in use
  uint64_t size_bytes = 0;
  uint32_t max_io_bytes = 0;   // the controller's transfer limit (max_hw_sectors_kb)
};

// The block device of the same namespace: /dev/ngXnY -> /dev/nvmeXnY ("" if
// the name is not of that form).
std::string nvme_block_twin(const std::string& char_path);
// And back: /dev/nvmeXnY -> /dev/ngXnY ("" if not of that form).
std::string nvme_char_twin(const std::string& block_path);

// Reads what the engine needs of an open /dev/ngXnY: the namespace id
// (NVME_IOCTL_ID) and, from its block device's sysfs entry, the LBA size,
// capacity and transfer limit. Refuses LBAs above 4 KiB (the engine's unit).
bool probe_nvme_char(int fd, const std::string& path, NvmeCharInfo* out, std::string* err);

enum class NvmeIo : uint8_t { Read, Write, Flush };

struct NvmeCmd {
  NvmeIo op = NvmeIo::Read;
  uint32_t nsid = 0;
  uint32_t lba_shift = 9;
  uint64_t offset = 0;          // bytes, a multiple of the LBA size
  uint32_t len = 0;             // bytes, a multiple of the LBA size (0 for flush)
  void* buf = nullptr;          // one buffer, or
  const iovec* iov = nullptr;   // a vector (NVME_URING_CMD_IO_VEC)
  uint32_t iov_count = 0;
  int fixed_buffer = -1;        // registered buffer index for buf (IORING_URING_CMD_FIXED), -1: none
  bool fua = false;             // Force Unit Access on a write
};

// Fills a 128-byte SQE (fixed file `slot`) with the command. user_data is
// left to the caller.
void prep_nvme_cmd(io_uring_sqe* sqe, int slot, const NvmeCmd& c);

// The same command, synchronously (NVME_IOCTL_IO64_CMD): 0, or -errno
// (-EIO for an NVMe status). Split at max_io bytes.
int nvme_sync_cmd(int fd, NvmeIo op, uint32_t nsid, uint32_t lba_shift, uint32_t max_io, void* buf, size_t len,
                  uint64_t off);

// A passthrough CQE's result as the engine's: 0 is success (the full `len`
// moved), a positive NVMe status is -EIO but Unrecovered Read Error (SCT 2,
// SC 0x81: a block the drive cannot read) -ENODATA, as the kernel's block
// layer reports it (BLK_STS_MEDIUM); a negative errno stays.
inline int nvme_cmd_result(int res, uint32_t len) {
  constexpr int kStatusMask = 0x7ff, kUnrecoveredReadError = 0x281;  // SCT << 8 | SC, without DNR and More
  return res == 0 ? int(len) : res < 0 ? res : (res & kStatusMask) == kUnrecoveredReadError ? -ENODATA : -EIO;
}

}  // namespace gpuraid
