// Drive::claim (drive.h): one owner per drive across processes. Written by
// hand: no packaged library takes these locks. Block devices have the
// kernel's exclusive claim from their own open (O_EXCL: EBUSY while another
// process, a mounted filesystem, md or device-mapper holds it), and an NVMe
// char device takes it on its namespace's block device; files (file, mem)
// an open file description write lock over the whole file (F_OFD_SETLK:
// per open, not per process, released when the descriptor closes, also
// at a crash). Both are advisory for I/O: the drive's own descriptor reads
// and writes as before.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "engine/io/drive.h"

namespace gpuraid {

namespace {
// A block device's node by its number (sysfs names it; /dev/block/M:m
// links need udev, which a minimal system may lack).
std::string block_node(uint64_t dev) {
  std::ifstream in("/sys/dev/block/" + std::to_string(major(dev)) + ":" + std::to_string(minor(dev)) + "/uevent");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("DEVNAME=", 0) == 0) return "/dev/" + line.substr(8);
  return "";
}
}  // namespace

void Drive::release_claim() const {
  if (claim_fd_ >= 0) close(claim_fd_);
  claim_fd_ = -1;
}

bool Drive::claim(std::string* err) const {
  // A block device's own descriptor is an O_EXCL open already (Drive::open).
  if (claim_fd_ >= 0 || type_ == DriveType::Null || type_ == DriveType::Block) return true;
  if (type_ == DriveType::NvmeChar) {  // its namespace's block device
    if (!identity_.known() || identity_.chain[0].kind != StorageKey::Block) return true;
    const std::string node = block_node(identity_.chain[0].dev);
    if (node.empty()) return true;  // no block twin to claim: nothing else can claim it either
    claim_fd_ = ::open(node.c_str(), O_RDONLY | O_EXCL | O_CLOEXEC);
    if (claim_fd_ >= 0) return true;
    if (errno == EBUSY)
      *err = path_ + " is in use: another process holds it exclusively (another gpuraidd, a mounted filesystem, md "
                     "or device-mapper)";
    else
      *err = "cannot claim " + path_ + ": " + strerror(errno);
    return false;
  }
  claim_fd_ = ::open(path_.c_str(), O_RDWR | O_CLOEXEC);
  if (claim_fd_ < 0) return *err = "cannot claim " + path_ + ": " + strerror(errno), false;
  struct flock l {};
  l.l_type = F_WRLCK;
  l.l_whence = SEEK_SET;  // l_start 0, l_len 0: the whole file
  if (fcntl(claim_fd_, F_OFD_SETLK, &l) == 0) return true;
  const int e = errno;
  close(claim_fd_);
  claim_fd_ = -1;
  if (e == EAGAIN || e == EACCES)
    *err = path_ + " is in use: another gpuraidd (or a program that locks it) holds it";
  else
    *err = "cannot lock " + path_ + ": " + strerror(e);
  return false;
}

}  // namespace gpuraid
