#include "tests/support/group_rig.h"

#include "engine/sync_io.h"

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <stdexcept>

namespace gpuraid::test {

GroupRig::GroupRig(uint32_t drives, uint64_t drive_bytes, uint32_t reactors, const std::string& parent)
    : n_(drives), bytes_(drive_bytes) {
  std::string tmpl = parent + "/gpuraid-group-XXXXXX";
  char* t = tmpl.data();
  if (!mkdtemp(t)) throw std::runtime_error("mkdtemp in " + parent);
  dir_ = t;
  for (uint32_t i = 0; i < drives; i++) {
    int fd = ::open(path(i).c_str(), O_CREAT | O_RDWR, 0600);
    if (fd < 0 || ftruncate(fd, off_t(drive_bytes)) != 0) throw std::runtime_error("drive file");
    close(fd);
  }
  std::string err;
  EngineConfig ec;
  ec.arena_bytes = 32u << 20;
  ec.reactors = reactors;
  engine_ = Engine::create(ec, &err);
  if (!engine_) throw std::runtime_error(err);
  // This thread polls reactor 0 from now on, so that a group stopped before
  // any I/O polls it while waiting for its background work (a kick queued
  // there would otherwise wait for a poll that never comes).
  engine_->reactor(0).claim();
}

GroupRig::~GroupRig() {
  engine_.reset();
  std::string cmd = "rm -rf '" + dir_ + "'";
  [[maybe_unused]] int rc = system(cmd.c_str());
}

std::unique_ptr<Drive> GroupRig::open_path(const std::string& p) {
  std::string err;
  auto d = Drive::open(DriveSpec{DriveType::File, p, 0, false}, &err);
  if (!d) throw std::runtime_error(err);
  return d;
}

std::unique_ptr<Drive> GroupRig::open(uint32_t i) { return open_path(path(i)); }

std::vector<std::unique_ptr<Drive>> GroupRig::open_range(uint32_t first, uint32_t n) {
  std::vector<std::unique_ptr<Drive>> v;
  for (uint32_t i = first; i < first + n; i++) v.push_back(open(i));
  return v;
}

void GroupRig::watch(Group& g) {
  g.set_event_handler([this](const GroupEvent& e) {
    std::lock_guard<std::mutex> l(ev_mu_);
    events_.push_back(e);
  });
  g.start_background(reactor());
}

std::unique_ptr<Group> GroupRig::create(const GroupConfig& cfg, uint32_t first, uint32_t n, std::string* err) {
  std::string e;
  auto g = Group::create(*engine_, open_range(first, n), cfg, &e);
  if (err) *err = e;
  if (g) watch(*g);
  return g;
}

std::unique_ptr<Group> GroupRig::assemble(std::vector<std::unique_ptr<Drive>> d, std::string* note, std::string* err,
                                          bool force, std::vector<std::unique_ptr<Drive>>* unlisted) {
  std::string e, nt;
  auto g = Group::assemble(*engine_, std::move(d), &nt, &e, force, unlisted);
  if (err) *err = e;
  if (note) *note = nt;
  if (g) watch(*g);
  return g;
}

bool GroupRig::find_event(GroupEvent::Kind k, GroupEvent* out, size_t from) {
  std::lock_guard<std::mutex> l(ev_mu_);
  for (size_t i = from; i < events_.size(); i++)
    if (events_[i].kind == k) {
      if (out) *out = events_[i];
      return true;
    }
  return false;
}

size_t GroupRig::event_count() {
  std::lock_guard<std::mutex> l(ev_mu_);
  return events_.size();
}

void GroupRig::clear_events() {
  std::lock_guard<std::mutex> l(ev_mu_);
  events_.clear();
}

bool GroupRig::wait(const std::function<bool()>& pred, double seconds) {
  auto t0 = std::chrono::steady_clock::now();
  while (!pred()) {
    reactor().poll(true, 5);
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() > seconds) return false;
  }
  return true;
}

int GroupRig::io(Volume& v, IoRequest::Op op, uint64_t off, uint64_t len, uint8_t* buf) {
  return sync_io(v, reactor(), op, off, len, buf);
}

void GroupRig::raw_write(uint32_t drive, uint64_t off, const void* p, size_t n) {
  int fd = ::open(path(drive).c_str(), O_WRONLY);
  if (fd < 0 || pwrite(fd, p, n, off_t(off)) != ssize_t(n)) throw std::runtime_error("raw write");
  fsync(fd);
  close(fd);
}

std::vector<uint8_t> GroupRig::raw_read(uint32_t drive, uint64_t off, size_t n) {
  std::vector<uint8_t> out(n);
  int fd = ::open(path(drive).c_str(), O_RDONLY);
  if (fd < 0 || pread(fd, out.data(), n, off_t(off)) != ssize_t(n)) throw std::runtime_error("raw read");
  close(fd);
  return out;
}

}  // namespace gpuraid::test
