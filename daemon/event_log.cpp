#include "daemon/event_log.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <deque>
#include <fstream>

#include "daemon/logging.h"
#include "proto/api_json.h"

namespace gpuraid::daemon {

namespace v1 = gpuraid::v1;

// The CLI's JSON (proto/api_json.h): what `gpuraid events --json` prints.
std::string event_json(const v1::Event& e) { return v1::api_json(e, /*compact=*/true) + "\n"; }

EventLog::EventLog(std::string dir, uint64_t max_bytes)
    : dir_(std::move(dir)), path_(dir_ + "/" + kFile), max_bytes_(max_bytes) {}

EventLog::~EventLog() {
  std::string err;
  if (fd_ >= 0 && !sync(&err)) spdlog::error("event log: {}", err);
  if (fd_ >= 0) close(fd_);
}

namespace {
std::string sys_err(const std::string& what, const std::string& path) {
  return what + " " + path + ": " + strerror(errno);
}

// Cuts a torn last line (no newline at the end) off the file.
bool cut_torn_tail(const std::string& path, std::string* err) {
  int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) return errno == ENOENT || (*err = sys_err("cannot open", path), false);
  off_t end = lseek(fd, 0, SEEK_END);
  off_t keep = end;
  char c;
  while (keep > 0 && pread(fd, &c, 1, keep - 1) == 1 && c != '\n') keep--;
  bool ok = true;
  if (keep != end) {
    spdlog::warn("event log {}: cutting a torn last line ({} bytes) left by a crash", path, end - keep);
    ok = ftruncate(fd, keep) == 0 || (*err = sys_err("cannot truncate", path), false);
  }
  close(fd);
  return ok;
}

void read_file(const std::string& path, size_t keep, std::deque<v1::Event>* out, uint64_t* last_seq) {
  std::ifstream in(path);
  std::string line;
  size_t bad = 0;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    v1::Event e;
    if (!v1::api_json_parse(line, &e, nullptr)) {  // protobuf's own JSON too (older logs)
      bad++;
      continue;
    }
    *last_seq = std::max(*last_seq, e.seq());
    out->push_back(std::move(e));
    if (out->size() > keep) out->pop_front();
  }
  if (bad) spdlog::warn("event log {}: {} lines unreadable, skipped", path, bad);
}
}  // namespace

bool EventLog::open(size_t keep, std::vector<v1::Event>* recent, uint64_t* last_seq, std::string* err) {
  if (!cut_torn_tail(path_, err)) return false;
  std::deque<v1::Event> kept;
  *last_seq = 0;
  read_file(path_ + ".1", keep, &kept, last_seq);
  read_file(path_, keep, &kept, last_seq);
  recent->assign(kept.begin(), kept.end());
  fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0640);
  if (fd_ < 0) return *err = sys_err("cannot open", path_), false;
  struct stat st {};
  fstat(fd_, &st);
  size_ = uint64_t(st.st_size);
  return true;
}

bool EventLog::rotate(std::string* err) {
  if (fdatasync(fd_) != 0) spdlog::warn("{}", sys_err("event log: cannot sync", path_));
  close(fd_);
  fd_ = -1;
  if (rename(path_.c_str(), (path_ + ".1").c_str()) != 0) {
    *err = sys_err("cannot rotate", path_);
    // Go on appending to the same file rather than lose events.
    fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0640);
    return false;
  }
  fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0640);
  if (fd_ < 0) return *err = sys_err("cannot open", path_), false;
  size_ = 0;
  dir_dirty_ = true;
  return true;
}

bool EventLog::append(const v1::Event& e, std::string* err) {
  const std::string line = event_json(e);
  bool ok = true;
  if (size_ > 0 && size_ + line.size() > max_bytes_) ok = rotate(err);
  if (fd_ < 0) return false;
  ssize_t n = write(fd_, line.data(), line.size());
  if (n != ssize_t(line.size())) {
    std::string why = n < 0 ? sys_err("cannot write", path_) : "short write to " + path_ + " (disk full?)";
    if (n > 0 && ftruncate(fd_, off_t(size_)) != 0) why += "; cannot cut the partial line";
    *err = ok ? why : *err + "; " + why;
    return false;
  }
  size_ += line.size();
  dirty_ = true;
  return ok;
}

bool EventLog::sync(std::string* err) {
  if (fd_ < 0 || (!dirty_ && !dir_dirty_)) return true;
  bool ok = true;
  if (dirty_ && fdatasync(fd_) != 0) ok = (*err = sys_err("cannot sync", path_), false);
  dirty_ = false;
  if (dir_dirty_) {
    int d = ::open(dir_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (d < 0 || fsync(d) != 0) ok = (*err = sys_err("cannot sync", dir_), false);
    if (d >= 0) close(d);
    dir_dirty_ = false;
  }
  return ok;
}

}  // namespace gpuraid::daemon
