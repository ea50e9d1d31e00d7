// Instant initialisation of NVMe members: zero a range with Write Zeroes
// and let the device deallocate it (DLFEAT bit 3), so that a new group's
// parity is consistent without writing it.
#pragma once
#include <cstdint>
#include <string>

namespace gpuraid::nvme {

// Zeroes [offset, offset + length) of the block device open as fd.
// fallocate(PUNCH_HOLE | KEEP_SIZE) on a block device is Write Zeroes
// without "no unmap" (the driver sets DEAC when the namespace supports it)
// and never falls back to writing zero pages: it fails instead (*err),
// e.g. when the device has no Write Zeroes. Afterwards the range reads
// zeroes, whether or not the device deallocated it.
bool zero_deallocate(int fd, uint64_t offset, uint64_t length, std::string* err);

}  // namespace gpuraid::nvme
