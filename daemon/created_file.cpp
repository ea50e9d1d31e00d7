#include "daemon/created_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "daemon/logging.h"

namespace gpuraid::daemon {

int CreatedFile::create(const std::string& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) return -errno;
  struct stat st;
  const int rc = fstat(fd, &st) == 0 ? 0 : -errno;
  close(fd);
  if (rc != 0) {
    unlink(path.c_str());
    return rc;
  }
  path_ = path;
  dev_ = st.st_dev;
  ino_ = st.st_ino;
  return 0;
}

CreatedFile::~CreatedFile() {
  if (path_.empty()) return;
  // Only the file made here: not whatever took its name since.
  struct stat st;
  if (lstat(path_.c_str(), &st) != 0 || st.st_dev != dev_ || st.st_ino != ino_) return;
  if (unlink(path_.c_str()) != 0) spdlog::warn("cannot remove {} (created for a drive that was not added): {}", path_, strerror(errno));
}

}  // namespace gpuraid::daemon
