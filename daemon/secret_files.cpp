// Secret files in the state directory: see secret_files.h.
#include "daemon/secret_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace gpuraid::daemon {

namespace {

std::string sys_err(const std::string& what) { return what + ": " + strerror(errno); }

bool sync_dir(const std::string& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return false;
  bool ok = fsync(fd) == 0;
  ::close(fd);
  return ok;
}

}  // namespace

bool SecretFiles::save(const std::string& name, const std::string& secret, std::string* err) const {
  if (mkdir(dir_.c_str(), 0700) != 0 && errno != EEXIST) return *err = sys_err("cannot create " + dir_), false;
  struct stat st;
  if (lstat(dir_.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return *err = dir_ + " is not a directory", false;
  if ((st.st_mode & 077) && chmod(dir_.c_str(), 0700) != 0) return *err = sys_err("cannot chmod 0700 " + dir_), false;
  const std::string tmp = path(name) + ".tmp";
  unlink(tmp.c_str());  // a leftover of a crash
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return *err = sys_err("cannot create " + tmp), false;
  const std::string text = secret + "\n";
  bool ok = ::write(fd, text.data(), text.size()) == ssize_t(text.size()) && fsync(fd) == 0;
  int e = errno;
  ::close(fd);
  if (ok && rename(tmp.c_str(), path(name).c_str()) == 0 && sync_dir(dir_)) return true;
  if (ok) e = errno;
  unlink(tmp.c_str());
  errno = e;
  *err = sys_err("cannot write " + path(name));
  return false;
}

bool SecretFiles::load(const std::string& name, std::string* secret, std::string* err) const {
  int fd = ::open(path(name).c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return *err = sys_err("cannot read " + path(name)), false;
  std::string text;
  char buf[512];
  ssize_t n;
  while ((n = ::read(fd, buf, sizeof buf)) > 0 && text.size() < 4096) text.append(buf, size_t(n));
  int e = errno;
  ::close(fd);
  if (n < 0) {
    errno = e;
    return *err = sys_err("cannot read " + path(name)), false;
  }
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  *secret = std::move(text);
  return true;
}

bool SecretFiles::remove(const std::string& name, std::string* err) const {
  if (unlink(path(name).c_str()) != 0 && errno != ENOENT) return *err = sys_err("cannot remove " + path(name)), false;
  sync_dir(dir_);
  return true;
}

}  // namespace gpuraid::daemon
