#include "daemon/registry_store.h"

#include <fcntl.h>
#include <google/protobuf/util/json_util.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace gpuraid::daemon {

namespace {
std::string sys_err(const std::string& what) { return what + ": " + strerror(errno); }

bool write_all(int fd, const std::string& s) {
  size_t off = 0;
  while (off < s.size()) {
    ssize_t n = write(fd, s.data() + off, s.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    off += size_t(n);
  }
  return true;
}
}  // namespace

RegistryStore::~RegistryStore() {
  if (lock_fd_ >= 0) close(lock_fd_);
}

bool RegistryStore::open(std::string* err) {
  if (mkdir(dir_.c_str(), 0750) != 0 && errno != EEXIST) {
    *err = sys_err("cannot create the state directory " + dir_);
    return false;
  }
  struct stat st;
  if (stat(dir_.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    *err = "the state directory " + dir_ + " is not a directory";
    return false;
  }
  std::string lock = dir_ + "/gpuraidd.lock";
  lock_fd_ = ::open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0640);
  if (lock_fd_ < 0) {
    *err = sys_err("cannot open " + lock);
    return false;
  }
  if (flock(lock_fd_, LOCK_EX | LOCK_NB) != 0) {
    *err = "another gpuraidd already uses the state directory " + dir_;
    return false;
  }
  return true;
}

bool RegistryStore::load(gpuraid::state::v1::Registry* out, std::string* err) const {
  std::ifstream in(path());
  if (!in) {
    if (errno == ENOENT) {
      out->Clear();
      out->set_format(1);
      return true;
    }
    *err = sys_err("cannot read " + path());
    return false;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  google::protobuf::util::JsonParseOptions o;
  auto st = google::protobuf::util::JsonStringToMessage(ss.str(), out, o);
  if (!st.ok()) {
    *err = "the registry " + path() + " is corrupt: " + std::string(st.message());
    return false;
  }
  if (out->format() != 1) {
    *err = "the registry " + path() + " has format " + std::to_string(out->format()) +
           ", this gpuraidd reads format 1";
    return false;
  }
  return true;
}

bool RegistryStore::save(const gpuraid::state::v1::Registry& r, std::string* err) const {
  std::string json;
  google::protobuf::util::JsonPrintOptions o;
  o.add_whitespace = true;
  o.preserve_proto_field_names = true;
  auto st = google::protobuf::util::MessageToJsonString(r, &json, o);
  if (!st.ok()) {
    *err = "cannot encode the registry: " + std::string(st.message());
    return false;
  }
  std::string tmp = path() + ".tmp";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0640);
  if (fd < 0) {
    *err = sys_err("cannot write " + tmp);
    return false;
  }
  bool ok = write_all(fd, json) && fsync(fd) == 0;
  int saved = errno;
  close(fd);
  if (!ok) {
    errno = saved;
    *err = sys_err("cannot write " + tmp);
    unlink(tmp.c_str());
    return false;
  }
  if (rename(tmp.c_str(), path().c_str()) != 0) {
    *err = sys_err("cannot replace " + path());
    unlink(tmp.c_str());
    return false;
  }
  int dfd = ::open(dir_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    fsync(dfd);
    close(dfd);
  }
  return true;
}

}  // namespace gpuraid::daemon
