// Test rig for drive groups: file-backed drives in a temporary directory
// (so they can be reopened, renamed, corrupted and shuffled), one engine
// reactor polled by the test thread, and synchronous I/O helpers.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "engine/group/group.h"
#include "tests/support/test_array.h"

namespace gpuraid::test {

// The tests' usual group: new sparse files read zeroes (no init), 1 MiB
// bitmap regions.
inline GroupConfig test_group_config(Level l, uint32_t parity = 0, uint32_t strip = 65536,
                                     const char* name = "dg-test") {
  GroupConfig c;
  c.level = l;
  c.parity = parity;
  c.strip_bytes = strip;
  c.name = name;
  c.assume_zeroed = true;
  c.bitmap_region_bytes = 1u << 20;
  return c;
}

class GroupRig {
 public:
  // reactors: the engine's reactor count; reactor 0 is polled by the test
  // thread and runs background work, the others belong to the test's threads.
  // parent: where the drive files' directory is made (/dev/shm: no disk
  // flushes behind the FUA writes and fsyncs, for tests that make many).
  explicit GroupRig(uint32_t drives, uint64_t drive_bytes = 24u << 20, uint32_t reactors = 1,
                    const std::string& parent = "/tmp");
  ~GroupRig();
  Engine& engine() { return *engine_; }
  Reactor& reactor(uint32_t i = 0) { return engine_->reactor(i); }
  std::string path(uint32_t i) const { return dir_ + "/d" + std::to_string(i); }
  const std::string& dir() const { return dir_; }
  std::unique_ptr<Drive> open(uint32_t i);
  std::unique_ptr<Drive> open_path(const std::string& p);
  std::vector<std::unique_ptr<Drive>> open_range(uint32_t first, uint32_t n);

  std::unique_ptr<Group> create(const GroupConfig& cfg, uint32_t first, uint32_t n, std::string* err = nullptr);
  std::unique_ptr<Group> assemble(std::vector<std::unique_ptr<Drive>> d, std::string* note = nullptr,
                                  std::string* err = nullptr, bool force = false,
                                  std::vector<std::unique_ptr<Drive>>* unlisted = nullptr);
  // Polls the reactor until pred() or timeout; false on timeout.
  bool wait(const std::function<bool()>& pred, double seconds = 60);
  int io(Volume& v, IoRequest::Op op, uint64_t off, uint64_t len, uint8_t* buf);
  void raw_write(uint32_t drive, uint64_t off, const void* p, size_t n);
  std::vector<uint8_t> raw_read(uint32_t drive, uint64_t off, size_t n);

  // Events recorded by the handler installed by create/assemble (on the
  // group's threads: read them only through these, under the lock).
  // The first recorded event of this kind at index `from` or later (a copy), if any.
  bool find_event(GroupEvent::Kind k, GroupEvent* out = nullptr, size_t from = 0);
  size_t event_count();
  void clear_events();

 private:
  std::vector<GroupEvent> events_;
  void watch(Group& g);
  std::string dir_;
  uint32_t n_;
  uint64_t bytes_;
  std::unique_ptr<Engine> engine_;
  std::mutex ev_mu_;
};

}  // namespace gpuraid::test
