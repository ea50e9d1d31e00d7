#include "nvme/deallocate.h"

#include <fcntl.h>
#include <linux/falloc.h>

#include <cerrno>
#include <cstring>

namespace gpuraid::nvme {

bool zero_deallocate(int fd, uint64_t offset, uint64_t length, std::string* err) {
  if (length == 0) return true;
  if (fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, off_t(offset), off_t(length)) == 0) return true;
  *err = errno == EOPNOTSUPP ? std::string("the device does not support Write Zeroes")
                             : std::string("Write Zeroes failed: ") + strerror(errno);
  return false;
}

}  // namespace gpuraid::nvme
