#include "tests/support/test_array.h"

#include "engine/sync_io.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <random>
#include <stdexcept>

namespace gpuraid::test {

AlignedBuf::AlignedBuf(size_t n_) : n(n_) {
  p = static_cast<uint8_t*>(aligned_alloc(4096, (n + 4095) / 4096 * 4096 + 4096));
  memset(p, 0, n);
}
AlignedBuf::~AlignedBuf() { free(p); }

void fill_random(uint8_t* p, size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t v = rng();
    memcpy(p + i, &v, 8);
  }
  for (; i < n; i++) p[i] = uint8_t(rng());
}

TestArray::TestArray(const ArrayOptions& o) {
  std::string err;
  EngineConfig ec;
  ec.reactors = o.reactors;
  ec.arena_bytes = o.arena_bytes;
  ec.parity_factory = o.parity_factory;
  ec.ops_per_reactor = o.ops_per_reactor;
  ec.lockstep = o.lockstep;
  ec.write_gather_us = o.write_gather_us;
  engine_ = Engine::create(ec, &err);
  if (!engine_) throw std::runtime_error("engine: " + err);
  if (o.drive_type == DriveType::File) {
    char tmpl[] = "/tmp/gpuraid-test-XXXXXX";
    if (!mkdtemp(tmpl)) throw std::runtime_error("mkdtemp failed");
    dir_ = tmpl;
  }
  std::vector<Drive*> members;
  for (uint32_t i = 0; i < o.members; i++) {
    DriveSpec s;
    s.type = o.drive_type;
    s.size_bytes = o.member_bytes;
    s.create = true;
    if (o.drive_type == DriveType::File) s.path = dir_ + "/d" + std::to_string(i);
    auto d = Drive::open(s, &err);
    if (!d) throw std::runtime_error("drive: " + err);
    members.push_back(d.get());
    drives_.push_back(std::move(d));
  }
  Geometry g;
  if (!Volume::fit_geometry(o.level, o.parity, o.strip, members, o.data_offset, &g, nullptr, &err, o.subgroups, o.declustered))
    throw std::runtime_error("geometry: " + err);
  vol_ = Volume::create(*engine_, g, members, o.data_offset, &err);
  if (!vol_) throw std::runtime_error("volume: " + err);
  Volume::Events ev;
  ev.member_failed = [this](uint32_t m, int) { failed_events.push_back(m); };
  ev.group_failed = [this] { group_failed_event = true; };
  vol_->set_events(ev);
}

TestArray::~TestArray() {
  vol_.reset();
  drives_.clear();
  engine_.reset();
  if (!dir_.empty()) {
    for (uint32_t i = 0; i < 64; i++) unlink((dir_ + "/d" + std::to_string(i)).c_str());
    rmdir(dir_.c_str());
  }
}

int TestArray::io(IoRequest::Op op, uint64_t off, uint64_t len, uint8_t* buf, bool fua) {
  return sync_io(*vol_, reactor(0), op, off, len, buf, fua);
}

std::vector<uint8_t> TestArray::member_bytes(uint32_t m, uint64_t off, uint64_t len) {
  std::vector<uint8_t> out(len);
  int fd = ::open(drives_[m]->path().c_str(), O_RDONLY);
  if (fd < 0) throw std::runtime_error("open member");
  ssize_t n = pread(fd, out.data(), len, off_t(off));
  close(fd);
  if (n != ssize_t(len)) throw std::runtime_error("short member read");
  return out;
}

}  // namespace gpuraid::test
